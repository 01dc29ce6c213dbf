/*
 * claw_transport_serial.c — the transport and UI port layer of
 * mpy/claw_transport.h for the emulated MPS2_AN505 board.
 *
 * The board has no network of its own. Like a board with a network
 * co-processor on a serial line, it hands each backend request to the
 * host-side serial bridge (tests/qemu/serial_bridge.py) over UART1, which
 * makes the HTTP request to the backend and sends back the status, the
 * X-Tokens-In/Out counts and the body (frames: serial_link.h; protocol:
 * docs/EMULATOR.md). The contract is the unix transport's:
 *  - one deadline of BENTOCLAW_HTTP_TIMEOUT_MS on the board's tick covers
 *    sending the request and receiving the answer; a bridge that is gone or
 *    silent costs that long and no more;
 *  - only an answer with status 200 whose body fits resp_max is success;
 *    everything else (no bridge, the backend unreachable or failing, a
 *    damaged or late frame, a body too large) returns -1;
 *  - resp gets the body and a NUL (it holds resp_max + 1 bytes).
 * (The UI panel is the binding's own, over the board's stand-in for the
 * BENTO IPC pipe: tests/qemu/boards/common/ipc_board.c.)
 *
 * No MicroPython API is used: nothing here can raise.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "claw_transport.h"
#include "serial_link.h"
#include "board.h"

static bool s_connected;
static uint32_t s_tokens_in;
static uint32_t s_tokens_out;
static bool s_tokens_reported;

#define POST_HEAD_LEN (11u) // u16 status, u8 flags, u32 tokens in, u32 tokens out
#define TOKENS_IN_REPORTED (1u << 0)
#define TOKENS_OUT_REPORTED (1u << 1)

bool claw_https_connect(const char *host, uint16_t port, const char *api_key) {
    s_connected = false;
    if (host == NULL || api_key == NULL) {
        return false;
    }
    size_t host_len = strlen(host);
    size_t key_len = strlen(api_key);
    if (host_len >= BENTOCLAW_HOST_MAX || key_len >= BENTOCLAW_API_KEY_MAX) {
        return false;
    }
    uint32_t deadline = board_ms() + BENTOCLAW_HTTP_TIMEOUT_MS;
    uint8_t port_le[2];
    link_put_u16(port_le, port);
    uint8_t n_host = (uint8_t)host_len;
    uint8_t n_key = (uint8_t)key_len;
    const link_part_t parts[] = {
        { port_le, sizeof(port_le) },
        { &n_host, 1 },
        { host, host_len },
        { &n_key, 1 },
        { api_key, key_len },
    };
    uint16_t id = link_new_id();
    link_drain();
    if (!link_send(LINK_CONNECT, id, parts, sizeof(parts) / sizeof(parts[0]), deadline)) {
        return false;
    }
    uint8_t reachable = 0;
    if (link_recv(LINK_CONNECT | LINK_ANSWER, id, &reachable, 1, NULL, 0, deadline) != 0) {
        return false;
    }
    s_connected = reachable == 1;
    return s_connected;
}

int claw_https_post(const char *path, const char *body, size_t body_len, char *resp, size_t resp_max) {
    s_tokens_in = 0;
    s_tokens_out = 0;
    s_tokens_reported = false;
    size_t path_len = path != NULL ? strlen(path) : 0;
    if (!s_connected || path_len == 0 || path_len > 255 || body == NULL || resp == NULL
        || resp_max > (size_t)INT32_MAX) {
        return -1;
    }
    uint32_t deadline = board_ms() + BENTOCLAW_HTTP_TIMEOUT_MS;
    uint8_t max_le[4];
    link_put_u32(max_le, (uint32_t)resp_max);
    uint8_t n_path = (uint8_t)path_len;
    const link_part_t parts[] = {
        { max_le, sizeof(max_le) },
        { &n_path, 1 },
        { path, path_len },
        { body, body_len },
    };
    uint16_t id = link_new_id();
    link_drain();
    if (!link_send(LINK_POST, id, parts, sizeof(parts) / sizeof(parts[0]), deadline)) {
        return -1;
    }
    uint8_t head[POST_HEAD_LEN];
    int32_t n = link_recv(LINK_POST | LINK_ANSWER, id, head, sizeof(head), (uint8_t *)resp, resp_max, deadline);
    if (n < 0 || link_get_u16(head) != 200) {
        return -1;
    }
    resp[n] = '\0';
    uint8_t flags = head[2];
    s_tokens_in = (flags & TOKENS_IN_REPORTED) ? link_get_u32(head + 3) : 0;
    s_tokens_out = (flags & TOKENS_OUT_REPORTED) ? link_get_u32(head + 7) : 0;
    s_tokens_reported = (flags & (TOKENS_IN_REPORTED | TOKENS_OUT_REPORTED)) != 0;
    return (int)n;
}

bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    if (tokens_in != NULL) {
        *tokens_in = s_tokens_in;
    }
    if (tokens_out != NULL) {
        *tokens_out = s_tokens_out;
    }
    return s_tokens_reported;
}

bool claw_https_connected(void) {
    return s_connected;
}

void claw_https_disconnect(void) {
    if (s_connected) {
        // The bridge forgets the endpoint and the key; no answer is awaited
        // (a bridge that is gone must not make disconnect() slow).
        link_send(LINK_DISCONNECT, link_new_id(), NULL, 0, board_ms() + 100u);
    }
    s_connected = false;
}
