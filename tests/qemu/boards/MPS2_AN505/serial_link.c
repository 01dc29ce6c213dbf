/*
 * serial_link.c — the board's end of the serial bridge framing
 * (serial_link.h, docs/EMULATOR.md). Polled, bounded by deadlines on the
 * board's tick; no interrupts, no allocation, no MicroPython calls.
 */
#include "serial_link.h"

#include <string.h>

#include "board.h"

static uint16_t s_last_id;

// Header bytes that failed the check are looked at again for a magic.
static uint8_t s_pushback[2 * LINK_HEADER_LEN];
static size_t s_pushback_len;
static size_t s_pushback_pos;

static uint8_t link_header_check(const uint8_t *hdr) {
    uint8_t x = 0xa5u ^ hdr[2];
    for (size_t i = 4; i < LINK_HEADER_LEN; i++) {
        x ^= hdr[i];
    }
    return x;
}

uint16_t link_new_id(void) {
    s_last_id++;
    if (s_last_id == 0) {
        s_last_id = 1;
    }
    return s_last_id;
}

// CRC-32 (reflected polynomial 0xEDB88320) with a 16-entry table: 64 bytes
// of table, two lookups per byte.
static const uint32_t crc_nibble[16] = {
    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
    0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

static uint32_t crc_byte(uint32_t crc, uint8_t b) {
    crc ^= b;
    crc = (crc >> 4) ^ crc_nibble[crc & 0xf];
    crc = (crc >> 4) ^ crc_nibble[crc & 0xf];
    return crc;
}

void link_drain(void) {
    s_pushback_len = 0;
    s_pushback_pos = 0;
    while (board_uart_getc(BOARD_UART_LINK) >= 0) {
    }
}

static bool link_put(const uint8_t *p, size_t n, uint32_t *crc, uint32_t deadline_ms) {
    for (size_t i = 0; i < n; i++) {
        if (!board_uart_putc(BOARD_UART_LINK, p[i], deadline_ms)) {
            return false;
        }
        *crc = crc_byte(*crc, p[i]);
    }
    return true;
}

bool link_send(uint8_t type, uint16_t id, const link_part_t *parts, size_t n_parts, uint32_t deadline_ms) {
    size_t len = 0;
    for (size_t i = 0; i < n_parts; i++) {
        len += parts[i].len;
    }
    uint8_t hdr[LINK_HEADER_LEN] = { 'B', 'C', type, 0 };
    link_put_u16(hdr + 4, id);
    link_put_u32(hdr + 6, (uint32_t)len);
    hdr[3] = link_header_check(hdr);
    uint32_t crc = 0xffffffffu;
    if (!link_put(hdr, sizeof(hdr), &crc, deadline_ms)) {
        return false;
    }
    for (size_t i = 0; i < n_parts; i++) {
        if (!link_put(parts[i].data, parts[i].len, &crc, deadline_ms)) {
            return false;
        }
    }
    crc ^= 0xffffffffu;
    uint8_t tail[4];
    link_put_u32(tail, crc);
    uint32_t unused = 0;
    return link_put(tail, sizeof(tail), &unused, deadline_ms);
}

// One byte from the bridge, or -1 once the deadline has passed.
static int link_getc(uint32_t deadline_ms) {
    if (s_pushback_pos < s_pushback_len) {
        return s_pushback[s_pushback_pos++];
    }
    for (;;) {
        int c = board_uart_getc(BOARD_UART_LINK);
        if (c >= 0) {
            return c;
        }
        if (board_ms_reached(deadline_ms)) {
            return -1;
        }
    }
}

// Read n bytes into p (or skip them when p is NULL), updating the CRC.
static bool link_get(uint8_t *p, size_t n, uint32_t *crc, uint32_t deadline_ms) {
    for (size_t i = 0; i < n; i++) {
        int c = link_getc(deadline_ms);
        if (c < 0) {
            return false;
        }
        if (p != NULL) {
            p[i] = (uint8_t)c;
        }
        *crc = crc_byte(*crc, (uint8_t)c);
    }
    return true;
}

int32_t link_rx_begin(link_rx_t *rx, uint8_t type, uint16_t id, uint32_t deadline_ms) {
    rx->deadline_ms = deadline_ms;
    rx->left = 0;
    int c = link_getc(deadline_ms);
    for (;;) {
        // Hunt for the magic "BC".
        if (c < 0) {
            return -1;
        }
        if (c != 'B') {
            c = link_getc(deadline_ms);
            continue;
        }
        c = link_getc(deadline_ms);
        if (c != 'C') {
            continue; // may be the 'B' of the real magic: looked at again
        }
        uint8_t hdr[LINK_HEADER_LEN] = { 'B', 'C' };
        rx->crc = crc_byte(crc_byte(0xffffffffu, 'B'), 'C');
        if (!link_get(hdr + 2, LINK_HEADER_LEN - 2, &rx->crc, deadline_ms)) {
            return -1;
        }
        uint32_t len = link_get_u32(hdr + 6);
        if (hdr[3] != link_header_check(hdr) || len > LINK_PAYLOAD_MAX) {
            // Noise: hunt again from the byte after this magic.
            size_t rest = s_pushback_len - s_pushback_pos;
            if (rest > 0) {
                // Still inside an earlier pushback: keep its unread tail.
                memmove(s_pushback + (LINK_HEADER_LEN - 2), s_pushback + s_pushback_pos, rest);
            }
            memcpy(s_pushback, hdr + 2, LINK_HEADER_LEN - 2);
            s_pushback_len = LINK_HEADER_LEN - 2 + rest;
            s_pushback_pos = 0;
            c = link_getc(deadline_ms);
            continue;
        }
        if (hdr[2] == type && link_get_u16(hdr + 4) == id) {
            if (len > (uint32_t)INT32_MAX) {
                return -1;
            }
            rx->left = len;
            return (int32_t)len;
        }
        // Another request's answer (a late one), or noise that looked like a
        // header: skip its payload and CRC, then hunt again. A length that is
        // noise at worst costs the wait until the deadline.
        if (!link_get(NULL, (size_t)len + 4u, &rx->crc, deadline_ms)) {
            return -1;
        }
        c = link_getc(deadline_ms);
    }
}

bool link_rx_read(link_rx_t *rx, uint8_t *p, size_t n) {
    if (n > rx->left) {
        return false;
    }
    rx->left -= (uint32_t)n;
    return link_get(p, n, &rx->crc, rx->deadline_ms);
}

bool link_rx_end(link_rx_t *rx) {
    uint8_t tail[4];
    uint32_t unused = 0;
    if (rx->left != 0 || !link_get(tail, sizeof(tail), &unused, rx->deadline_ms)) {
        return false;
    }
    // A mismatch means damage on the line: a failed exchange.
    return (rx->crc ^ 0xffffffffu) == link_get_u32(tail);
}

int32_t link_recv(uint8_t type, uint16_t id, uint8_t *head, size_t head_len,
    uint8_t *body, size_t body_max, uint32_t deadline_ms) {
    link_rx_t rx;
    int32_t len = link_rx_begin(&rx, type, id, deadline_ms);
    if (len < 0 || (size_t)len < head_len || (size_t)len - head_len > body_max) {
        return -1; // no answer, or one that does not fit what was asked for
    }
    size_t body_len = (size_t)len - head_len;
    if (!link_rx_read(&rx, head, head_len) || !link_rx_read(&rx, body, body_len) || !link_rx_end(&rx)) {
        return -1;
    }
    return (int32_t)body_len;
}
