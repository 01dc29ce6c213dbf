/*
 * abi_check.c — compile-time checks of the public headers' ABI. Built by
 * scripts/test_c.sh once with and once without -fshort-enums (the sizes must
 * not depend on it), and by tests/image/ for Cortex-M55.
 */
#include "claw_port.h"
#include "claw_safety.h"
#include "claw_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

_Static_assert(sizeof(bool) == 1, "bool is one byte");
_Static_assert(sizeof(claw_role_t) == 1, "claw_role_t is uint8_t");
_Static_assert(sizeof(claw_cb_state_t) == 1, "claw_cb_state_t is uint8_t");
_Static_assert(sizeof(claw_trust_level_t) == 1, "claw_trust_level_t is uint8_t");
_Static_assert((claw_role_t)-1 > 0, "claw_role_t is unsigned");
_Static_assert((claw_cb_state_t)-1 > 0, "claw_cb_state_t is unsigned");
_Static_assert((claw_trust_level_t)-1 > 0, "claw_trust_level_t is unsigned");

_Static_assert(CLAW_SESSION_MAX_MSGS == 10, "spec 2");
_Static_assert(CLAW_MSG_MAX_LEN == 256, "spec 2");
_Static_assert(CLAW_MEM_KEY_MAX == 32, "spec 2");
_Static_assert(CLAW_MEM_VAL_MAX == 128, "spec 2");
_Static_assert(CLAW_MEM_MAX_ENTRIES == 32, "contract notes");
/* The vendor's 16 held fewer names than its own 29-32 tools (issue 20):
 * a slot for each registry name and 12 for others. */
_Static_assert(CLAW_RATE_MAX_TOOLS == 48 && CLAW_RATE_KNOWN_TOOLS == 36, "issue 20");
_Static_assert(CLAW_RATE_NAME_MAX == 32, "contract notes");
_Static_assert(CLAW_RATE_DEFAULT_PER_MIN == 10, "spec 2");
_Static_assert(CLAW_CB_THRESHOLD == 3, "spec 2");
_Static_assert(CLAW_CB_COOLDOWN_MS == 30000, "spec 2");

_Static_assert(CLAW_ROLE_USER == 0 && CLAW_ROLE_ASSISTANT == 1, "spec 2");
_Static_assert(CLAW_ROLE_SYSTEM == 2 && CLAW_ROLE_TOOL == 3, "spec 2");
_Static_assert(CLAW_CB_CLOSED == 0 && CLAW_CB_OPEN == 1 && CLAW_CB_HALFOPEN == 2, "spec 2");
_Static_assert(CLAW_TRUST_NONE == 0 && CLAW_TRUST_HTTPS == 1 && CLAW_TRUST_USB == 2, "spec 2");

_Static_assert(CLAW_PORT_MAX_FILES == 3, "claw_port.h");
_Static_assert(CLAW_PORT_MODE_READ == 0 && CLAW_PORT_MODE_WRITE == 1 &&
                   CLAW_PORT_MODE_APPEND == 2,
               "claw_port.h");

#ifdef ABI_TARGET_CORTEX_M
_Static_assert(sizeof(size_t) == 4, "32-bit size_t");
_Static_assert(sizeof(void *) == 4, "32-bit pointers");
_Static_assert(sizeof(int32_t) == 4 && sizeof(uint32_t) == 4, "");
_Static_assert(_Alignof(uint32_t) == 4, "");
#endif

/* Every declaration has exactly the expected type. */
#define SAME_TYPE(fn, type) _Static_assert(_Generic(&(fn), type: 1, default: 0), #fn)
SAME_TYPE(claw_session_init, void (*)(void));
SAME_TYPE(claw_session_add, bool (*)(claw_role_t, const char *));
SAME_TYPE(claw_session_count, uint16_t (*)(void));
SAME_TYPE(claw_session_clear, void (*)(void));
SAME_TYPE(claw_session_build_context, size_t (*)(char *, size_t));
SAME_TYPE(claw_memory_set, bool (*)(const char *, const char *));
SAME_TYPE(claw_memory_get, bool (*)(const char *, char *, size_t));
SAME_TYPE(claw_session_dirty, bool (*)(void));
SAME_TYPE(claw_session_flush, bool (*)(void));
SAME_TYPE(claw_cb_init, void (*)(void));
SAME_TYPE(claw_cb_allow, bool (*)(void));
SAME_TYPE(claw_cb_success, void (*)(void));
SAME_TYPE(claw_cb_failure, void (*)(void));
SAME_TYPE(claw_cb_state, claw_cb_state_t (*)(void));
SAME_TYPE(claw_cb_cooldown_remaining, uint32_t (*)(void));
SAME_TYPE(claw_rate_init, void (*)(void));
SAME_TYPE(claw_rate_check, bool (*)(const char *));
SAME_TYPE(claw_rate_record, void (*)(const char *));
SAME_TYPE(claw_rate_set, void (*)(const char *, uint16_t));
SAME_TYPE(claw_trust_set, void (*)(claw_trust_level_t));
SAME_TYPE(claw_trust_get, claw_trust_level_t (*)(void));
SAME_TYPE(claw_trust_allows, bool (*)(uint8_t));
SAME_TYPE(claw_port_ticks_ms, uint32_t (*)(void));
SAME_TYPE(claw_port_open, int32_t (*)(const char *, uint8_t));
SAME_TYPE(claw_port_read, int32_t (*)(int32_t, uint8_t *, size_t));
SAME_TYPE(claw_port_write, int32_t (*)(int32_t, const uint8_t *, size_t));
SAME_TYPE(claw_port_close, int32_t (*)(int32_t));
SAME_TYPE(claw_port_remove, int32_t (*)(const char *));
SAME_TYPE(claw_port_rename, int32_t (*)(const char *, const char *));
SAME_TYPE(claw_port_atomic_write, uint8_t (*)(const char *));
SAME_TYPE(claw_port_on_vm_task, bool (*)(void));

/* ISO C forbids an empty translation unit. */
typedef int abi_check_nonempty;
