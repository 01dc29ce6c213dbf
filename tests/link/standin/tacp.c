/* Stand-in for the vendor's tacp.o (TACP: UART poll, REPL ring, the claw
 * sub-protocol's frames). Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include "claw_safety.h"

#include <string.h>

/* One of the archive's few ELF-global internals ("bx_N"): the CRC-16/CCITT
 * of the frames, also used by claw_session.o (an inward reference: harmless,
 * that member is never extracted beside bentoclaw). */
uint16_t bx_7(const uint8_t *data, size_t len)
{
    uint16_t crc = 0xffff;
    for (size_t i = 0; i < len; i++) {
        crc = (uint16_t)(crc ^ (uint16_t)(data[i] << 8));
        for (int b = 0; b < 8; b++) {
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
        }
    }
    return crc;
}

#ifdef STANDIN_TACP_REACHES_INTO_SESSION
/* The variant of the self-test: a TACP handler calls an internal of
 * claw_session.o, which the linker then has to extract. */
extern int bx_41(char *out, size_t max);
#endif

static uint8_t s_ring[256];
static volatile uint16_t s_head;
static volatile uint16_t s_tail;
static char s_frame[64];

void tacp_init(void)
{
    s_head = 0;
    s_tail = 0;
    /* A TACP connection is USB trust: a public name, which resolves to
     * whichever archive defines the 22 functions first. */
    claw_trust_set(CLAW_TRUST_USB);
}

bool tacp_poll_uart(void)
{
    if (!mtb_hal_uart_readable(DEBUG_UART_hal_obj)) {
        return false;
    }
    if (g_is_safe_boot && sensor_auto_is_restart_pending()) {
        mpy_request_safe_boot_once();
        ui_show_deploy_screen();
    }
    if (sensor_auto_is_delete_pending()) {
        mpy_request_delete_main_py();
    }
    ui_notify_ide_connected();
    s_ring[s_head++ & 0xff] = (uint8_t)mp_hal_ticks_ms();
    bentoclaw_tacp_dispatch(0x03, s_frame, 0);
#ifdef STANDIN_TACP_REACHES_INTO_SESSION
    (void)bx_41(s_frame, sizeof s_frame);
#endif
    return true;
}

int tacp_ring_buf_read(void)
{
    if (s_head == s_tail) {
        return -1;
    }
    return s_ring[s_tail++ & 0xff];
}

bool tacp_ring_buf_readable(void) { return s_head != s_tail; }

void tacp_request_delete_main_from_isr(void)
{
    mp_sched_keyboard_interrupt();
}

void tacp_claw_respond(uint8_t sub_cmd, const char *payload, uint16_t payload_len)
{
    size_t n = payload_len < sizeof s_frame - 8 ? payload_len : sizeof s_frame - 8;
    s_frame[0] = (char)0xaa;
    s_frame[1] = 0x55;
    s_frame[2] = 0x30;
    s_frame[3] = (char)sub_cmd;
    memcpy(&s_frame[4], payload, n);
    uint16_t crc = bx_7((const uint8_t *)&s_frame[3], n + 1);
    s_frame[4 + n] = (char)(crc & 0xff);
    s_frame[5 + n] = (char)(crc >> 8);
}
