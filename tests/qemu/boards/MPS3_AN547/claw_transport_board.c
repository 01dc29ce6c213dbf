/*
 * claw_transport_board.c — the transport and UI port layer of
 * mpy/claw_transport.h for the emulated MPS3_AN547 board.
 *
 * The board has no network. The firmware variant of the module
 * (BENTOCLAW_PORT_FIRMWARE=1) only declares these functions; here they say
 * "no network": connect fails cleanly (so trust returns to USB) and a POST
 * fails. (The UI panel is the binding's own, over the board's stand-in for
 * the BENTO IPC pipe: tests/qemu/boards/common/ipc_board.c.)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "claw_transport.h"

bool claw_https_connect(const char *host, uint16_t port, const char *api_key) {
    (void)host;
    (void)port;
    (void)api_key;
    return false;
}

int claw_https_post(const char *path, const char *body, size_t body_len, char *resp, size_t resp_max) {
    (void)path;
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
