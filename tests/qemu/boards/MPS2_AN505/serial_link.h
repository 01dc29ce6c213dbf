/*
 * serial_link.h — framed request/answer exchanges with the host-side serial
 * bridge (tests/qemu/serial_bridge.py) over UART1. The frame format and
 * the message types are documented in docs/EMULATOR.md ("The serial
 * bridge"); serial_bridge.py is the other end.
 *
 *   offset size
 *   0      2    magic "BC" (0x42 0x43)
 *   2      1    type: a request, or the request's type | 0x80 for its answer
 *   3      1    header check: 0xA5 ^ the XOR of bytes 2 and 4..9, so that
 *               noise which happens to contain "BC" is not taken for a
 *               header (and its length is not waited for)
 *   4      2    id, little-endian: chosen by the board per request, echoed
 *               by the answer, so a late answer to an abandoned request is
 *               never taken for the answer to the next one
 *   6      4    payload length, little-endian
 *   10     n    payload
 *   10+n   4    CRC-32 (IEEE 802.3, as zlib.crc32) of bytes 0 .. 10+n-1,
 *               little-endian
 *
 * Every wait is bounded by a deadline on the board's millisecond tick, so a
 * missing bridge costs at most that time and never hangs the board. Nothing
 * here raises or allocates: the transport calls it on the Rust core's
 * behalf.
 */
#ifndef BENTOCLAW_SERIAL_LINK_H
#define BENTOCLAW_SERIAL_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINK_HEADER_LEN (10u)
#define LINK_ANSWER     (0x80u)
// The largest payload either side sends (a header claiming more is noise).
#define LINK_PAYLOAD_MAX (1u << 20)

// The board's transport: claw_https_* (claw_transport_serial.c).
#define LINK_CONNECT    (0x01u) // u16 port, u8 n, host[n], u8 m, key[m] -> u8 reachable
#define LINK_POST       (0x02u) // u32 resp_max, body -> u16 status, u8 flags, u32 in, u32 out, body
#define LINK_DISCONNECT (0x03u) // (empty), no answer
// The test harness (board.link_call(), tests/qemu/qrig.py): not part of
// what a network co-processor would speak.
#define LINK_HOST_HTTP  (0x10u) // a request to the backend's control endpoints
#define LINK_FAULT      (0x13u) // make the bridge misbehave once
#define LINK_DETACH     (0x14u) // the bridge goes away (closes its end)

typedef struct {
    const void *data;
    size_t len;
} link_part_t;

// A fresh request id (never 0).
uint16_t link_new_id(void);

// Discard whatever the bridge sent that nobody waited for.
void link_drain(void);

// Send one frame whose payload is the concatenation of `parts`.
bool link_send(uint8_t type, uint16_t id, const link_part_t *parts, size_t n_parts, uint32_t deadline_ms);

// Wait for the answer of type `type` to request `id`; frames of other
// types or ids are skipped, bytes that are no frame (no magic, a failed
// header check, a length over LINK_PAYLOAD_MAX) are skipped up to the next
// magic. The payload's first head_len bytes go to `head`, the rest
// (at most body_max) to `body`. Returns the length of that rest, or -1:
// deadline passed, payload too short or too long, or a CRC mismatch in a
// frame that claims to be this answer.
int32_t link_recv(uint8_t type, uint16_t id, uint8_t *head, size_t head_len,
    uint8_t *body, size_t body_max, uint32_t deadline_ms);

// The same in steps, for a caller that sizes its buffer by the answer:
// link_rx_begin waits for the answer's header and returns its payload
// length (or -1), link_rx_read reads the next n payload bytes, link_rx_end
// reads the CRC and checks it. Every step false / -1 = a failed exchange.
typedef struct {
    uint32_t crc;
    uint32_t left;
    uint32_t deadline_ms;
} link_rx_t;
int32_t link_rx_begin(link_rx_t *rx, uint8_t type, uint16_t id, uint32_t deadline_ms);
bool link_rx_read(link_rx_t *rx, uint8_t *p, size_t n);
bool link_rx_end(link_rx_t *rx);

static inline uint16_t link_get_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t link_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void link_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void link_put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif // BENTOCLAW_SERIAL_LINK_H
