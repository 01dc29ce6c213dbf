/*
 * claw_transport.h — the transport port layer under the binding, and what
 * the unix port's stand-in (claw_transport_unix.c) shares with the module.
 *
 * The binding reaches the backend only through the vendor firmware's own
 * HTTPS client functions (claw_https_*, exported by the vendor archive
 * libbento_mpy.a), with the vendor's signatures, so the same sources build
 * for both:
 *  - BENTOCLAW_PORT_FIRMWARE=1: the firmware (mtb-mpy) supplies them (the
 *    UI panel is the binding's own there: no claw_ipc_* is expected);
 *  - otherwise (the MicroPython unix port): mpy/claw_transport_unix.c.
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

/* Limits the binding checks before it hands strings to the transport (a
 * ValueError naming the limit, not a silent cut); sizes include the NUL. */
#define BENTOCLAW_HOST_MAX (64)
#define BENTOCLAW_API_KEY_MAX (128)

/* Total time one request may take on the unix transport: connect + send +
 * receive. A backend that never answers must not hang the MicroPython task
 * for longer than this. (The vendor's transport has its own, about 15 s.) */
#ifndef BENTOCLAW_HTTP_TIMEOUT_MS
#define BENTOCLAW_HTTP_TIMEOUT_MS (5000)
#endif
/* The path every request goes to: the vendor's (the TESAIoT APISIX
 * gateway's chat route; mpy/examples/backend.py answers POST on it). */
#ifndef BENTOCLAW_HTTP_PATH
#define BENTOCLAW_HTTP_PATH "/ai/v1/chat"
#endif

/* --- backend transport (the vendor archive's signatures) ---------------------
 * claw_https_connect: remember the endpoint and check that it is reachable;
 *   true when it is. `host` and `api_key` are NUL-terminated and already
 *   validated by the core (lengths below the limits above, printable ASCII
 *   only, so they cannot inject header lines). The key goes to the backend
 *   as an `apikey:` header (APISIX key-auth), as the vendor's transport
 *   sends it.
 * claw_https_post: POST json[0..json_len) to `path` with Content-Type
 *   application/json; on a 200 answer (the vendor's: any 2xx) copy the body into `resp` (at most
 *   `resp_max` bytes, NUL appended, so `resp` must hold resp_max + 1) and
 *   return its length. Any failure — not connected, refused, timeout,
 *   another status, malformed or truncated answer — returns -1; a 200 answer
 *   whose body is larger than resp_max returns -2 where the transport can
 *   tell (the unix one does: the core then raises "reply too long (over
 *   REPLY_MAX = 4096 bytes)"), else -1 too (the vendor's transport returns
 *   -1 for every failure: the board shows "HTTPS request failed").
 * claw_https_connected: whether connect succeeded and no disconnect followed.
 * claw_https_disconnect: forget the endpoint (idempotent).
 * claw_https_last_tokens (optional, ours): the token counts the backend
 *   reported with the last successful claw_https_post() (response headers
 *   X-Tokens-In and X-Tokens-Out, docs/BACKEND.md §3); a count not reported
 *   is 0. True when at least one was reported. The vendor's transport has
 *   none: modbentoclaw.c's weak default (a transport's definition wins)
 *   reports none, and only byte counts are kept. */
bool claw_https_connect(const char *host, uint16_t port, const char *api_key);
int claw_https_post(const char *path, const char *json, size_t json_len, char *resp, size_t resp_max);
bool claw_https_connected(void);
void claw_https_disconnect(void);
bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out);

#if !BENTOCLAW_PORT_FIRMWARE
/* For the unix port's test hooks (modbentoclaw.c's): the UI panel's log, the
 * messages since the last call as [(type, text)], emptied (_ui_events()); the
 * test clock (_clock()): while fixed, claw_port_time_s() reports
 * bentoclaw_clock_s; a new VM goes back to the real clock. */
#include "py/obj.h"
mp_obj_t bentoclaw_ui_events(void);
extern bool bentoclaw_clock_fixed;
extern uint32_t bentoclaw_clock_s;
void bentoclaw_clock_set(size_t n_args, const mp_obj_t *args); // _clock()'s s, None: the real clock
#endif

#endif /* BENTOCLAW_CLAW_TRANSPORT_H */
