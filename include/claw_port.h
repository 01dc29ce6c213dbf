/*
 * claw_port.h — what the bentoclaw core needs from its host.
 *
 * The Rust core never touches a file system or a clock itself. It calls these
 * functions, which the host implements: on MicroPython the VFS bridge in
 * mpy/claw_port_vfs.c (MicroPython's own open()/VFS, so LittleFS, FAT and the
 * unix VFS all work), in the C tests a POSIX implementation with a
 * controllable clock. The Rust declarations are generated from this header by
 * bindgen (build.rs).
 *
 * Contract for every function below:
 *  - It returns normally: it never longjmps, throws or unwinds into the caller
 *    (a MicroPython exception is caught inside it and becomes -errno).
 *  - Negative return values are -errno (e.g. -2 ENOENT, -5 EIO, -28 ENOSPC).
 *  - claw_port_on_vm_task() and claw_port_ticks_ms() may be called from any
 *    task (and ISR); every other function only from the MicroPython task.
 *    The core asks claw_port_on_vm_task() at the start of every claw_* call
 *    and, off that task, calls no other function of this header but the
 *    clock (it answers from RAM or fails: include/claw_session.h says which).
 *  - At most CLAW_PORT_MAX_FILES files are open at any one time.
 *  - A file descriptor is a small integer in 0..CLAW_PORT_MAX_FILES-1.
 *  - After a failed claw_port_write() the core only ever closes that file:
 *    it never writes or syncs through it again (littlefs can report success
 *    for a second sync on a failed handle and write nothing).
 */
#ifndef CLAW_PORT_H
#define CLAW_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How many files the core may have open at once. */
#define CLAW_PORT_MAX_FILES 3

/** claw_port_open() modes. */
#define CLAW_PORT_MODE_READ 0u   /* "rb": must exist */
#define CLAW_PORT_MODE_WRITE 1u  /* "wb": create or truncate */
#define CLAW_PORT_MODE_APPEND 2u /* "ab": create, write at the end */

/** Monotonic millisecond tick; wraps every 2^32 ms (49.7 days). Callable
 *  from any task. */
uint32_t claw_port_ticks_ms(void);

/** Whether the caller runs on the MicroPython task, the one task that may
 *  reach the file functions below (and the agent's ports): the VFS, Python
 *  code, the GC heap. Cheap, never blocks, callable from any task or ISR;
 *  the answer for a task never changes. The VFS bridge compares the FreeRTOS
 *  task handle (and the thread mode), or the thread on the unix port. */
bool claw_port_on_vm_task(void);

/** Open `path` (NUL-terminated) with one of the CLAW_PORT_MODE_* modes.
 *  Returns a descriptor >= 0, or -errno. */
int32_t claw_port_open(const char *path, uint8_t mode);

/** Read up to `len` bytes into `buf`. Returns bytes read (0 = end of file),
 *  or -errno. */
int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len);

/** Write all `len` bytes of `buf`. Returns `len`, or -errno when not all of
 *  it could be written (the file content is then unspecified). */
int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len);

/** Flush and close. Returns 0 when everything written through `fd` is
 *  committed to the file system, or -errno. The descriptor is released in
 *  both cases. */
int32_t claw_port_close(int32_t fd);

/** Delete a file. Returns 0, or -errno (-ENOENT when it does not exist). */
int32_t claw_port_remove(const char *path);

/** Rename `from` to `to`, atomically replacing `to` when it exists
 *  (littlefs and POSIX do this). Returns 0, or -errno. */
int32_t claw_port_rename(const char *from, const char *to);

/** 1 when a file on `path`'s file system, opened with CLAW_PORT_MODE_WRITE
 *  and closed, replaces its old content atomically: a power cut or a failed
 *  write leaves the old content or the new (littlefs commits a file at
 *  close). 0 otherwise (FAT, a host or a Python file system, unknown): the
 *  core then writes a temporary file and renames it. A wrong 1 can lose data;
 *  a 0 costs only flash writes. */
uint8_t claw_port_atomic_write(const char *path);

/* --------------------------------------------------------------------------
 * The agent's ports (feature `agent`: the MicroPython module's build). The
 * same contract as above: they return normally and never raise; the host
 * catches every exception of its own and reports it as a code.
 */

/** claw_port_tool() argument kinds. */
#define CLAW_PORT_ARG_NONE 0u   /* no argument (None) */
#define CLAW_PORT_ARG_TEXT 1u   /* `arg`/`arg_len`: UTF-8 text, no NUL */
#define CLAW_PORT_ARG_CALLER 2u /* the caller's own argument, kept in `ctx` */

/** claw_port_tool() results. */
#define CLAW_PORT_TOOL_RETURNED 0u /* it returned; `out` holds its text */
#define CLAW_PORT_TOOL_RAISED 1u   /* it raised an Exception; `out` holds its text */
#define CLAW_PORT_TOOL_ABORT 2u    /* a KeyboardInterrupt/SystemExit is pending: stop */

/** Runs the registered host tool in `slot` (its handler) with its argument.
 *  `ctx` is the pointer the host handed to the claw_* call that is running
 *  (so it can find the caller's own argument and keep the result object and
 *  any exception). The text of the result (or of the exception) goes to
 *  out[0..out_max): at most out_max bytes, *out_len set. Any bytes: the
 *  core makes the text valid UTF-8. The tool may call back into the
 *  library: the core holds no state borrowed across this call. */
uint8_t claw_port_tool(void *ctx, uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t arg_len,
    uint8_t *out, size_t out_max, size_t *out_len);

/** POSTs body[0..body_len) (a JSON request) to the backend; on a 200
 *  answer copies its body to reply[0..reply_max) and returns its length.
 *  Any failure — not connected, refused, timeout, non-200 — returns -1;
 *  a body longer than reply_max returns -2 where the transport can tell
 *  (else -1). */
int32_t claw_port_post(const uint8_t *body, size_t body_len, uint8_t *reply, size_t reply_max);

/** Connects the transport to `host`:`port` with `api_key` (NUL-terminated,
 *  printable ASCII, checked by the core); true when the backend is
 *  reachable. */
bool claw_port_connect(const char *host, uint16_t port, const char *api_key);

/** Drops the connection (idempotent). */
void claw_port_disconnect(void);

/** Whether a connect succeeded and no disconnect followed. */
bool claw_port_connected(void);

/** Token counts the backend reported with the last answered post (0: not
 *  reported). */
void claw_port_tokens(uint32_t *tokens_in, uint32_t *tokens_out);

/** Wall-clock seconds since 1970, 0 when the clock is not set. */
uint32_t claw_port_time_s(void);

/** Brings the UI link up (idempotent). */
void claw_port_ui_init(void);

/** One UI event (CLAW_PORT_UI_*) with len bytes of UTF-8 text; dropped
 *  when the link is down. */
void claw_port_ui(uint8_t event, const uint8_t *text, size_t len);

/** UI events: the vendor's CLAW_UI_* message types (0..6, what the CM55
 *  panel shows), then the library's own (7 and up; the vendor's panel
 *  ignores them). */
#define CLAW_PORT_UI_STATUS 0u
#define CLAW_PORT_UI_LAST_CMD 1u
#define CLAW_PORT_UI_LAST_RESULT 2u
#define CLAW_PORT_UI_PROGRESS 3u
#define CLAW_PORT_UI_ERROR 4u
#define CLAW_PORT_UI_CLEAR 5u
#define CLAW_PORT_UI_STATS 6u
#define CLAW_PORT_UI_CHAT_USER 7u
#define CLAW_PORT_UI_CHAT_ASSISTANT 8u
#define CLAW_PORT_UI_TOOL 9u
#define CLAW_PORT_UI_LED 10u

/** Keeps a copy of `arg[0..len)` (CLAW_PORT_ARG_TEXT) or of no argument
 *  (CLAW_PORT_ARG_NONE) for the tool call the core holds in `slot` until the
 *  person at the device confirms it: the host hands it back to
 *  claw_confirm(). Replaces any copy kept before. False when it cannot keep
 *  it (the call is refused then). */
bool claw_port_confirm_hold(uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t len);

/** The description of the host's tool in `slot` (a Python tool's, which
 *  the host holds) into out[0..out_max): at most out_max bytes of UTF-8;
 *  returns the length (0: none). */
size_t claw_port_tool_desc(uint8_t slot, uint8_t *out, size_t out_max);

/** One TACP v2 answer to the USB host (docs/TACP.md): `sub` is the request's
 *  sub-command (0xFF for an error), payload[0..len) at most 3072 bytes. The
 *  host frames it with the request's sequence number and sends it: in the
 *  BENTO firmware through the vendor's tacp_claw_respond(), elsewhere through
 *  the library's framer (claw_tacp_frame). Called during claw_tacp_dispatch
 *  and claw_tacp_ready only. */
void claw_port_tacp_respond(uint8_t sub, const uint8_t *payload, size_t len);

/** Whether a KeyboardInterrupt/SystemExit raised inside a port callback is
 *  waiting to be raised: the core then stops what it is doing and returns. */
bool claw_port_aborted(void);

#ifdef __cplusplus
}
#endif

#endif /* CLAW_PORT_H */
