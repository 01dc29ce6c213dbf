/*
 * board_tacp.c — the receiving half of the board's stand-in for the vendor's
 * tacp.c (docs/TACP.md, docs/EMULATOR.md): the console UART (UART0) carries
 * the REPL and TACP, as on the BENTO board. Every byte the console receives
 * goes through the library's framer (claw_tacp_rx_push); bytes that are not
 * TACP go on to the REPL, in order.
 *
 *  - A claw frame received whole while the REPL waits for input is
 *    dispatched there and then (bentoclaw_tacp_dispatch, the binding's; its
 *    answers go out on the console through tacp_claw_respond, common/
 *    tacp_link.c). One received while Python code runs (the console is only
 *    looked at in delays, for Ctrl-C) is held, and the console is not read
 *    further until the REPL waits again: one frame at a time, the rest stays
 *    in the UART.
 *  - TERMINATE (AA 55 01) is Ctrl-C: a KeyboardInterrupt for running code
 *    (a tool an EXEC runs too), a Ctrl-C for the waiting REPL.
 *  - CONNECT (AA 55 03), the IDE's ping, does nothing; so do STATUS (no
 *    LCD), VERSION_QUERY (its answer's format is not known), PROGRAM_MODE
 *    and HARD_RESET (nothing to skip or reset to: no main.py, and the test
 *    runner owns the emulator); FILE_XFER's header is swallowed and no
 *    FILE_RDY comes, so an upload times out on the host.
 *  - READY goes out at the end of every mp_init (power-on and each soft
 *    reset), before the banner and the first prompt: the vendor's firmware
 *    sends it after boot.py and main.py, before the REPL, and this port has
 *    neither script.
 */
#include <stdbool.h>
#include <stdint.h>

#include "py/mphal.h"
#include "py/runtime.h"

#include "claw_ext.h"

#include "board.h"

void bentoclaw_tacp_dispatch(uint8_t sub, const char *payload, uint16_t len);
void bentoclaw_send_ready(void);
extern uint8_t board_tacp_seq; // common/tacp_link.c

static claw_tacp_rx_t s_rx;
// The frame's payload (+1: a NUL after it, as the vendor's dispatcher
// passes it) — the board's buffer, as the vendor's tacp.c has its own.
static uint8_t s_payload[CLAW_TACP_PAYLOAD_MAX + 1];
// A whole frame not dispatched yet (received while code ran).
static bool s_pending;
static claw_tacp_event_t s_frame;
// Bytes for the REPL (at most 3 come from one received byte).
static uint8_t s_pass[4];
static uint8_t s_pass_at, s_pass_n;

static void dispatch_pending(void) {
    s_pending = false;
    s_payload[s_frame.len] = 0;
    board_tacp_seq = s_frame.seq;
    bentoclaw_tacp_dispatch(s_frame.sub, (const char *)s_payload, s_frame.len);
}

int board_tacp_getc(bool idle) {
    for (;;) {
        if (s_pass_at < s_pass_n) {
            return s_pass[s_pass_at++];
        }
        if (s_pending) {
            if (!idle) {
                return -1;
            }
            dispatch_pending();
            continue;
        }
        int c = board_uart_getc(BOARD_UART_CONSOLE);
        if (c < 0) {
            return -1;
        }
        claw_tacp_event_t ev;
        switch (claw_tacp_rx_push(&s_rx, (uint8_t)c, mp_hal_ticks_ms(), s_payload, CLAW_TACP_PAYLOAD_MAX, &ev)) {
            case CLAW_TACP_EV_PASS:
                for (uint8_t i = 0; i < ev.n; i++) {
                    s_pass[i] = ev.bytes[i];
                }
                s_pass_at = 0;
                s_pass_n = ev.n;
                break;
            case CLAW_TACP_EV_CONTROL:
                if (ev.bytes[0] == 0x01) {
                    if (idle) {
                        return 0x03; // Ctrl-C to the waiting REPL
                    }
                    mp_sched_keyboard_interrupt();
                }
                break;
            case CLAW_TACP_EV_FRAME:
                s_frame = ev;
                s_pending = true;
                break;
            default:
                break;
        }
    }
}

// tests/vendor_binding/modvclaw.c, where it is linked: the vendor binding's
// pattern is under test (a firmware links one binding; READY is then that
// binding's, and bentoclaw's would initialise the core at every VM start).
extern bool vclaw_is_the_binding __attribute__((weak));

void board_tacp_vm_init(void) {
    // A frame half received when the VM went away is dropped.
    s_rx = (claw_tacp_rx_t) { 0 };
    s_pending = false;
    s_pass_at = s_pass_n = 0;
    board_tacp_seq = 0;
    if (&vclaw_is_the_binding == NULL || !vclaw_is_the_binding) {
        bentoclaw_send_ready();
    }
}
