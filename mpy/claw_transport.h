/*
 * claw_transport.h — the transport and UI port layer under the binding.
 *
 * The binding reaches the backend and the UI panel only through these
 * functions. They carry the names of the vendor firmware's own transport
 * (claw_https_*) and UI IPC (claw_ipc_*), so the same sources build for both:
 *  - BENTOCLAW_PORT_FIRMWARE=1: the firmware (mtb-mpy) supplies them — HTTPS
 *    to the backend, IPC to the CM55 UI panel. This header only declares them.
 *  - otherwise (the MicroPython unix port): mpy/claw_transport_unix.c, plain
 *    HTTP/1.1 over POSIX sockets on loopback, UI messages kept in RAM for the
 *    tests to read back.
 * All are called from the one MicroPython task; none raises or longjmps
 * (they return status codes), nothing is ISR-safe.
 */
#ifndef BENTOCLAW_CLAW_TRANSPORT_H
#define BENTOCLAW_CLAW_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef BENTOCLAW_PORT_FIRMWARE
#define BENTOCLAW_PORT_FIRMWARE (0)
#endif

// The firmware may pull in the vendor's own header (with the CLAW_UI_* values
// of the real panel protocol): -DBENTOCLAW_VENDOR_TRANSPORT_H='"claw_ipc.h"'.
// Its prototypes must match the ones below, or a few-line shim goes beside.
#if BENTOCLAW_PORT_FIRMWARE && defined(BENTOCLAW_VENDOR_TRANSPORT_H)
#include BENTOCLAW_VENDOR_TRANSPORT_H
#endif

/* Limits the binding checks before it hands strings to the transport (a
 * ValueError naming the limit, not a silent cut); sizes include the NUL. */
#define BENTOCLAW_HOST_MAX (64)
#define BENTOCLAW_API_KEY_MAX (128)

/* Total time one request may take: connect + send + receive. A backend that
 * never answers must not hang the MicroPython task for longer than this. */
#ifndef BENTOCLAW_HTTP_TIMEOUT_MS
#define BENTOCLAW_HTTP_TIMEOUT_MS (5000)
#endif
/* The whole response header block (status line + headers) must fit in this
 * many bytes; a larger one (a header flood) is a failed request. */
#ifndef BENTOCLAW_HTTP_HEADER_MAX
#define BENTOCLAW_HTTP_HEADER_MAX (1024)
#endif
/* Request path on the backend (mpy/examples/backend.py answers POST on it). */
#ifndef BENTOCLAW_HTTP_PATH
#define BENTOCLAW_HTTP_PATH "/ask"
#endif

/* UI message types sent to the panel, unless the firmware's IPC header has its own. */
#ifndef CLAW_UI_STATUS_TEXT
#define CLAW_UI_STATUS_TEXT (0)
#define CLAW_UI_ERROR (1)
#define CLAW_UI_LAST_RESULT (2)
#define CLAW_UI_CLEAR (3)
#define CLAW_UI_CHAT_USER (4)
#define CLAW_UI_CHAT_ASSISTANT (5)
#define CLAW_UI_TOOL (6)
#define CLAW_UI_LED (7)
#endif

/* --- backend transport ------------------------------------------------------
 * claw_https_connect: remember the endpoint and check that it is reachable;
 *   true when it is. `host` and `api_key` are NUL-terminated and already
 *   validated by the binding (lengths below the limits above, printable
 *   ASCII only, so they cannot inject header lines).
 * claw_https_post: POST `body` (JSON, `body_len` bytes) with the bearer key;
 *   on a 200 answer copy the body into `resp` (at most `resp_max` bytes, NUL
 *   appended, so `resp` must hold resp_max + 1) and return its length.
 *   Any failure — not connected, refused, timeout, non-200, malformed or
 *   truncated answer — returns -1; a 200 answer whose body is larger than
 *   resp_max returns -2 where the transport can tell (the unix one does:
 *   the core then raises "reply too long (over REPLY_MAX = 4096 bytes)"),
 *   else -1 too (the firmware's vendor transport returns -1 for every
 *   failure: the board shows "HTTPS request failed").
 * claw_https_connected: whether connect succeeded and no disconnect followed.
 * claw_https_disconnect: forget the endpoint (idempotent).
 * claw_https_last_tokens (optional): the token counts the backend reported
 *   with the last successful claw_https_post() (response headers X-Tokens-In
 *   and X-Tokens-Out, docs/BACKEND.md §3); a count not reported is 0. True
 *   when at least one was reported. A vendor transport without it is linked
 *   against the weak default in modbentoclaw.c, which reports none
 *   (false): the firmware builds without it and only byte counts are kept. */
bool claw_https_connect(const char *host, uint16_t port, const char *api_key);
int claw_https_post(const char *body, size_t body_len, char *resp, size_t resp_max);
bool claw_https_connected(void);
void claw_https_disconnect(void);
bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out);

/* --- UI IPC -------------------------------------------------------------------
 * claw_ipc_init: bring the link up (idempotent) and set claw_ipc_initialized.
 * claw_ipc_send_ui: one message of `type` with `len` bytes of UTF-8 text;
 *   dropped silently when the link is down. */
extern bool claw_ipc_initialized;
void claw_ipc_init(void);
void claw_ipc_send_ui(uint8_t type, const char *text, size_t len);

#if !BENTOCLAW_PORT_FIRMWARE
/* Unix port only: the UI messages recorded since the last clear, oldest
 * first, for bentoclaw._ui_events(): the newest CLAW_IPC_LOG_MAX, each cut
 * to CLAW_IPC_TEXT_MAX - 1 bytes on a character boundary. */
#define CLAW_IPC_LOG_MAX (32)
#define CLAW_IPC_TEXT_MAX (96)
bool claw_ipc_event_get(size_t index, uint8_t *type, const char **text, size_t *len);
void claw_ipc_events_clear(void);
#endif

#endif /* BENTOCLAW_CLAW_TRANSPORT_H */
