/*
 * tacp_link.c — the emulated boards' stand-in for the answering half of the
 * vendor's tacp.c (docs/TACP.md, docs/EMULATOR.md): tacp_claw_respond(),
 * which the binding's firmware build (BENTOCLAW_PORT_FIRMWARE=1) calls for
 * every answer, frames it with the library's framer (claw_tacp_frame) and
 * the sequence number of the request being dispatched, and sends it on the
 * console, where the REPL's output goes too, as on the board.
 */
#include <stdint.h>

#include "py/mphal.h"

#include "claw_ext.h"

// The request's sequence number (0 for READY), set by the board's receiver
// before it calls bentoclaw_tacp_dispatch().
uint8_t board_tacp_seq;

// One frame at a time: the board's own buffer, as the vendor's tacp.c has
// its own (the library's answers are on the heap, not here).
static uint8_t s_frame[CLAW_TACP_FRAME_MAX];

void tacp_claw_respond(uint8_t sub_cmd, const char *payload, uint16_t payload_len) {
    size_t n = claw_tacp_frame(sub_cmd, board_tacp_seq, (const uint8_t *)payload, payload_len, s_frame,
        sizeof(s_frame));
    mp_hal_stdout_tx_strn((const char *)s_frame, n);
}
