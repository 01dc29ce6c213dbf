/* Stand-in for the vendor's claw_safety.o: breaker, rate limiter, trust,
 * the member bentoclaw replaces (never to be extracted beside
 * libbentoclaw.a). Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include "claw_safety.h"

#include <string.h>

/* An internal left ELF-global, used by claw_session.o only. */
uint32_t bx_52;

static uint8_t s_failures;
static uint32_t s_opened_at;
static const char *s_names[16];
static uint16_t s_limits[16];
static uint16_t s_counts[16];
static claw_trust_level_t s_trust;

void claw_cb_init(void) { s_failures = 0; }

bool claw_cb_allow(void) { return s_failures < 3 || xTaskGetTickCount() - s_opened_at > 30000; }

void claw_cb_success(void) { s_failures = 0; }

void claw_cb_failure(void)
{
    if (++s_failures == 3) {
        s_opened_at = xTaskGetTickCount();
        bx_52++;
    }
}

claw_cb_state_t claw_cb_state(void) { return s_failures < 3 ? CLAW_CB_CLOSED : CLAW_CB_OPEN; }

uint32_t claw_cb_cooldown_remaining(void) { return s_failures < 3 ? 0 : 30000; }

static int slot(const char *name)
{
    for (int i = 0; i < 16; i++) {
        if (s_names[i] != NULL && strcmp(s_names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

void claw_rate_init(void) { memset(s_names, 0, sizeof s_names); }

bool claw_rate_check(const char *tool_name)
{
    int i = slot(tool_name);
    return i < 0 || s_counts[i] < s_limits[i];
}

void claw_rate_record(const char *tool_name)
{
    int i = slot(tool_name);
    if (i >= 0) {
        s_counts[i]++;
    }
}

void claw_rate_set(const char *tool_name, uint16_t max_per_minute)
{
    for (int i = 0; i < 16; i++) {
        if (s_names[i] == NULL) {
            s_names[i] = tool_name;
            s_limits[i] = max_per_minute;
            return;
        }
    }
}

void claw_trust_set(claw_trust_level_t level) { s_trust = level; }

claw_trust_level_t claw_trust_get(void) { return s_trust; }

bool claw_trust_allows(uint8_t risk) { return risk <= s_trust; }
