/* Stand-in for the vendor's claw_session.o: the session ring and the memory
 * store, the member bentoclaw replaces. Beside libbentoclaw.a it must never
 * be extracted; if it were, its definitions of the claw_session_* and
 * claw_memory_* functions would collide with bentoclaw's and ld stops with
 * "multiple definition". Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include "claw_session.h"

#include <string.h>

extern uint16_t bx_7(const uint8_t *data, size_t len); /* tacp.o */
extern uint32_t bx_52;                                  /* claw_safety.o */

static char s_ring[10][256];
static uint16_t s_count;
static bool s_dirty;

/* An internal left ELF-global (the vendor's "bx_N"): rendering the history.
 * In the stand-in no other member the firmware needs calls it; the
 * self-test's variant of tacp.o does. */
int bx_41(char *out, size_t max)
{
    size_t n = 0;
    for (uint16_t i = 0; i < s_count && n + 256 < max; i++) {
        size_t len = strlen(s_ring[i]);
        memcpy(out + n, s_ring[i], len);
        n += len;
    }
    return (int)n;
}

void claw_session_init(void)
{
    s_count = 0;
    s_dirty = false;
}

bool claw_session_add(claw_role_t role, const char *content)
{
    (void)role;
    strncpy(s_ring[s_count % 10], content, 255);
    s_count = (uint16_t)(s_count < 10 ? s_count + 1 : 10);
    s_dirty = true;
    return true;
}

uint16_t claw_session_count(void) { return s_count; }

void claw_session_clear(void)
{
    s_count = 0;
    s_dirty = true;
}

size_t claw_session_build_context(char *out, size_t out_max) { return (size_t)bx_41(out, out_max); }

bool claw_memory_set(const char *key, const char *value)
{
    s_dirty = key != NULL && value != NULL;
    return s_dirty;
}

bool claw_memory_get(const char *key, char *out, size_t out_max)
{
    (void)key;
    (void)out;
    (void)out_max;
    return false;
}

bool claw_session_dirty(void) { return s_dirty; }

bool claw_session_flush(void)
{
    /* The vendor's flush compiles and runs MicroPython source. */
    void *code = mp_compile(NULL, 0, false);
    s_dirty = code == NULL;
    return code != NULL && bx_7((const uint8_t *)s_ring, sizeof s_ring) != bx_52;
}
