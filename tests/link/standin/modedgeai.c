/* Stand-in for the vendor's modedgeai.o (the `edge_ai` module).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

static void *edge_ai_models(void)
{
    bento_link_t *link = bento_link_get("ipc");
    return mp_obj_new_int(link != NULL ? link->mtu : 0);
}

const standin_module_t mp_module_edge_ai = { (const void *)edge_ai_models, NULL };
