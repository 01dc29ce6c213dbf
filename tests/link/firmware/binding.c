/* Stand-in for the vendor's binding, modbentoclaw.c (compiled into
 * libmicropython.a, so with its flags: -msoft-float). It calls the 22
 * functions the way the binding does (ensure_init, execute's gate order,
 * ask with build_context(buf, 3072 - 256), session_clear) plus the vendor's
 * transport and TACP answers, and exports what the archive needs of it.
 * Linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include "claw_safety.h"
#include "claw_session.h"

#include <string.h>

static bool s_init;
static char s_work[3072];
static char s_reply[512];

static void ensure_init(void)
{
    if (s_init) {
        return;
    }
    claw_session_init();
    claw_cb_init();
    claw_rate_init();
    claw_rate_set("led_set", 30);
    claw_trust_set(CLAW_TRUST_USB);
    s_init = true;
}

static int execute(const char *tool, uint8_t risk)
{
    ensure_init();
    if (!claw_cb_allow()) {
        return -1;
    }
    if (!claw_trust_allows(risk)) {
        return -2;
    }
    if (!claw_rate_check(tool)) {
        return -3;
    }
    claw_rate_record(tool);
    claw_cb_success();
    return claw_session_add(CLAW_ROLE_TOOL, tool) ? 0 : -4;
}

static int ask(const char *prompt)
{
    ensure_init();
    claw_session_add(CLAW_ROLE_USER, prompt);
    size_t n = claw_session_build_context(s_work, sizeof s_work - 256);
    int rlen = claw_https_connected() ? claw_https_post("/ai/v1/chat", s_work, n, s_reply, sizeof s_reply) : -1;
    if (rlen <= 0) {
        claw_cb_failure();
        return -1;
    }
    claw_cb_success();
    claw_session_add(CLAW_ROLE_ASSISTANT, s_reply);
    return rlen;
}

static uint32_t status(void)
{
    char value[128];
    uint32_t s = claw_session_count() + claw_cb_state() + claw_cb_cooldown_remaining() + claw_trust_get();
    if (claw_memory_get("name", value, sizeof value)) {
        s += (uint32_t)strlen(value);
    }
    return s + (claw_session_dirty() ? 1u : 0u);
}

void bentoclaw_tacp_dispatch(uint8_t sub_cmd, const char *payload, uint16_t payload_len)
{
    switch (sub_cmd) {
    case 0x01:
        (void)execute(payload, 1);
        break;
    case 0x02:
        (void)ask(payload);
        break;
    case 0x06:
        (void)claw_memory_set(payload, payload + payload_len / 2);
        break;
    case 0x07:
        claw_session_clear();
        break;
    case 0x08:
        if (claw_https_connect(payload, 443, payload)) {
            claw_trust_set(CLAW_TRUST_HTTPS);
        }
        break;
    case 0x09:
        claw_https_disconnect();
        claw_trust_set(CLAW_TRUST_USB);
        break;
    default:
        break;
    }
    tacp_claw_respond(sub_cmd, s_reply, (uint16_t)status());
}

/* mpy_main.c calls it once per boot, after boot.py/main.py. (The binding
 * never calls claw_session_flush(): mpy_main.c's idle point does.) */
void bentoclaw_send_ready(void)
{
    ensure_init();
    tacp_claw_respond(0x00, "{\"proto\":2}", 11);
    if (claw_https_get("/ai/v1/health", s_reply, sizeof s_reply) < 0) {
        claw_https_disconnect();
    }
}
