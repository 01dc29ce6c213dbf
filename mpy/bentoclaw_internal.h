/*
 * bentoclaw_internal.h — what the parts of the `bentoclaw` module share.
 *
 * Not a public API: modbentoclaw.c (the module, the tool registry, the
 * gates), bentoclaw_tacp.c (the TACP line protocol of the USB host) and
 * bentoclaw_toolcall.c (tool requests from the backend) include it.
 *
 * There is ONE gated tool call, bentoclaw_tool_call(): tool(), TACP's TOOL
 * and a backend tool request all go through it, so the gate order (breaker ->
 * trust -> rate check -> rate record, SPEC.md §3), the error counting and
 * the breaker accounting of a failing tool exist once.
 */
#ifndef BENTOCLAW_INTERNAL_H
#define BENTOCLAW_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"

/* Per-request limits (bytes; heap for one ask(), never static RAM). */
#ifndef BENTOCLAW_CONTEXT_MAX
// Ten full turns (10 x 255 bytes plus role tags) and a good part of the
// memory store fit; when they do not, the core keeps the newest turns.
#define BENTOCLAW_CONTEXT_MAX (4096)
#endif
#ifndef BENTOCLAW_REPLY_MAX
#define BENTOCLAW_REPLY_MAX (4096)    // a longer reply is a failed request
#endif

// Exact refusal texts (SPEC.md §3; the breaker text holds an em dash).
#define BENTOCLAW_TEXT_BREAKER_OPEN "circuit breaker open \xe2\x80\x94 cooldown active"
#define BENTOCLAW_TEXT_TRUST "tool risk exceeds transport trust level"
#define BENTOCLAW_TEXT_RATE "rate limit exceeded for this tool"

typedef enum {
    BENTOCLAW_GATE_OK = 0,  // all gates passed and the tool returned
    BENTOCLAW_GATE_BREAKER, // claw_cb_allow() refused
    BENTOCLAW_GATE_TRUST,   // claw_trust_allows(risk) refused
    BENTOCLAW_GATE_RATE,    // claw_rate_check(name) refused
} bentoclaw_gate_t;

// `trust` argument of bentoclaw_tool_call(): use the level as it is.
#define BENTOCLAW_TRUST_CURRENT (-1)

// Once per soft reset; every entry point calls it first.
void bentoclaw_ensure_init(void);

// Index of the registry entry called name[0..len), or -1.
int bentoclaw_tool_find(const char *name, size_t len);

// The gated call of registry entry `idx` (from bentoclaw_tool_find()).
// With `trust` >= 0 the call runs at that claw_trust_level_t: the level is
// saved, set, and restored on every way out (also when the tool raises),
// unless connect()/disconnect() ran inside the call and set the level
// themselves. The registry's risk is checked by claw_trust_allows() as for
// every call — never bypassed.
//  - A built-in's argument is checked first (TypeError, nothing counted).
//  - A refused gate: errors += 1 and its bentoclaw_gate_t is returned
//    (*result untouched, no quota used, not a breaker failure).
//  - The tool returns: breaker success, TOOL turn "<name>: <result>",
//    flush at the idle point, BENTOCLAW_GATE_OK and *result.
//  - The tool raises: an Exception is a breaker failure (errors += 1);
//    the exception propagates.
bentoclaw_gate_t bentoclaw_tool_call(size_t idx, mp_obj_t arg, int trust, mp_obj_t *result);

// The exact text of a refusal.
const char *bentoclaw_gate_text(bentoclaw_gate_t gate);

// Whether an exception object (nlr.ret_val) is an Exception, i.e. a failure
// of the work; KeyboardInterrupt/SystemExit pass through uncounted.
bool bentoclaw_exc_is_failure(void *exc);

// A TOOL turn (and UI message) "<name>: <note>: <text>", for tool requests
// that did not run (refused, unknown, bad argument).
void bentoclaw_tool_log_note(const char *name, size_t name_len, const char *note, const char *text);

// str(obj) appended to `out`, cut to at most `max` bytes on a character
// boundary (the repr of a large object never takes more heap than that).
// Returns true when it was cut.
bool bentoclaw_str_capped(vstr_t *out, mp_obj_t obj, size_t max);

// The text of an exception for a report: str(exc) cut to `max` bytes, or
// its type name when that is empty (or str() itself raises).
void bentoclaw_exc_text(vstr_t *out, void *exc, size_t max);

// JSON string escaping (no quotes added); out == NULL: length only.
size_t bentoclaw_json_escape(char *out, const char *in, size_t len);

// Well-formed UTF-8 (RFC 3629) check.
bool bentoclaw_utf8_valid(const char *s, size_t len);

// The Python-level calls TACP answers with.
mp_obj_t bentoclaw_status(void);
mp_obj_t bentoclaw_safety(void);
mp_obj_t bentoclaw_session_clear(void);

// bentoclaw.tacp(line) -> str (bentoclaw_tacp.c).
extern const mp_obj_fun_builtin_fixed_t bentoclaw_tacp_obj;

// Memory search, pins and MEMORY.md export/import (bentoclaw_memory.c).
extern const mp_obj_fun_builtin_var_t bentoclaw_search_obj;
extern const mp_obj_fun_builtin_fixed_t bentoclaw_forget_obj;
extern const mp_obj_fun_builtin_var_t bentoclaw_pin_obj;
extern const mp_obj_fun_builtin_fixed_t bentoclaw_export_memory_obj;
extern const mp_obj_fun_builtin_var_t bentoclaw_import_memory_obj;

/* ---------------------------------------------------------------------------
 * Tool requests from the backend (bentoclaw_toolcall.c, docs/BACKEND.md)
 */

// At most this many tool requests are run per ask(); a reply that asks for
// one more ends the ask() with RuntimeError("tool round limit reached").
#ifndef BENTOCLAW_TOOL_ROUNDS_MAX
#define BENTOCLAW_TOOL_ROUNDS_MAX (3)
#endif
// The result sent back to the backend is str(result) cut to this many bytes
// (on a character boundary) before JSON escaping.
#ifndef BENTOCLAW_TOOL_RESULT_MAX
#define BENTOCLAW_TOOL_RESULT_MAX (1024)
#endif

// A parsed tool request. name/arg point into the reply buffer, which the
// parser decodes in place (JSON escapes only ever shrink).
typedef struct _bentoclaw_toolcall_t {
    const char *name;
    size_t name_len;
    const char *arg; // NULL: no argument (absent or null)
    size_t arg_len;
} bentoclaw_toolcall_t;

// What goes back to the backend in "tool_result".
typedef struct _bentoclaw_tool_result_t {
    const char *name;
    size_t name_len;
    const char *status; // "ok", "refused", "error", "unknown"
    vstr_t result;
} bentoclaw_tool_result_t;

// true when reply[0..len) is exactly a tool request (docs/BACKEND.md);
// then `reply` has been decoded in place and `tc` points into it. false:
// the reply is reply text and `reply` is unchanged.
bool bentoclaw_toolcall_parse(char *reply, size_t len, bentoclaw_toolcall_t *tc);

// Run a tool request from the backend at HTTPS trust (never above the
// current level) and fill `out` (out->result is initialised here; the
// caller clears it). Only a KeyboardInterrupt/SystemExit raises.
void bentoclaw_toolcall_run(const bentoclaw_toolcall_t *tc, bentoclaw_tool_result_t *out);

/* ---------------------------------------------------------------------------
 * Sessions that last (bentoclaw_sessions.c, docs/SESSIONS.md): accounting,
 * compaction, /new /reset /compact, idle and daily resets, config(),
 * archive(), session().
 */

// The settings of config(), loaded from /.bentoclaw_config at first use
// after a soft reset.
typedef struct _bentoclaw_config_t {
    uint32_t idle_timeout_s;       // 0 = off
    uint16_t context_budget;       // bytes of context at most
    uint8_t compact_threshold_pct; // of context_budget
    uint8_t compact_min_msgs;      // turns (the summary not counted)
    uint8_t compact_keep;          // newest turns a compaction keeps
    int8_t daily_reset_hour;       // 0..23, -1 = off
    bool auto_compact;
} bentoclaw_config_t;

const bentoclaw_config_t *bentoclaw_config(void);

// A new VM: the config is read again at its next use.
void bentoclaw_sessions_vm_reset(void);

// Seconds since 1970 from the RTC, or 0 when it is not set (before
// 2024-01-01).
uint32_t bentoclaw_rtc_now(void);

// Count one answered POST into the session's statistics (bytes of the
// request body and of the reply, the context bytes it carried, the token
// counts the transport saw).
void bentoclaw_account(size_t body_len, size_t reply_len, size_t ctx_len);
// A backend request failed (no accounting; the next compaction uses the
// local digest instead of asking that backend for a summary).
void bentoclaw_request_failed(void);

// ask()'s commands: the reply str for "/new", "/reset", "/compact", or
// MP_OBJ_NULL when the prompt is a question for the backend.
mp_obj_t bentoclaw_ask_command(const char *prompt, size_t len);

// Before the USER turn of an admitted ask() is added: the idle/daily reset,
// then automatic compaction (a summary request to the backend, with
// `reply` as its buffer of BENTOCLAW_REPLY_MAX + 1 bytes). Returns false
// when a failed summary request left the breaker refusing: the ask() must
// stop there. Only a KeyboardInterrupt/SystemExit raises.
bool bentoclaw_ask_prepare(char *reply);

// Before a tool request of an ask() adds its TOOL turn: a local compaction
// when the ring has no room for it and the reply, keeping at least the
// `turns_this_ask` newest turns (the USER turn and its TOOL turns).
void bentoclaw_ask_before_tool_turn(uint16_t turns_this_ask);

// A failed summary request: errors += 1, a breaker failure, the UI told.
void bentoclaw_summary_failed(void);
void bentoclaw_set_last_result(const char *text);

extern const mp_obj_fun_builtin_var_t bentoclaw_config_obj;
extern const mp_obj_fun_builtin_var_t bentoclaw_archive_obj;
extern const mp_obj_fun_builtin_fixed_t bentoclaw_session_obj;
#if !BENTOCLAW_PORT_FIRMWARE
extern const mp_obj_fun_builtin_var_t bentoclaw__clock_obj;
#endif

#endif /* BENTOCLAW_INTERNAL_H */
