/*
 * modbentoclaw.c — the MicroPython module `bentoclaw`.
 *
 * A thin binding over the Rust core (libbento_mpy.a: include/claw_session.h,
 * include/claw_safety.h). The core never raises: it returns a status, and
 * only this file turns that into a Python exception, after the core call has
 * returned — a longjmp must never cross a Rust frame.
 *
 * The backend transport and the UI panel are reached through the port layer
 * in claw_transport.h (vendor HTTPS/IPC on the firmware, HTTP on loopback
 * and an event log on the unix port). File I/O of the core goes through
 * claw_port_vfs.c.
 *
 * Rules this file keeps (SPEC.md §3, §6):
 *  - every entry point calls bentoclaw_ensure_init() first, which runs the
 *    three core _init functions once per soft reset;
 *  - a tool call passes the gates in the fixed order breaker -> trust ->
 *    rate check, and only then records the call; each refusal increments
 *    s_error_count and raises RuntimeError with the seed's exact text;
 *    tool(), TACP's TOOL (bentoclaw_tacp.c, USB trust) and tool requests
 *    from the backend (bentoclaw_toolcall.c, HTTPS trust) all go through the
 *    one gated call, bentoclaw_tool_call(), which borrows a trust level only
 *    through claw_trust_set() and restores it on every way out;
 *  - trust goes to HTTPS before connecting and back to USB on every way out;
 *  - Python objects (tool handlers) live in root pointers, never in Rust.
 */
#include <stdio.h>
#include <string.h>

#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/nlr.h"
#include "py/obj.h"
#include "py/objstr.h"
#include "py/runtime.h"
#include "py/unicode.h"

#include "claw_port.h"
#include "claw_port_vfs.h"
#include "claw_safety.h"
#include "claw_session.h"
#include "claw_ext.h"
#include "claw_transport.h"
#include "bentoclaw_internal.h"

/* Per-request limits. The buffers are taken from the GC heap for the
 * duration of one ask() (never from static RAM), so these bound the heap a
 * request may use, not the module's static footprint. */
#ifndef BENTOCLAW_PROMPT_MAX
#define BENTOCLAW_PROMPT_MAX (1024)   // bytes of UTF-8 in one prompt
#endif
// BENTOCLAW_CONTEXT_MAX and BENTOCLAW_REPLY_MAX: bentoclaw_internal.h.

#define BENTOCLAW_RISK_MAX (2)

// The built-in tools occupy the first registry slots; Python tools the rest.
#define BENTOCLAW_BUILTIN_TOOLS (4)
#define BENTOCLAW_PY_TOOLS_MAX (CLAW_RATE_MAX_TOOLS - BENTOCLAW_BUILTIN_TOOLS)

// Literal size: the generated root-pointer header cannot see claw_safety.h.
#if CLAW_RATE_MAX_TOOLS - BENTOCLAW_BUILTIN_TOOLS != 12
#error "update the size of bentoclaw_tool_handlers"
#endif
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_tool_handlers[12]);

// Core texts shared with the firmware's UI and the seeds (exact wording).
#define TEXT_CONNECTED "Connected to TESAIoT backend"
#define TEXT_DISCONNECTED "Disconnected from backend"

typedef enum {
    BENTOCLAW_STATE_OFFLINE,
    BENTOCLAW_STATE_CONNECTING,
    BENTOCLAW_STATE_IDLE,
    BENTOCLAW_STATE_BUSY,
    BENTOCLAW_STATE_ERROR,
} bentoclaw_state_t;

static const char *const bentoclaw_state_names[] = {
    "offline", "connecting", "idle", "busy", "error",
};

typedef enum {
    TOOL_KIND_PYTHON,
    TOOL_KIND_ECHO,
    TOOL_KIND_UPTIME,
    TOOL_KIND_LED,
    TOOL_KIND_WIPE_MEMORY,
} bentoclaw_tool_kind_t;

typedef struct _bentoclaw_tool_t {
    char name[CLAW_RATE_NAME_MAX];
    uint8_t risk;          // 0 low, 1 medium, 2 high: the trust gate reads it
    uint8_t kind;          // bentoclaw_tool_kind_t
    uint16_t rate_per_min; // 0 = the core's default limit
} bentoclaw_tool_t;

// Built-in tools live in flash; their rate limits are installed by
// bentoclaw_ensure_init() like every other registry entry.
static const bentoclaw_tool_t bentoclaw_builtin_tools[BENTOCLAW_BUILTIN_TOOLS] = {
    { "echo", 0, TOOL_KIND_ECHO, 0 },
    { "uptime", 0, TOOL_KIND_UPTIME, 0 },
    { "led", 1, TOOL_KIND_LED, 0 },
    // Destroys what the user asked the device to remember: USB only, and
    // at most twice a minute even there.
    { "wipe_memory", 2, TOOL_KIND_WIPE_MEMORY, 2 },
};

static bentoclaw_tool_t s_py_tools[BENTOCLAW_PY_TOOLS_MAX];
static size_t s_py_tool_count;

static bool s_module_inited;
static uint8_t s_agent_state = BENTOCLAW_STATE_OFFLINE;
static uint32_t s_error_count;
// Bumped by connect()/disconnect(): a tool call that runs at a borrowed
// trust level (TACP) restores the saved level only when neither ran inside.
static uint32_t s_trust_epoch;
static bool s_led_on; // the simulated LED of the "led" tool
static char s_last_result[48];

#define TOOL_HANDLER(i) (MP_STATE_VM(bentoclaw_tool_handlers)[(i)])

extern const mp_obj_module_t mp_module_bentoclaw;

/* ---------------------------------------------------------------------------
 * Initialisation, once per soft reset
 */

// C statics and root pointers survive a soft reset; the Python heap does
// not. The loaded-modules dict is created afresh by every mp_init(), so a
// marker stored in it (keyed by this module object, which no import can
// produce) tells a new VM from the current one.
static void bentoclaw_vm_check(void) {
    mp_obj_t marker = MP_OBJ_FROM_PTR(&mp_module_bentoclaw);
    mp_map_t *loaded = &MP_STATE_VM(mp_loaded_modules_dict).map;
    if (mp_map_lookup(loaded, marker, MP_MAP_LOOKUP) != NULL) {
        return;
    }
    // A new VM: the handlers and open files of the previous one point into
    // a heap that has been reset. Drop them before anything can use them.
    for (size_t i = 0; i < BENTOCLAW_PY_TOOLS_MAX; i++) {
        TOOL_HANDLER(i) = MP_OBJ_NULL;
    }
    memset(s_py_tools, 0, sizeof(s_py_tools));
    s_py_tool_count = 0;
    claw_port_vfs_reset();
    bentoclaw_sessions_vm_reset();
    s_module_inited = false;
    s_error_count = 0;
    s_last_result[0] = '\0';
    s_agent_state = claw_https_connected() ? BENTOCLAW_STATE_IDLE : BENTOCLAW_STATE_OFFLINE;
    mp_obj_dict_store(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_loaded_modules_dict)), marker, mp_const_true);
}

static const bentoclaw_tool_t *bentoclaw_tool_at(size_t i) {
    if (i < BENTOCLAW_BUILTIN_TOOLS) {
        return &bentoclaw_builtin_tools[i];
    }
    return &s_py_tools[i - BENTOCLAW_BUILTIN_TOOLS];
}

static size_t bentoclaw_tool_count(void) {
    return BENTOCLAW_BUILTIN_TOOLS + s_py_tool_count;
}

void bentoclaw_ensure_init(void) {
    // Python code that runs inside a core call (a block device written in
    // Python, reached through the VFS bridge) must not re-enter the core:
    // its state is in the middle of an update. The exception lands in the
    // port callback and becomes an I/O error for that file operation.
    if (claw_port_vfs_busy()) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("bentoclaw called from inside a file operation"));
    }
    #if !MICROPY_MODULE_BUILTIN_INIT
    // No module __init__ on this port: check for a new VM on every entry
    // (one dict lookup).
    bentoclaw_vm_check();
    #endif
    if (s_module_inited) {
        return;
    }
    claw_rate_init();
    claw_cb_init();
    claw_session_init();

    /* Set per-tool rate limits from registry */
    for (size_t i = 0; i < bentoclaw_tool_count(); i++) {
        const bentoclaw_tool_t *t = bentoclaw_tool_at(i);
        if (t->rate_per_min > 0) {
            claw_rate_set(t->name, t->rate_per_min);
        }
    }

    s_module_inited = true;
}

static mp_obj_t bentoclaw___init__(void) {
    bentoclaw_vm_check();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw___init___obj, bentoclaw___init__);

/* ---------------------------------------------------------------------------
 * Argument helpers: every string handed to the core is a NUL-terminated C
 * string, so a str with an embedded NUL would be silently cut — refuse it.
 */

// Length of the well-formed UTF-8 sequence at in[0..avail) (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0. MicroPython's
// own utf8_check() only counts continuation bytes: it lets "\xc0\x80" (an
// overlong NUL), "\xed\xa0\x80" (a surrogate) and "\xf4\x90\x80\x80" through,
// and a str holding them can be made from bytes. The core refuses such text,
// so it must be caught here, where the caller can be told.
static size_t bentoclaw_utf8_seq(const uint8_t *in, size_t avail) {
    uint8_t c = in[0];
    if (c < 0x80) {
        return 1;
    }
    size_t seq;
    uint8_t lo = 0x80, hi = 0xbf; // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
        seq = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        seq = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        seq = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (seq > avail || in[1] < lo || in[1] > hi) {
        return 0;
    }
    for (size_t k = 2; k < seq; k++) {
        if ((in[k] & 0xc0) != 0x80) {
            return 0;
        }
    }
    return seq;
}

bool bentoclaw_utf8_valid(const char *s, size_t len) {
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        size_t seq = bentoclaw_utf8_seq(p + i, len - i);
        if (seq == 0) {
            return false;
        }
        i += seq;
    }
    return true;
}

static const char *bentoclaw_get_str(mp_obj_t obj, size_t *len, qstr what) {
    if (!mp_obj_is_str(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be str"), what);
    }
    // MicroPython str data is always NUL-terminated after its length.
    const char *s = mp_obj_str_get_data(obj, len);
    if (memchr(s, '\0', *len) != NULL) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must not contain NUL"), what);
    }
    if (!bentoclaw_utf8_valid(s, *len)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must be valid UTF-8"), what);
    }
    return s;
}

static const char *bentoclaw_get_key(mp_obj_t obj) {
    size_t len;
    const char *key = bentoclaw_get_str(obj, &len, MP_QSTR_key);
    if (len == 0 || len >= CLAW_MEM_KEY_MAX) {
        mp_raise_ValueError(MP_ERROR_TEXT("key must be 1..31 bytes (CLAW_MEM_KEY_MAX)"));
    }
    return key;
}

static const char *bentoclaw_get_tool_name(mp_obj_t obj, size_t *len) {
    const char *name = bentoclaw_get_str(obj, len, MP_QSTR_name);
    if (*len == 0 || *len >= CLAW_RATE_NAME_MAX) {
        mp_raise_ValueError(MP_ERROR_TEXT("tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)"));
    }
    return name;
}

// Printable ASCII only: these strings end up in HTTP header lines, where a
// CR or LF would let the caller inject headers.
static const char *bentoclaw_get_header_str(mp_obj_t obj, qstr what, size_t min_len, size_t max_len) {
    size_t len;
    const char *s = bentoclaw_get_str(obj, &len, what);
    bool ok = len >= min_len && len <= max_len;
    for (size_t i = 0; ok && i < len; i++) {
        ok = s[i] > 0x20 && s[i] < 0x7f;
    }
    if (!ok) {
        mp_raise_msg_varg(&mp_type_ValueError,
            MP_ERROR_TEXT("%q must be %u..%u bytes of printable ASCII"),
            what, (unsigned)min_len, (unsigned)max_len);
    }
    return s;
}

static mp_int_t bentoclaw_get_int_in(mp_obj_t obj, qstr what, mp_int_t lo, mp_int_t hi) {
    if (!mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be int"), what);
    }
    // A big int is out of every range here; converting it would raise
    // OverflowError instead of the ValueError callers expect.
    mp_int_t v = mp_obj_is_small_int(obj) ? MP_OBJ_SMALL_INT_VALUE(obj) : lo - 1;
    if (v < lo || v > hi) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must be %d..%d"), what, (int)lo, (int)hi);
    }
    return v;
}

/* ---------------------------------------------------------------------------
 * Small helpers
 */

// The seed's breaker text contains an em dash, and MP_ERROR_TEXT cannot
// carry it (the ROM text compressor takes ASCII only). A static str object
// keeps the exact text without a heap copy; it is not const because the
// exception machinery caches the string's hash in it (objexcept.c).
#define TEXT_BREAKER_OPEN BENTOCLAW_TEXT_BREAKER_OPEN
static mp_obj_str_t bentoclaw_breaker_open_str = {
    { &mp_type_str }, 0, sizeof(TEXT_BREAKER_OPEN) - 1, (const byte *)TEXT_BREAKER_OPEN
};

static NORETURN void bentoclaw_raise_breaker_open(void) {
    nlr_raise(mp_obj_new_exception_arg1(&mp_type_RuntimeError, MP_OBJ_FROM_PTR(&bentoclaw_breaker_open_str)));
}

void bentoclaw_set_last_result(const char *text) {
    size_t len = strlen(text);
    if (len >= sizeof(s_last_result)) {
        len = sizeof(s_last_result) - 1;
    }
    memcpy(s_last_result, text, len);
    s_last_result[len] = '\0';
    claw_ipc_send_ui(CLAW_UI_LAST_RESULT, s_last_result, len);
}

// The idle point after an exchange: one flash write for the whole exchange
// rather than one per message. A failed flush leaves the ring dirty and the
// next idle point (or flush()) retries; nothing is lost from RAM.
static void bentoclaw_flush_if_dirty(void) {
    if (claw_session_dirty()) {
        (void)claw_session_flush();
    }
}

// Only failures of the work itself count against the breaker; a Ctrl-C or
// sys.exit() passing through is not the tool's or the backend's fault.
bool bentoclaw_exc_is_failure(void *exc) {
    mp_obj_t type = MP_OBJ_FROM_PTR(((mp_obj_base_t *)exc)->type);
    return mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_Exception));
}

// JSON string escaping of UTF-8 text. Characters are kept as UTF-8 (the
// backend wants readable Thai, not \u escapes); quotes, backslashes and
// control characters are escaped; a byte that is not part of a valid UTF-8
// sequence becomes U+FFFD so the body is always valid JSON in valid UTF-8.
// With out == NULL only the length is computed.
size_t bentoclaw_json_escape(char *out, const char *in_str, size_t len) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *in = (const uint8_t *)in_str;
    size_t n = 0;
    size_t i = 0;
    while (i < len) {
        uint8_t c = in[i];
        char esc = 0;
        switch (c) {
            case '"':
                esc = '"';
                break;
            case '\\':
                esc = '\\';
                break;
            case '\b':
                esc = 'b';
                break;
            case '\f':
                esc = 'f';
                break;
            case '\n':
                esc = 'n';
                break;
            case '\r':
                esc = 'r';
                break;
            case '\t':
                esc = 't';
                break;
            default:
                break;
        }
        if (esc != 0) {
            if (out != NULL) {
                out[n] = '\\';
                out[n + 1] = esc;
            }
            n += 2;
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            if (out != NULL) {
                memcpy(out + n, "\\u00", 4);
                out[n + 4] = hex[c >> 4];
                out[n + 5] = hex[c & 0xf];
            }
            n += 6;
            i++;
        } else if (c < 0x80) {
            if (out != NULL) {
                out[n] = (char)c;
            }
            n++;
            i++;
        } else {
            // Length of the well-formed sequence here (0: invalid).
            size_t seq = bentoclaw_utf8_seq(in + i, len - i);
            if (seq == 0) {
                if (out != NULL) {
                    memcpy(out + n, "\\ufffd", 6);
                }
                n += 6;
                i++;
            } else {
                if (out != NULL) {
                    memcpy(out + n, in + i, seq);
                }
                n += seq;
                i += seq;
            }
        }
    }
    return n;
}

/* ---------------------------------------------------------------------------
 * connect / disconnect
 */

static mp_obj_t bentoclaw_connect(mp_obj_t host_in, mp_obj_t port_in, mp_obj_t key_in) {
    bentoclaw_ensure_init();
    const char *host = bentoclaw_get_header_str(host_in, MP_QSTR_host, 1, BENTOCLAW_HOST_MAX - 1);
    uint16_t port = (uint16_t)bentoclaw_get_int_in(port_in, MP_QSTR_port, 1, 65535);
    const char *api_key = bentoclaw_get_header_str(key_in, MP_QSTR_api_key, 1, BENTOCLAW_API_KEY_MAX - 1);

    claw_ipc_init();
    claw_ipc_send_ui(CLAW_UI_STATUS_TEXT, "Connecting...", 13);
    // Raise trust before connecting so it is already right when the first
    // tool call arrives; every way out of a failed connect lowers it again.
    claw_trust_set(CLAW_TRUST_HTTPS);
    s_trust_epoch++;
    s_agent_state = BENTOCLAW_STATE_CONNECTING;

    bool ok = claw_https_connect(host, port, api_key);

    if (ok) {
        s_agent_state = BENTOCLAW_STATE_IDLE;
        claw_ipc_send_ui(CLAW_UI_STATUS_TEXT, "Online (HTTPS)", 14);
        claw_session_add(CLAW_ROLE_SYSTEM, TEXT_CONNECTED);
    } else {
        s_agent_state = BENTOCLAW_STATE_OFFLINE;
        s_error_count++;
        claw_ipc_send_ui(CLAW_UI_STATUS_TEXT, "Connect failed", 14);
        claw_trust_set(CLAW_TRUST_USB);
    }
    return mp_obj_new_bool(ok);
}
static MP_DEFINE_CONST_FUN_OBJ_3(bentoclaw_connect_obj, bentoclaw_connect);

static mp_obj_t bentoclaw_disconnect(void) {
    bentoclaw_ensure_init();
    claw_https_disconnect();
    claw_trust_set(CLAW_TRUST_USB);
    s_trust_epoch++;
    s_agent_state = BENTOCLAW_STATE_OFFLINE;
    if (claw_ipc_initialized) {
        claw_ipc_send_ui(CLAW_UI_STATUS_TEXT, "Offline", 7);
    }
    claw_session_add(CLAW_ROLE_SYSTEM, TEXT_DISCONNECTED);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_disconnect_obj, bentoclaw_disconnect);

/* ---------------------------------------------------------------------------
 * ask
 */

// The failure side of an exchange, before the raise (seed order: count,
// tell the breaker, tell the UI).
static void bentoclaw_ask_failed(void) {
    s_agent_state = BENTOCLAW_STATE_ERROR;
    s_error_count++;
    claw_cb_failure();
    claw_ipc_send_ui(CLAW_UI_ERROR, "Backend error", 13);
    bentoclaw_set_last_result("error");
}

// A summary request (before a compaction) that failed: counted like any
// failed backend request — errors, a breaker failure, the UI told — but the
// compaction goes on with the local digest and the state is left alone.
void bentoclaw_summary_failed(void) {
    s_error_count++;
    claw_cb_failure();
    claw_ipc_send_ui(CLAW_UI_ERROR, "Summary failed", 14);
    bentoclaw_set_last_result("summary failed");
}

// Build the request from the session and POST it. `ctx` holds
// BENTOCLAW_CONTEXT_MAX bytes, `reply` BENTOCLAW_REPLY_MAX + 1. `tr` is the
// result of the tool the last reply asked for (NULL on the first request):
// it goes out as "tool_result" (docs/BACKEND.md), every string JSON-escaped.
// Returns the reply length or -1. May raise MemoryError (the caller accounts
// for it).
static int bentoclaw_exchange(const char *prompt, size_t prompt_len, char *ctx, char *reply,
    const bentoclaw_tool_result_t *tr) {
    // config(context_budget=...) caps the context (at most the buffer).
    size_t budget = bentoclaw_config()->context_budget;
    if (budget > BENTOCLAW_CONTEXT_MAX) {
        budget = BENTOCLAW_CONTEXT_MAX;
    }
    size_t ctx_len = claw_session_build_context(ctx, budget);
    if (ctx_len >= budget) {
        ctx_len = 0; // the core broke its contract; send no context
    }
    static const char head[] = "{\"prompt\":\"";
    static const char mid[] = "\",\"context\":\"";
    static const char tr_name[] = "\",\"tool_result\":{\"name\":\"";
    static const char tr_status[] = "\",\"status\":\"";
    static const char tr_result[] = "\",\"result\":\"";
    static const char tr_tail[] = "\"}}";
    static const char tail[] = "\"}";
    size_t ep_len = bentoclaw_json_escape(NULL, prompt, prompt_len);
    size_t ec_len = bentoclaw_json_escape(NULL, ctx, ctx_len);
    size_t body_len = sizeof(head) - 1 + ep_len + sizeof(mid) - 1 + ec_len;
    size_t en_len = 0, es_len = 0, er_len = 0;
    if (tr != NULL) {
        en_len = bentoclaw_json_escape(NULL, tr->name, tr->name_len);
        es_len = bentoclaw_json_escape(NULL, tr->status, strlen(tr->status));
        er_len = bentoclaw_json_escape(NULL, tr->result.buf, tr->result.len);
        body_len += sizeof(tr_name) - 1 + en_len + sizeof(tr_status) - 1 + es_len
            + sizeof(tr_result) - 1 + er_len + sizeof(tr_tail) - 1;
    } else {
        body_len += sizeof(tail) - 1;
    }
    char *body = m_new(char, body_len);
    char *p = body;
    #define BODY_PUT(lit) do { memcpy(p, lit, sizeof(lit) - 1); p += sizeof(lit) - 1; } while (0)
    BODY_PUT(head);
    p += bentoclaw_json_escape(p, prompt, prompt_len);
    BODY_PUT(mid);
    p += bentoclaw_json_escape(p, ctx, ctx_len);
    if (tr != NULL) {
        BODY_PUT(tr_name);
        p += bentoclaw_json_escape(p, tr->name, tr->name_len);
        BODY_PUT(tr_status);
        p += bentoclaw_json_escape(p, tr->status, strlen(tr->status));
        BODY_PUT(tr_result);
        p += bentoclaw_json_escape(p, tr->result.buf, tr->result.len);
        BODY_PUT(tr_tail);
    } else {
        BODY_PUT(tail);
    }
    #undef BODY_PUT

    int resp_len = claw_https_post(body, body_len, reply, BENTOCLAW_REPLY_MAX);
    m_del(char, body, body_len);
    // An answered request counts into the session's statistics (a reply
    // that is not UTF-8 is a failed request and is not counted).
    if (resp_len >= 0 && bentoclaw_utf8_valid(reply, (size_t)resp_len)) {
        bentoclaw_account(body_len, (size_t)resp_len, ctx_len);
    } else {
        bentoclaw_request_failed();
    }
    return resp_len;
}

// The end of an ask() whose model kept asking for tools: the round limit.
// Counted like a failed request (errors, breaker failure), so a model that
// loops on every ask() opens the breaker after three of them.
static void bentoclaw_ask_round_limit(void) {
    s_agent_state = BENTOCLAW_STATE_ERROR;
    s_error_count++;
    claw_cb_failure();
    claw_ipc_send_ui(CLAW_UI_ERROR, "Tool round limit", 16);
    bentoclaw_set_last_result("tool round limit");
}

static mp_obj_t bentoclaw_ask(mp_obj_t prompt_in) {
    bentoclaw_ensure_init();
    size_t prompt_len;
    const char *prompt = bentoclaw_get_str(prompt_in, &prompt_len, MP_QSTR_prompt);
    if (prompt_len == 0 || prompt_len > BENTOCLAW_PROMPT_MAX) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("prompt must be 1..%d bytes"),
            BENTOCLAW_PROMPT_MAX);
    }
    // "/new", "/reset", "/compact": commands, no exchange (they work
    // offline and with the breaker open).
    mp_obj_t cmd = bentoclaw_ask_command(prompt, prompt_len);
    if (cmd != MP_OBJ_NULL) {
        return cmd;
    }
    if (!claw_https_connected()) {
        s_error_count++;
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("not connected: call connect() first"));
    }
    // Take the buffers before the breaker admits the call, so that running
    // out of heap cannot leave a half-open trial unreported.
    char *ctx = m_new(char, BENTOCLAW_CONTEXT_MAX);
    char *reply = m_new(char, BENTOCLAW_REPLY_MAX + 1);

    if (!claw_cb_allow()) {
        m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
        m_del(char, ctx, BENTOCLAW_CONTEXT_MAX);
        s_error_count++;
        bentoclaw_raise_breaker_open();
    }

    s_agent_state = BENTOCLAW_STATE_BUSY;
    // A due idle/daily reset, then automatic compaction (maybe a summary
    // request; only a KeyboardInterrupt/SystemExit escapes it).
    bool go_on = true;
    nlr_buf_t prep;
    if (nlr_push(&prep) == 0) {
        go_on = bentoclaw_ask_prepare(reply);
        nlr_pop();
    } else {
        s_agent_state = BENTOCLAW_STATE_IDLE;
        bentoclaw_flush_if_dirty();
        nlr_jump(prep.ret_val);
    }
    if (!go_on) {
        // The failed summary request opened the breaker: this ask() stops
        // like one the breaker refused (the compaction itself is kept).
        m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
        m_del(char, ctx, BENTOCLAW_CONTEXT_MAX);
        s_agent_state = BENTOCLAW_STATE_ERROR;
        s_error_count++;
        bentoclaw_flush_if_dirty();
        bentoclaw_raise_breaker_open();
    }
    claw_ipc_send_ui(CLAW_UI_CHAT_USER, prompt, prompt_len);
    /* Add user message to session */
    claw_session_add(CLAW_ROLE_USER, prompt);

    // One exchange per round: the first POST carries the prompt; when its
    // reply is a tool request (docs/BACKEND.md) the tool runs at HTTPS trust
    // and the next POST carries its result, at most BENTOCLAW_TOOL_ROUNDS_MAX
    // times. The breaker hears the first exchange's outcome (that report
    // ends a half-open trial), each tool's, and a follow-up exchange's
    // failure; a follow-up's success is not reported, so it cannot wipe out
    // the failure of the tool whose result it carried.
    bentoclaw_tool_result_t tr;
    bool have_tr = false;
    size_t rounds = 0;
    int resp_len;
    for (;;) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            resp_len = bentoclaw_exchange(prompt, prompt_len, ctx, reply, have_tr ? &tr : NULL);
            nlr_pop();
        } else {
            // Out of heap while building the body: a failed request like any
            // other, so the breaker hears about it.
            if (bentoclaw_exc_is_failure(nlr.ret_val)) {
                bentoclaw_ask_failed();
            } else {
                s_agent_state = BENTOCLAW_STATE_IDLE;
            }
            bentoclaw_flush_if_dirty();
            nlr_jump(nlr.ret_val);
        }
        if (have_tr) {
            vstr_clear(&tr.result);
            have_tr = false;
        }

        // The reply becomes a str and a session line: it must be UTF-8.
        if (resp_len < 0 || !bentoclaw_utf8_valid(reply, (size_t)resp_len)) {
            m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
            m_del(char, ctx, BENTOCLAW_CONTEXT_MAX);
            bentoclaw_ask_failed();
            bentoclaw_flush_if_dirty();
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("HTTPS request failed"));
        }
        if (rounds == 0) {
            claw_cb_success();
        }

        bentoclaw_toolcall_t tc;
        if (!bentoclaw_toolcall_parse(reply, (size_t)resp_len, &tc)) {
            break; // reply text: the answer
        }
        if (rounds == BENTOCLAW_TOOL_ROUNDS_MAX) {
            m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
            m_del(char, ctx, BENTOCLAW_CONTEXT_MAX);
            bentoclaw_ask_round_limit();
            bentoclaw_flush_if_dirty();
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tool round limit reached"));
        }
        rounds++;
        if (nlr_push(&nlr) == 0) {
            // Room for the TOOL turn and the reply, without pushing a turn
            // out: the USER turn and the TOOL turns of this ask() stay.
            bentoclaw_ask_before_tool_turn((uint16_t)rounds);
            bentoclaw_toolcall_run(&tc, &tr);
            nlr_pop();
        } else {
            // Only a KeyboardInterrupt/SystemExit gets here.
            s_agent_state = BENTOCLAW_STATE_IDLE;
            bentoclaw_flush_if_dirty();
            nlr_jump(nlr.ret_val);
        }
        have_tr = true;
        s_agent_state = BENTOCLAW_STATE_BUSY;
    }
    m_del(char, ctx, BENTOCLAW_CONTEXT_MAX);

    s_agent_state = BENTOCLAW_STATE_IDLE;
    char result[sizeof(s_last_result)];
    snprintf(result, sizeof(result), "ok (%d bytes)", resp_len);
    bentoclaw_set_last_result(result);
    claw_ipc_send_ui(CLAW_UI_STATUS_TEXT, "Online (HTTPS)", 14);
    claw_ipc_send_ui(CLAW_UI_CHAT_ASSISTANT, reply, (size_t)resp_len);

    /* Add assistant response to session */
    claw_session_add(CLAW_ROLE_ASSISTANT, reply);
    bentoclaw_flush_if_dirty();

    mp_obj_t ret = mp_obj_new_str(reply, (size_t)resp_len);
    m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
    return ret;
}
static MP_DEFINE_CONST_FUN_OBJ_1(bentoclaw_ask_obj, bentoclaw_ask);

/* ---------------------------------------------------------------------------
 * memory and session
 */

static mp_obj_t bentoclaw_remember(mp_obj_t key_in, mp_obj_t val_in) {
    bentoclaw_ensure_init();
    const char *key = bentoclaw_get_key(key_in);
    size_t val_len;
    const char *val = bentoclaw_get_str(val_in, &val_len, MP_QSTR_value);
    if (val_len >= CLAW_MEM_VAL_MAX) {
        mp_raise_ValueError(MP_ERROR_TEXT("value must be 0..127 bytes (CLAW_MEM_VAL_MAX)"));
    }
    bool ok = claw_memory_set(key, val);
    claw_port_vfs_raise_pending(); // [vfs branch] KeyboardInterrupt/SystemExit from a port callback
    return mp_obj_new_bool(ok);
}
static MP_DEFINE_CONST_FUN_OBJ_2(bentoclaw_remember_obj, bentoclaw_remember);

static mp_obj_t bentoclaw_recall(mp_obj_t key_in) {
    bentoclaw_ensure_init();
    const char *key = bentoclaw_get_key(key_in);
    char value[CLAW_MEM_VAL_MAX];
    bool found = claw_memory_get(key, value, sizeof(value));
    claw_port_vfs_raise_pending(); // [vfs branch] KeyboardInterrupt/SystemExit from a port callback
    if (!found) {
        return mp_const_none;
    }
    // Never trust what came off flash to be a valid str.
    size_t len = strnlen(value, sizeof(value));
    if (len == sizeof(value) || !utf8_check((const byte *)value, len)) {
        return mp_const_none;
    }
    return mp_obj_new_str(value, len);
}
static MP_DEFINE_CONST_FUN_OBJ_1(bentoclaw_recall_obj, bentoclaw_recall);

mp_obj_t bentoclaw_session_clear(void) {
    bentoclaw_ensure_init();
    claw_session_clear();
    if (claw_ipc_initialized) {
        claw_ipc_send_ui(CLAW_UI_CLEAR, "", 0);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_session_clear_obj, bentoclaw_session_clear);

static mp_obj_t bentoclaw_flush(void) {
    bentoclaw_ensure_init();
    bool dirty = claw_session_dirty();
    claw_port_vfs_raise_pending(); // [vfs branch] KeyboardInterrupt/SystemExit from a port callback
    if (!dirty) {
        return mp_const_true;
    }
    bool ok = claw_session_flush();
    claw_port_vfs_raise_pending(); // [vfs branch] KeyboardInterrupt/SystemExit from a port callback
    return mp_obj_new_bool(ok);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_flush_obj, bentoclaw_flush);

/* ---------------------------------------------------------------------------
 * status / safety
 */

static void bentoclaw_dict_store_str(mp_obj_t d, qstr key, const char *s) {
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(key), mp_obj_new_str(s, strlen(s)));
}

mp_obj_t bentoclaw_status(void) {
    bentoclaw_ensure_init();
    mp_obj_t d = mp_obj_new_dict(6);
    const char *state = s_agent_state < MP_ARRAY_SIZE(bentoclaw_state_names)
        ? bentoclaw_state_names[s_agent_state] : "unknown";
    bentoclaw_dict_store_str(d, MP_QSTR_state, state);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_connected), mp_obj_new_bool(claw_https_connected()));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_session_msgs), mp_obj_new_int(claw_session_count()));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_errors), mp_obj_new_int_from_uint(s_error_count));
    bentoclaw_dict_store_str(d, MP_QSTR_last_result, s_last_result);
    // True while the ring holds turns not yet on flash (a flush failed or
    // nothing has reached an idle point since).
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_dirty), mp_obj_new_bool(claw_session_dirty()));
    // The session's accounting (persisted with it, reset with it):
    // bytes_in/tokens_in go to the model (request bodies), bytes_out/
    // tokens_out come back (replies); context_bytes of the last request;
    // exchanges = answered POSTs; last_active = RTC seconds (0: unknown).
    claw_session_stats_t st;
    if (!claw_session_stats(&st)) {
        memset(&st, 0, sizeof(st));
    }
    static const qstr stat_keys[] = {
        MP_QSTR_bytes_in, MP_QSTR_bytes_out, MP_QSTR_tokens_in, MP_QSTR_tokens_out,
        MP_QSTR_context_bytes, MP_QSTR_exchanges, MP_QSTR_last_active,
    };
    const uint32_t stat_vals[] = {
        st.in_bytes, st.out_bytes, st.in_tokens, st.out_tokens,
        st.context_bytes, st.exchanges, st.last_active,
    };
    for (size_t i = 0; i < MP_ARRAY_SIZE(stat_keys); i++) {
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(stat_keys[i]), mp_obj_new_int_from_uint(stat_vals[i]));
    }
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_status_obj, bentoclaw_status);

mp_obj_t bentoclaw_safety(void) {
    bentoclaw_ensure_init();

    mp_obj_t d = mp_obj_new_dict(4);

    // The core is a separate archive: keep the bounds guards, an
    // out-of-range value reads "unknown" rather than indexing past a table.
    static const char *const cb_names[] = { "closed", "open", "half-open" };
    claw_cb_state_t cb = claw_cb_state();
    const char *cb_str = (cb < 3) ? cb_names[cb] : "unknown";

    static const char *const trust_names[] = { "none", "https", "usb" };
    claw_trust_level_t trust = claw_trust_get();
    const char *trust_str = (trust < 3) ? trust_names[trust] : "unknown";

    bentoclaw_dict_store_str(d, MP_QSTR_circuit_breaker, cb_str);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_cooldown_ms),
        mp_obj_new_int_from_uint(claw_cb_cooldown_remaining()));
    bentoclaw_dict_store_str(d, MP_QSTR_trust, trust_str);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_errors), mp_obj_new_int_from_uint(s_error_count));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_safety_obj, bentoclaw_safety);

/* ---------------------------------------------------------------------------
 * Tools
 */

// Index of the registry entry called `name`, or -1.
int bentoclaw_tool_find(const char *name, size_t len) {
    for (size_t i = 0; i < bentoclaw_tool_count(); i++) {
        const char *n = bentoclaw_tool_at(i)->name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            return (int)i;
        }
    }
    return -1;
}

// Built-in tools check their argument before the gates: a malformed request
// is the caller's error, not a tool failure, and consumes no quota.
static void bentoclaw_builtin_check_arg(uint8_t kind, mp_obj_t arg) {
    switch (kind) {
        case TOOL_KIND_ECHO:
            if (arg != mp_const_none && !mp_obj_is_str(arg)) {
                mp_raise_TypeError(MP_ERROR_TEXT("echo takes a str"));
            }
            break;
        case TOOL_KIND_LED:
            if (arg != mp_const_none && !mp_obj_is_bool(arg) && !mp_obj_is_int(arg)
                && !(mp_obj_is_str(arg) && strcmp(mp_obj_str_get_str(arg), "toggle") == 0)) {
                mp_raise_TypeError(MP_ERROR_TEXT("led takes None, a bool or 'toggle'"));
            }
            break;
        default:
            if (arg != mp_const_none) {
                mp_raise_TypeError(MP_ERROR_TEXT("this tool takes no argument"));
            }
            break;
    }
}

static mp_obj_t bentoclaw_builtin_run(uint8_t kind, mp_obj_t arg) {
    switch (kind) {
        case TOOL_KIND_ECHO:
            return arg == mp_const_none ? MP_OBJ_NEW_QSTR(MP_QSTR_) : arg;
        case TOOL_KIND_UPTIME:
            return mp_obj_new_int_from_uint(mp_hal_ticks_ms());
        case TOOL_KIND_LED:
            // On the board this drives the user LED; here the state is only
            // recorded and shown on the UI panel.
            if (mp_obj_is_str(arg)) {
                s_led_on = !s_led_on;
            } else if (arg != mp_const_none) {
                s_led_on = mp_obj_is_true(arg);
            }
            claw_ipc_send_ui(CLAW_UI_LED, s_led_on ? "on" : "off", s_led_on ? 2 : 3);
            return mp_obj_new_bool(s_led_on);
        case TOOL_KIND_WIPE_MEMORY: {
            // Forget everything remember() stored. A missing file is already
            // wiped; any other error is a tool failure.
            int32_t r = claw_port_remove("/.bentoclaw_memory");
            (void)claw_port_remove("/.bentoclaw_memory.tmp");
            if (r < 0 && r != -MP_ENOENT) {
                mp_raise_OSError((int)-r);
            }
            return mp_const_true;
        }
        default:
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("bad tool entry"));
    }
}

// mp_print_t sink that keeps only `max` bytes, so the repr of a large
// result never takes more heap than the line it becomes. The cut falls on a
// character boundary; once cut, later pieces are dropped.
typedef struct _bentoclaw_capped_t {
    vstr_t *vstr;
    size_t max;
    bool full;
} bentoclaw_capped_t;

static void bentoclaw_print_capped(void *data, const char *str, size_t len) {
    bentoclaw_capped_t *c = data;
    if (c->full) {
        return;
    }
    size_t room = c->max > c->vstr->len ? c->max - c->vstr->len : 0;
    if (len > room) {
        len = room;
        while (len > 0 && ((uint8_t)str[len] & 0xc0) == 0x80) {
            len--;
        }
        c->full = true;
    }
    vstr_add_strn(c->vstr, str, len);
}

bool bentoclaw_str_capped(vstr_t *out, mp_obj_t obj, size_t max) {
    bentoclaw_capped_t capped = { .vstr = out, .max = out->len + max, .full = false };
    mp_print_t print = { &capped, bentoclaw_print_capped };
    mp_obj_print_helper(&print, obj, PRINT_STR);
    return capped.full;
}

static void bentoclaw_tool_log_line(vstr_t *line) {
    const char *text = vstr_null_terminated_str(line);
    claw_ipc_send_ui(CLAW_UI_TOOL, text, strlen(text));
    claw_session_add(CLAW_ROLE_TOOL, text);
    vstr_clear(line);
}

// The TOOL turn for a finished call, "<name>: <result>" (the core cuts it
// to 255 bytes on a character boundary).
static void bentoclaw_tool_log(const char *name, mp_obj_t result) {
    vstr_t line;
    vstr_init(&line, 64);
    bentoclaw_capped_t capped = { .vstr = &line, .max = CLAW_MSG_MAX_LEN - 1, .full = false };
    mp_print_t print = { &capped, bentoclaw_print_capped };
    mp_printf(&print, "%s: ", name);
    mp_obj_print_helper(&print, result, mp_obj_is_str(result) ? PRINT_STR : PRINT_REPR);
    bentoclaw_tool_log_line(&line);
}

void bentoclaw_tool_log_note(const char *name, size_t name_len, const char *note, const char *text) {
    vstr_t line;
    vstr_init(&line, 64);
    bentoclaw_capped_t capped = { .vstr = &line, .max = CLAW_MSG_MAX_LEN - 1, .full = false };
    bentoclaw_print_capped(&capped, name, name_len);
    bentoclaw_print_capped(&capped, ": ", 2);
    bentoclaw_print_capped(&capped, note, strlen(note));
    if (text != NULL && text[0] != '\0') {
        bentoclaw_print_capped(&capped, ": ", 2);
        bentoclaw_print_capped(&capped, text, strlen(text));
    }
    bentoclaw_tool_log_line(&line);
}

const char *bentoclaw_gate_text(bentoclaw_gate_t gate) {
    switch (gate) {
        case BENTOCLAW_GATE_BREAKER:
            return BENTOCLAW_TEXT_BREAKER_OPEN;
        case BENTOCLAW_GATE_TRUST:
            return BENTOCLAW_TEXT_TRUST;
        case BENTOCLAW_GATE_RATE:
            return BENTOCLAW_TEXT_RATE;
        default:
            return "";
    }
}

// tool()'s refusal: RuntimeError with the seed's exact text.
static NORETURN void bentoclaw_raise_gate(bentoclaw_gate_t gate) {
    if (gate == BENTOCLAW_GATE_BREAKER) {
        bentoclaw_raise_breaker_open();
    } else if (gate == BENTOCLAW_GATE_TRUST) {
        mp_raise_msg(&mp_type_RuntimeError,
            MP_ERROR_TEXT("tool risk exceeds transport trust level"));
    } else {
        mp_raise_msg(&mp_type_RuntimeError,
            MP_ERROR_TEXT("rate limit exceeded for this tool"));
    }
}

// The four gates and the call itself, at the current trust level.
static bentoclaw_gate_t bentoclaw_tool_gated(size_t idx, mp_obj_t arg, mp_obj_t *result_out) {
    const bentoclaw_tool_t *found = bentoclaw_tool_at(idx);
    if (found->kind != TOOL_KIND_PYTHON) {
        bentoclaw_builtin_check_arg(found->kind, arg);
    }

    /* Safety check: circuit breaker */
    if (!claw_cb_allow()) {
        s_error_count++;
        return BENTOCLAW_GATE_BREAKER;
    }

    /* Safety check: transport trust level */
    if (!claw_trust_allows(found->risk)) {
        s_error_count++;
        return BENTOCLAW_GATE_TRUST;
    }

    /* Safety check: rate limiter */
    if (!claw_rate_check(found->name)) {
        s_error_count++;
        return BENTOCLAW_GATE_RATE;
    }

    /* Record rate limit hit */
    claw_rate_record(found->name);

    mp_obj_t result;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        if (found->kind == TOOL_KIND_PYTHON) {
            mp_obj_t handler = TOOL_HANDLER(idx - BENTOCLAW_BUILTIN_TOOLS);
            result = mp_call_function_1(handler, arg);
        } else {
            result = bentoclaw_builtin_run(found->kind, arg);
        }
        nlr_pop();
    } else {
        // A failing tool is a breaker failure; its exception propagates.
        if (bentoclaw_exc_is_failure(nlr.ret_val)) {
            s_error_count++;
            claw_cb_failure();
            claw_ipc_send_ui(CLAW_UI_ERROR, "Tool error", 10);
            bentoclaw_set_last_result("tool error");
        }
        nlr_jump(nlr.ret_val);
    }
    claw_cb_success();
    bentoclaw_set_last_result("tool ok");
    // The handler may have re-registered tools: log the name it ran under.
    bentoclaw_tool_log(found->name, result);
    bentoclaw_flush_if_dirty();
    *result_out = result;
    return BENTOCLAW_GATE_OK;
}

// Back to the saved level, unless connect()/disconnect() ran inside the call
// and set the level that belongs to the connection state.
static void bentoclaw_trust_restore(claw_trust_level_t saved, uint32_t epoch) {
    if (s_trust_epoch == epoch) {
        claw_trust_set(saved);
    }
}

bentoclaw_gate_t bentoclaw_tool_call(size_t idx, mp_obj_t arg, int trust, mp_obj_t *result) {
    if (idx >= bentoclaw_tool_count()) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("bad tool entry"));
    }
    if (trust < 0) {
        return bentoclaw_tool_gated(idx, arg, result);
    }
    claw_trust_level_t saved = claw_trust_get();
    uint32_t epoch = s_trust_epoch;
    claw_trust_set((claw_trust_level_t)trust);
    bentoclaw_gate_t gate = BENTOCLAW_GATE_OK;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        gate = bentoclaw_tool_gated(idx, arg, result);
        nlr_pop();
    } else {
        bentoclaw_trust_restore(saved, epoch);
        nlr_jump(nlr.ret_val);
    }
    bentoclaw_trust_restore(saved, epoch);
    return gate;
}

static mp_obj_t bentoclaw_tool(size_t n_args, const mp_obj_t *args) {
    bentoclaw_ensure_init();
    size_t name_len;
    const char *name = bentoclaw_get_tool_name(args[0], &name_len);
    mp_obj_t arg = n_args > 1 ? args[1] : mp_const_none;
    int idx = bentoclaw_tool_find(name, name_len);
    if (idx < 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("unknown tool '%s'"), name);
    }
    mp_obj_t result;
    bentoclaw_gate_t gate = bentoclaw_tool_call((size_t)idx, arg, BENTOCLAW_TRUST_CURRENT, &result);
    if (gate != BENTOCLAW_GATE_OK) {
        bentoclaw_raise_gate(gate);
    }
    return result;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(bentoclaw_tool_obj, 1, 2, bentoclaw_tool);

static mp_obj_t bentoclaw_register_tool(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_name, ARG_handler, ARG_risk, ARG_rate_per_min };
    static const mp_arg_t allowed_args[] = {
        { MP_QSTR_name, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_handler, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_risk, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
        { MP_QSTR_rate_per_min, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
    };
    bentoclaw_ensure_init();
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);

    size_t name_len;
    const char *name = bentoclaw_get_tool_name(args[ARG_name].u_obj, &name_len);
    mp_obj_t handler = args[ARG_handler].u_obj;
    if (!mp_obj_is_callable(handler)) {
        mp_raise_TypeError(MP_ERROR_TEXT("handler must be callable"));
    }
    uint8_t risk = (uint8_t)bentoclaw_get_int_in(args[ARG_risk].u_obj, MP_QSTR_risk, 0, BENTOCLAW_RISK_MAX);
    uint16_t rate = (uint16_t)bentoclaw_get_int_in(args[ARG_rate_per_min].u_obj, MP_QSTR_rate_per_min, 0, 65535);

    int idx = bentoclaw_tool_find(name, name_len);
    if (idx >= 0 && idx < BENTOCLAW_BUILTIN_TOOLS) {
        // A script must not be able to swap a built-in (say the high-risk
        // wipe) for something registered with a lower risk.
        mp_raise_ValueError(MP_ERROR_TEXT("cannot replace a built-in tool"));
    }
    size_t slot;
    uint16_t old_rate = 0;
    if (idx >= 0) {
        slot = (size_t)idx - BENTOCLAW_BUILTIN_TOOLS;
        old_rate = s_py_tools[slot].rate_per_min;
    } else {
        if (s_py_tool_count >= BENTOCLAW_PY_TOOLS_MAX) {
            mp_raise_msg(&mp_type_RuntimeError,
                MP_ERROR_TEXT("tool registry full (CLAW_RATE_MAX_TOOLS)"));
        }
        slot = s_py_tool_count;
    }
    bentoclaw_tool_t *t = &s_py_tools[slot];
    memcpy(t->name, name, name_len);
    t->name[name_len] = '\0';
    t->kind = TOOL_KIND_PYTHON;
    t->risk = risk;
    t->rate_per_min = rate;
    TOOL_HANDLER(slot) = handler;
    if (idx < 0) {
        s_py_tool_count++;
    }
    // Install the limit now (ensure_init has already run its loop). Only a
    // change is passed on, so re-registering cannot be used to refill a
    // quota; 0 means "the default", so a limit that is dropped goes back
    // to it.
    if (rate != old_rate) {
        claw_rate_set(t->name, rate > 0 ? rate : CLAW_RATE_DEFAULT_PER_MIN);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_register_tool_obj, 2, bentoclaw_register_tool);

static mp_obj_t bentoclaw_tools(void) {
    bentoclaw_ensure_init();
    size_t n = bentoclaw_tool_count();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        const bentoclaw_tool_t *t = bentoclaw_tool_at(i);
        mp_obj_t items[4] = {
            mp_obj_new_str(t->name, strlen(t->name)),
            MP_OBJ_NEW_SMALL_INT(t->risk),
            MP_OBJ_NEW_SMALL_INT(t->rate_per_min > 0 ? t->rate_per_min : CLAW_RATE_DEFAULT_PER_MIN),
            mp_obj_new_bool(t->kind != TOOL_KIND_PYTHON),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(4, items));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_tools_obj, bentoclaw_tools);

#if !BENTOCLAW_PORT_FIRMWARE
// Test hook of the unix port: the UI messages since the last call, as a
// list of (type, text), oldest first.
static mp_obj_t bentoclaw__ui_events(void) {
    static const char *const type_names[] = {
        "status", "error", "last_result", "clear", "user", "assistant", "tool", "led",
    };
    bentoclaw_ensure_init();
    size_t n = claw_ipc_event_count();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        uint8_t type;
        const char *text;
        size_t len;
        if (!claw_ipc_event_get(i, &type, &text, &len)) {
            break;
        }
        mp_obj_t items[2] = {
            type < MP_ARRAY_SIZE(type_names)
                ? mp_obj_new_str(type_names[type], strlen(type_names[type]))
                : MP_OBJ_NEW_SMALL_INT(type),
            mp_obj_new_str(text, len),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(2, items));
    }
    claw_ipc_events_clear();
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw__ui_events_obj, bentoclaw__ui_events);

// Test hook of the unix port: the context the next ask() would send (the
// memory and the whole ring as loaded from flash), as bytes, without sending
// it and without adding a turn. The power-cut tests compare it in a fresh
// process with the ring and store written before the cut.
static mp_obj_t bentoclaw__context(void) {
    bentoclaw_ensure_init();
    vstr_t v;
    vstr_init_len(&v, BENTOCLAW_CONTEXT_MAX);
    size_t n = claw_session_build_context(v.buf, BENTOCLAW_CONTEXT_MAX);
    v.len = n < BENTOCLAW_CONTEXT_MAX ? n : 0;
    return mp_obj_new_bytes_from_vstr(&v);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw__context_obj, bentoclaw__context);
#endif

static const mp_rom_map_elem_t bentoclaw_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_bentoclaw) },
    { MP_ROM_QSTR(MP_QSTR___init__), MP_ROM_PTR(&bentoclaw___init___obj) },
    { MP_ROM_QSTR(MP_QSTR_connect), MP_ROM_PTR(&bentoclaw_connect_obj) },
    { MP_ROM_QSTR(MP_QSTR_disconnect), MP_ROM_PTR(&bentoclaw_disconnect_obj) },
    { MP_ROM_QSTR(MP_QSTR_ask), MP_ROM_PTR(&bentoclaw_ask_obj) },
    { MP_ROM_QSTR(MP_QSTR_remember), MP_ROM_PTR(&bentoclaw_remember_obj) },
    { MP_ROM_QSTR(MP_QSTR_recall), MP_ROM_PTR(&bentoclaw_recall_obj) },
    { MP_ROM_QSTR(MP_QSTR_session_clear), MP_ROM_PTR(&bentoclaw_session_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_flush), MP_ROM_PTR(&bentoclaw_flush_obj) },
    { MP_ROM_QSTR(MP_QSTR_status), MP_ROM_PTR(&bentoclaw_status_obj) },
    { MP_ROM_QSTR(MP_QSTR_safety), MP_ROM_PTR(&bentoclaw_safety_obj) },
    { MP_ROM_QSTR(MP_QSTR_tool), MP_ROM_PTR(&bentoclaw_tool_obj) },
    { MP_ROM_QSTR(MP_QSTR_register_tool), MP_ROM_PTR(&bentoclaw_register_tool_obj) },
    { MP_ROM_QSTR(MP_QSTR_tools), MP_ROM_PTR(&bentoclaw_tools_obj) },
    { MP_ROM_QSTR(MP_QSTR_tacp), MP_ROM_PTR(&bentoclaw_tacp_obj) },
    { MP_ROM_QSTR(MP_QSTR_search), MP_ROM_PTR(&bentoclaw_search_obj) },
    { MP_ROM_QSTR(MP_QSTR_forget), MP_ROM_PTR(&bentoclaw_forget_obj) },
    { MP_ROM_QSTR(MP_QSTR_pin), MP_ROM_PTR(&bentoclaw_pin_obj) },
    { MP_ROM_QSTR(MP_QSTR_export_memory), MP_ROM_PTR(&bentoclaw_export_memory_obj) },
    { MP_ROM_QSTR(MP_QSTR_import_memory), MP_ROM_PTR(&bentoclaw_import_memory_obj) },
    { MP_ROM_QSTR(MP_QSTR_config), MP_ROM_PTR(&bentoclaw_config_obj) },
    { MP_ROM_QSTR(MP_QSTR_archive), MP_ROM_PTR(&bentoclaw_archive_obj) },
    { MP_ROM_QSTR(MP_QSTR_session), MP_ROM_PTR(&bentoclaw_session_obj) },
    #if !BENTOCLAW_PORT_FIRMWARE
    { MP_ROM_QSTR(MP_QSTR__ui_events), MP_ROM_PTR(&bentoclaw__ui_events_obj) },
    { MP_ROM_QSTR(MP_QSTR__context), MP_ROM_PTR(&bentoclaw__context_obj) },
    { MP_ROM_QSTR(MP_QSTR__clock), MP_ROM_PTR(&bentoclaw__clock_obj) },
    #endif
    { MP_ROM_QSTR(MP_QSTR_RISK_LOW), MP_ROM_INT(0) },
    { MP_ROM_QSTR(MP_QSTR_RISK_MEDIUM), MP_ROM_INT(1) },
    { MP_ROM_QSTR(MP_QSTR_RISK_HIGH), MP_ROM_INT(2) },
    { MP_ROM_QSTR(MP_QSTR_HTTP_TIMEOUT_MS), MP_ROM_INT(BENTOCLAW_HTTP_TIMEOUT_MS) },
    { MP_ROM_QSTR(MP_QSTR_PROMPT_MAX), MP_ROM_INT(BENTOCLAW_PROMPT_MAX) },
    { MP_ROM_QSTR(MP_QSTR_CONTEXT_MAX), MP_ROM_INT(BENTOCLAW_CONTEXT_MAX) },
    { MP_ROM_QSTR(MP_QSTR_REPLY_MAX), MP_ROM_INT(BENTOCLAW_REPLY_MAX) },
    { MP_ROM_QSTR(MP_QSTR_TOOL_ROUNDS_MAX), MP_ROM_INT(BENTOCLAW_TOOL_ROUNDS_MAX) },
    { MP_ROM_QSTR(MP_QSTR_ARCHIVE_MAX), MP_ROM_INT(CLAW_ARCHIVE_MAX) },
};
static MP_DEFINE_CONST_DICT(bentoclaw_module_globals, bentoclaw_module_globals_table);

const mp_obj_module_t mp_module_bentoclaw = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&bentoclaw_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_bentoclaw, mp_module_bentoclaw);
