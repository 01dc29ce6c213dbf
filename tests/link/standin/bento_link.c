/* Stand-in for the vendor's bento_link.o (the link registry).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include <string.h>

/* An ELF-global internal shared with bento_link_ipc.o. */
bento_link_t *bx_31[4];

bool bento_link_register(bento_link_t *link)
{
    for (uint32_t i = 0; i < 4; i++) {
        if (bx_31[i] == NULL) {
            bx_31[i] = link;
            return true;
        }
    }
    return false;
}

bento_link_t *bento_link_get(const char *name)
{
    for (uint32_t i = 0; i < 4; i++) {
        if (bx_31[i] != NULL && strcmp(bx_31[i]->name, name) == 0) {
            return bx_31[i];
        }
    }
    return NULL;
}

bento_link_t *bento_link_at(uint32_t index) { return index < 4 ? bx_31[index] : NULL; }
