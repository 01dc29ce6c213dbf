/*
 * claw_transport_board.c — the transport and UI port layer of
 * mpy/claw_transport.h for the emulated MPS3_AN547 board.
 *
 * The board has no network and no UI panel. The firmware variant of the
 * module (BENTOCLAW_PORT_FIRMWARE=1) only declares these functions; here
 * they say "no network": connect fails cleanly (so trust returns to USB),
 * a POST fails, and UI messages are counted and dropped.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "claw_transport.h"

bool claw_ipc_initialized;
static uint32_t s_ui_dropped;

bool claw_https_connect(const char *host, uint16_t port, const char *api_key) {
    (void)host;
    (void)port;
    (void)api_key;
    return false;
}

int claw_https_post(const char *body, size_t body_len, char *resp, size_t resp_max) {
    (void)body;
    (void)body_len;
    if (resp != NULL) {
        resp[0] = '\0';
    }
    (void)resp_max;
    return -1;
}

bool claw_https_connected(void) {
    return false;
}

void claw_https_disconnect(void) {
}

void claw_ipc_init(void) {
    claw_ipc_initialized = true;
}

void claw_ipc_send_ui(uint8_t type, const char *text, size_t len) {
    (void)type;
    (void)text;
    (void)len;
    s_ui_dropped++;
}
