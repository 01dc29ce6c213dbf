/* Stand-in for the vendor's bento_link_ipc.o (the CM33<->CM55 backend).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

extern bento_link_t *bx_31[4];

static bento_link_t s_ipc = { "ipc", 64 };
static uint32_t s_msg[2];

bool bento_link_ipc_init(void)
{
    if (Cy_IPC_Pipe_RegisterCallback(1, NULL, 2) != 0) {
        return false;
    }
    return bx_31[0] == &s_ipc || bento_link_register(&s_ipc);
}

bool bento_link_ipc_query(uint8_t cmd, uint32_t *value)
{
    s_msg[0] = cmd;
    if (Cy_IPC_Pipe_SendMessage(2, 1, s_msg, NULL) != 0) {
        return false;
    }
    *value = s_msg[1];
    return true;
}
