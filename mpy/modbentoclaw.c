/*
 * modbentoclaw.c — the MicroPython module `bentoclaw` over the Rust core: argument
 * conversion, exceptions, the module table, Python tool handlers (root pointers,
 * never in Rust) and the agent's ports of include/claw_port.h (a Python tool, the
 * transport of claw_transport.h, the firmware's UI panel, the clock); files are
 * claw_port_vfs.c. Every behaviour is the core's; it returns a status and this
 * file raises once it has returned (ports catch every exception, nlr_push): no
 * longjmp crosses a Rust frame. mpy/README.md has the rules (SPEC.md §3, §6).
 */
#include <string.h>

#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/objint.h"
#include "py/gc.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "shared/timeutils/timeutils.h"

#include "claw_port.h"
#include "claw_port_vfs.h"
#include "claw_safety.h"
#include "claw_session.h"
#include "claw_ext.h"
#include "claw_transport.h"
#include "claw_tools.h"

// The argument of the tool call held for confirm() (a str, or None for no
// argument), or NULL: claw_port_confirm_hold() keeps it.
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_held_arg);

// The Python tools: a dict {slot: (handler, description)}, made by the
// first register_tool() (one root pointer; no heap before it).
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_py_tools);
#define PY_TOOLS (MP_STATE_VM(bentoclaw_py_tools))

// The entry of the Python tool in `slot`: its (handler, description)
// tuple's items, or NULL.
static mp_obj_t *py_tool(uint8_t slot) {
    if (PY_TOOLS == MP_OBJ_NULL) {
        return NULL;
    }
    mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(PY_TOOLS), MP_OBJ_NEW_SMALL_INT(slot), MP_MAP_LOOKUP);
    if (e == NULL) {
        return NULL;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_tuple_get(e->value, &n, &items);
    return items;
}

#ifndef BENTOCLAW_VERSION
// version(): the vendor's API level this binding implements (the BENTO
// firmware's BENTOCLAW_VERSION, bentoclaw_version_project.h); the IDE reads
// it in READY. The library's own version is bentoclaw.CORE_VERSION.
#define BENTOCLAW_VERSION "1.11.0"
#endif

static bool s_module_inited;

// tacp()'s receiver (16 bytes), and the payload of a frame that is still
// arriving: on the heap while a frame is under way, for the next call.
static claw_tacp_rx_t s_tacp_rx;
MP_REGISTER_ROOT_POINTER(uint8_t *bentoclaw_tacp_payload);

// What a core call hands to claw_port_tool() (`ctx`): the caller's argument
// for a REPL tool() call, and what the tool left (its result, or an exception
// to raise once the core has returned); whether the ring held nothing
// unsaved when the call began. On the C stack, where the GC sees it.
typedef struct _bentoclaw_ctx_t {
    mp_obj_t arg, result, exc;
    bool clean;
} bentoclaw_ctx_t;

extern const mp_obj_module_t mp_module_bentoclaw;

/* --- Exceptions: the core names the kind and the exact text --- */

// Raises for a core status; `what` (an argument's name) prefixes a text
// check's message ("key must not contain NUL"). The texts may hold non-ASCII
// (the breaker's em dash), so they are str objects, not MP_ERROR_TEXT.
static NORETURN void bentoclaw_raise(claw_status_t s, qstr what) {
    static const mp_obj_type_t *const types[] = {
        &mp_type_RuntimeError, &mp_type_RuntimeError, &mp_type_ValueError,
        &mp_type_TypeError, &mp_type_OSError, &mp_type_RuntimeError,
    };
    uint8_t kind = claw_status_kind(s);
    vstr_t v;
    vstr_init(&v, 48);
    if (what != MP_QSTRnull && claw_status_named(s)) {
        vstr_printf(&v, "%q ", what);
    }
    vstr_add_str(&v, claw_status_text(s));
    nlr_raise(mp_obj_new_exception_arg1(types[kind < MP_ARRAY_SIZE(types) ? kind : 1],
        mp_obj_new_str_from_vstr(&v)));
}

// After a core call: what a port callback kept to raise, then the status;
// None when there is nothing to raise.
static mp_obj_t bentoclaw_check(claw_status_t s, bentoclaw_ctx_t *ctx) {
    // A file operation ran out of heap (raised below): the ring is read
    // again as flash has it, so the call's turns stay unsaved too.
    mp_obj_t oom = MP_STATE_MAIN_THREAD(mp_pending_exception);
    if (ctx != NULL && ctx->clean && oom != MP_OBJ_NULL && mp_obj_get_type(oom) == &mp_type_MemoryError) {
        claw_session_init();
    }
    if (ctx != NULL && ctx->exc != MP_OBJ_NULL && s != CLAW_OK && claw_status_kind(s) == CLAW_KIND_PENDING) {
        nlr_raise(ctx->exc);
    }
    claw_port_vfs_raise_pending();
    if (s != CLAW_OK) {
        bentoclaw_raise(s, MP_QSTRnull);
    }
    return mp_const_none;
}

#define BC_ENOTEMPTY 39 // littlefs's LFS_ERR_NOTEMPTY (mperrno.h has no name for it)
// The cause of an error of where the files are (no passing fault), or "".
static const char *io_cause(int err) {
    return err == MP_EISDIR || err == BC_ENOTEMPTY ? ": a directory is in the way"
        : err == MP_ENODEV || err == MP_EPERM || err == MP_EROFS ? ": no writable file system there"
        : err == MP_ENOENT ? ": no such file or directory" : err == MP_ENOTDIR ? ": not a directory" : "";
}

// OSError(errno, "<what> not saved: <path>[: cause]"): e.errno is the int.
static NORETURN void raise_io(int err, const char *what, const char *path) {
    vstr_t vstr;
    vstr_init(&vstr, 64);
    vstr_printf(&vstr, "%s not saved: %s%s", what, path, io_cause(err));
    mp_obj_t args[2] = { MP_OBJ_NEW_SMALL_INT(err), mp_obj_new_str_from_vstr(&vstr) };
    nlr_raise(mp_obj_new_exception_args(&mp_type_OSError, 2, args));
}

// After a write: a callback's kept exception, then an io_cause() error: raised.
static mp_obj_t saved(bool ok, const char *what) {
    claw_port_vfs_raise_pending();
    char path[48];
    int err = ok ? 0 : (int)claw_io_error(path, sizeof(path));
    if (*io_cause(err) != '\0') {
        raise_io(err, what, path);
    }
    return mp_obj_new_bool(ok);
}

/* --- Initialisation, once per soft reset --- */

// C statics and root pointers survive a soft reset; the Python heap does
// not. Every mp_init() makes a new loaded-modules dict: a marker in it (keyed
// by this module object, which no import can produce) tells a new VM from the
// current one. While a port callback runs it is the current VM whatever the
// dict says (a block device's Python code may have removed the marker).
static void bentoclaw_vm_check(void) {
    mp_obj_t marker = MP_OBJ_FROM_PTR(&mp_module_bentoclaw);
    mp_map_t *loaded = &MP_STATE_VM(mp_loaded_modules_dict).map;
    if (mp_map_lookup(loaded, marker, MP_MAP_LOOKUP) == NULL && !claw_port_vfs_busy()) {
        // A new VM: the handlers and open files of the previous one point
        // into a heap that has been reset.
        PY_TOOLS = MP_OBJ_NULL;
        MP_STATE_VM(bentoclaw_held_arg) = MP_OBJ_NULL;
        bentoclaw_c_tools_reset();
        claw_tools_drop_python();
        MP_STATE_VM(bentoclaw_tacp_payload) = NULL;
        memset(&s_tacp_rx, 0, sizeof(s_tacp_rx));
        #if !BENTOCLAW_PORT_FIRMWARE
        bentoclaw_clock_fixed = false;
        #endif
        s_module_inited = false;
    }
    mp_obj_dict_store(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_loaded_modules_dict)), marker, mp_const_true);
}

// What a port callback handed the VM, then the core's "busy" error unless `ok`.
#define busy_unless(ok) bentoclaw_check((ok) ? CLAW_OK : CLAW_STATUS_BUSY, NULL)

// Refused like a Python call at MicroPython's limit when less than
// BENTOCLAW_STACK_NEED is left: the core (1 KiB at most) and the C under it
// (VFS, LittleFS, a block device) run below the VM's stack check, and the
// board's stack is 8 KiB (tests/qemu/test_stack_depth.py).
#ifndef BENTOCLAW_STACK_NEED
#define BENTOCLAW_STACK_NEED (2048)
#endif
void bentoclaw_ensure_init(void) {
    #if MICROPY_STACK_CHECK
    if (mp_stack_usage() + BENTOCLAW_STACK_NEED > MP_STATE_THREAD(stack_limit)) {
        mp_raise_recursion_depth();
    }
    #endif
    // Python code that runs inside a core call (a block device written in
    // Python, reached through the VFS bridge) must not re-enter the core.
    busy_unless(!claw_port_vfs_busy());
    #if !MICROPY_MODULE_BUILTIN_INIT
    bentoclaw_vm_check();
    #endif
    if (!s_module_inited) {
        claw_rate_init();
        claw_cb_init();
        claw_session_init();
        // The registry's defaults and limits, the firmware's C tools and
        // the binding's (mpy/claw_tools.c); Python tools register later.
        (void)claw_agent_init();
        (void)claw_tools_register(bentoclaw_c_tools, bentoclaw_c_tools_count);
        s_module_inited = true;
    }
}

static mp_obj_t bentoclaw___init__(void) {
    bentoclaw_vm_check();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw___init___obj, bentoclaw___init__);

/* --- Arguments --- */

// Required arguments, by position or keyword. (tests/stubs/stub_api.py reads
// each `allowed` table: REQ() entries, or entries written in full.)
#define REQ(q) { MP_QSTR_##q, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} }

// A keyword function's arguments (`allowed`, all MP_ARG_OBJ, at most 6) into
// a[], then bentoclaw_ensure_init().
#define PARSE(a) \
    mp_obj_t a[MP_ARRAY_SIZE(allowed)]; \
    MP_STATIC_ASSERT(MP_ARRAY_SIZE(allowed) <= 6); \
    parse_args(n_args, pos, kw, allowed, MP_ARRAY_SIZE(allowed), a)
static void parse_args(size_t n_args, const mp_obj_t *pos, mp_map_t *kw, const mp_arg_t *allowed, size_t n,
    mp_obj_t *out) {
    mp_arg_val_t a[6];
    mp_arg_parse_all(n_args, pos, kw, n, allowed, a);
    for (size_t i = 0; i < n; i++) {
        out[i] = a[i].u_obj;
    }
    bentoclaw_ensure_init();
}

// A str the core accepts as `check` (a CLAW_CHECK_*: text, key, value, tool
// name, prompt, host, API key), or the exception naming `what` and the limit. MicroPython
// str data is NUL-terminated after its length. `len` may be NULL.
static const char *get_text(mp_obj_t obj, size_t *len, qstr what, uint8_t check) {
    if (!mp_obj_is_str(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be str"), what);
    }
    size_t n;
    const char *s = mp_obj_str_get_data(obj, &n);
    claw_status_t st = claw_check(check, (const uint8_t *)s, n);
    if (st != CLAW_OK) {
        bentoclaw_raise(st, what);
    }
    if (len != NULL) {
        *len = n;
    }
    return s;
}

static mp_int_t get_int_in(mp_obj_t obj, qstr what, mp_int_t lo, mp_int_t hi) {
    if (!mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be int"), what);
    }
    // A big int is out of every range here (no OverflowError).
    mp_int_t v = mp_obj_is_small_int(obj) ? MP_OBJ_SMALL_INT_VALUE(obj) : lo - 1;
    if (v < lo || v > hi) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must be %d..%d"), what, (int)lo, (int)hi);
    }
    return v;
}

static bool get_flag(mp_obj_t obj, qstr what) {
    if (!mp_obj_is_bool(obj) && !mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be bool"), what);
    }
    return mp_obj_is_true(obj);
}

static mp_obj_t str_obj(const char *s) {
    return mp_obj_new_str(s, strlen(s));
}

static mp_obj_t uint_obj(mp_uint_t v) {
    return mp_obj_new_int_from_uint(v);
}

static void dict_set(mp_obj_t d, qstr key, mp_obj_t value) {
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(key), value);
}

/* --- The agent's ports (include/claw_port.h): a Python tool --- */

// The text of `obj` (str as it is, anything else its repr), or of its type
// when that raises: the tool ran, so a result is always reported. Only the
// first `max` bytes are kept (the core cuts them on a character boundary),
// so the text of a large result never takes heap.
static size_t text_of(mp_obj_t obj, bool as_str, uint8_t *out, size_t max) {
    answer_t c = { (char *)out, max, 0 };
    mp_print_t print = { &c, bentoclaw_answer_strn };
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_print_helper(&print, obj, as_str || mp_obj_is_str(obj) ? PRINT_STR : PRINT_REPR);
        nlr_pop();
    } else {
        // A KeyboardInterrupt or SystemExit is not swallowed: everything
        // stops (claw_port_aborted) and it is raised once the core returned.
        (void)claw_port_vfs_keep(MP_OBJ_FROM_PTR(nlr.ret_val));
        c.len = 0;
        mp_printf(&print, "<%q object>", (qstr)mp_obj_get_type(obj)->name);
    }
    if (c.len == 0 && !mp_obj_is_str(obj) && as_str) {
        // An exception with no message: its type's name.
        mp_printf(&print, "%q", (qstr)mp_obj_get_type(obj)->name);
    }
    return c.len;
}

// The argument of a tool call as a Python object: the text (a copy, with
// its NUL after it as the vendor's dispatcher passes), the caller's own (a
// REPL tool() call), or None.
static mp_obj_t port_arg(bentoclaw_ctx_t *ctx, uint8_t arg_kind, const uint8_t *arg, size_t len) {
    return arg_kind == CLAW_PORT_ARG_TEXT ? mp_obj_new_str((const char *)arg, len)
        : arg_kind == CLAW_PORT_ARG_CALLER && ctx != NULL ? ctx->arg : mp_const_none;
}

// A C tool's argument as the text its handler reads: a str as it is, None
// as "", anything else as JSON (json.dumps) — the vendor's tools take text
// or a JSON object.
static const char *c_tool_text(mp_obj_t a, size_t *len) {
    if (a == mp_const_none) {
        *len = 0;
        return "";
    }
    if (!mp_obj_is_str(a)) {
        mp_obj_t json = mp_import_name(MP_QSTR_json, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
        a = mp_call_function_1(mp_load_attr(json, MP_QSTR_dumps), a);
    }
    return mp_obj_str_get_data(a, len);
}

uint8_t claw_port_tool(void *ctx_in, uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t arg_len,
    uint8_t *out, size_t out_max, size_t *out_len) {
    bentoclaw_ctx_t *ctx = ctx_in;
    *out_len = 0;
    const claw_tool_def_t *def = claw_tool_def(slot);
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t *entry = def == NULL ? py_tool(slot) : NULL;
        if (def == NULL && entry == NULL) {
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tool has no handler"));
        }
        mp_obj_t a = port_arg(ctx, arg_kind, arg, arg_len);
        if (def != NULL) {
            // A C tool: its handler writes the result text itself.
            size_t len;
            const char *text = c_tool_text(a, &len);
            int32_t r = def->handler(text, len, (char *)out, out_max);
            nlr_pop();
            size_t n = (size_t)(r < 0 ? -(int64_t)r : r);
            *out_len = n < out_max ? n : out_max;
            if (r == 0) {
                *out_len = text_of(MP_OBJ_NEW_QSTR(MP_QSTR_error), true, out, out_max);
            }
            return r > 0 ? CLAW_PORT_TOOL_RETURNED : CLAW_PORT_TOOL_RAISED;
        }
        mp_obj_t r = mp_call_function_1(entry[0], a);
        nlr_pop();
        if (ctx != NULL) {
            ctx->result = r;
        }
        *out_len = text_of(r, false, out, out_max);
        return CLAW_PORT_TOOL_RETURNED;
    }
    mp_obj_t exc = MP_OBJ_FROM_PTR(nlr.ret_val);
    bool failure = mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), MP_OBJ_FROM_PTR(&mp_type_Exception));
    if (ctx != NULL && (failure || ctx->exc == MP_OBJ_NULL)) {
        ctx->exc = exc;
    }
    // A KeyboardInterrupt/SystemExit: everything stops, then it is raised.
    *out_len = failure ? text_of(exc, true, out, out_max) : 0;
    return failure ? CLAW_PORT_TOOL_RAISED : CLAW_PORT_TOOL_ABORT;
}

bool claw_port_confirm_hold(uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t len) {
    (void)slot;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        MP_STATE_VM(bentoclaw_held_arg) = port_arg(NULL, arg_kind, arg, len);
        nlr_pop();
        return true;
    }
    // A MemoryError: the call is refused instead.
    (void)claw_port_vfs_keep(MP_OBJ_FROM_PTR(nlr.ret_val));
    return false;
}

size_t claw_port_tool_desc(uint8_t slot, uint8_t *out, size_t out_max) {
    mp_obj_t *entry = py_tool(slot);
    return entry != NULL ? text_of(entry[1], true, out, out_max) : 0;
}

/* --- The agent's ports: transport, UI, clock --- */

int32_t claw_port_post(const uint8_t *body, size_t body_len, uint8_t *reply, size_t reply_max) {
    // claw_https_post() NUL-terminates: one byte more than it reports.
    if (reply_max == 0) {
        return -1;
    }
    int r = claw_https_post(BENTOCLAW_HTTP_PATH, (const char *)body, body_len, (char *)reply, reply_max - 1);
    // -2: larger than the buffer (where the transport can tell); -1 else.
    return r == -2 ? -2 : r < 0 ? -1 : r;
}

bool claw_port_connect(const char *host, uint16_t port, const char *api_key) {
    return claw_https_connect(host, port, api_key);
}

void claw_port_disconnect(void) {
    claw_https_disconnect();
}

bool claw_port_connected(void) {
    return claw_https_connected();
}

// Where the transport reports no tokens (claw_transport.h).
MP_WEAK bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    *tokens_in = *tokens_out = 0;
    return false;
}

void claw_port_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    *tokens_in = *tokens_out = 0;
    (void)claw_https_last_tokens(tokens_in, tokens_out);
}

#if BENTOCLAW_PORT_FIRMWARE
/* The CM55 panel (the BENTO firmware's, or a stand-in with the same
 * headers): IPC_CMD_CLAW_UI_UPDATE messages with the vendor's layout —
 * client CM55_IPC_CLAW_CLIENT_ID, data[0] the CLAW_UI_* type, the text
 * after it cut to IPC_DATA_MAX_LEN - 2 bytes (here on a character
 * boundary) and NUL-terminated — sent over the pipe, 20 tries 200 us apart;
 * the LCD console's (claw_tools.c) have no type byte and IPC_DATA_MAX_LEN - 1.
 * The message lives in shared memory, as the vendor's does. */
#include "ipc_communication.h"
#include "ipc_bentoclaw_defs.h"

CY_SECTION_SHAREDMEM static ipc_msg_t s_ui_msg;
static bool s_ui_up;

// False when the link is down or the pipe stayed busy.
static bool bentoclaw_ipc_send(uint32_t cmd, int type, const char *text, size_t len) {
    // Only while the link is up (the vendor's disconnect and clear send
    // only then too).
    if (!s_ui_up) {
        return false;
    }
    memset(&s_ui_msg, 0, sizeof(s_ui_msg));
    s_ui_msg.client_id = CM55_IPC_CLAW_CLIENT_ID;
    s_ui_msg.intr_mask = CY_IPC_CYPIPE_INTR_MASK_EP1;
    s_ui_msg.cmd = cmd;
    size_t at = type >= 0 ? 1 : 0;
    s_ui_msg.data[0] = (char)(type >= 0 ? type : 0);
    size_t room = IPC_DATA_MAX_LEN - 1 - at;
    size_t n = claw_text_prefix((const uint8_t *)text, len < room ? len : room);
    memcpy(&s_ui_msg.data[at], text, n);
    for (int tries = 20; tries > 0; tries--) {
        if (Cy_IPC_Pipe_SendMessage(CM55_IPC_PIPE_EP_ADDR, CM33_IPC_PIPE_EP_ADDR, (void *)&s_ui_msg, NULL)
            == CY_IPC_PIPE_SUCCESS) {
            return true;
        }
        Cy_SysLib_DelayUs(200);
    }
    return false;
}

void claw_port_ui_init(void) {
    if (!s_ui_up) {
        cm33_ipc_communication_setup();
        Cy_SysLib_Delay(50);
        s_ui_up = true;
        bentoclaw_c_tools_ipc_send = bentoclaw_ipc_send; // the LCD console's link too
    }
}

void claw_port_ui(uint8_t event, const uint8_t *text, size_t len) {
    (void)bentoclaw_ipc_send(IPC_CMD_CLAW_UI_UPDATE, event, (const char *)text, len);
}
#endif // the unix port's panel: claw_transport_unix.c

uint32_t claw_port_time_s(void) {
    #if !BENTOCLAW_PORT_FIRMWARE
    if (bentoclaw_clock_fixed) {
        return bentoclaw_clock_s;
    }
    #endif
    #if defined(BENTOCLAW_RTC_SECONDS)
    // The firmware may name its own source: seconds since 1970, 0 if unset.
    return (uint32_t)(BENTOCLAW_RTC_SECONDS);
    #elif MICROPY_PY_TIME_TIME_TIME_NS
    // mp_hal_time_ns() counts from the port's epoch (1970 or 2000).
    uint64_t s = timeutils_nanoseconds_since_epoch_to_nanoseconds_since_1970(mp_hal_time_ns()) / 1000000000ULL;
    return s > UINT32_MAX ? 0 : (uint32_t)s;
    #else
    return 0; // no wall clock on this port
    #endif
}

/* --- connect, disconnect, ask, tool, tacp --- */

static mp_obj_t bentoclaw_connect(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(host), REQ(port), REQ(api_key) };
    PARSE(a);
    const char *host = get_text(a[0], NULL, MP_QSTR_host, CLAW_CHECK_HOST);
    uint16_t port = (uint16_t)get_int_in(a[1], MP_QSTR_port, 1, 65535);
    const char *key = get_text(a[2], NULL, MP_QSTR_api_key, CLAW_CHECK_API_KEY);
    bool ok = false;
    bentoclaw_check(claw_connect(host, port, key, &ok), NULL);
    return mp_obj_new_bool(ok);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_connect_obj, 0, bentoclaw_connect);

static mp_obj_t bentoclaw_disconnect(void) {
    bentoclaw_ensure_init();
    return bentoclaw_check(claw_disconnect(), NULL);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_disconnect_obj, bentoclaw_disconnect);

static mp_obj_t bentoclaw_ask(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(prompt) };
    PARSE(a);
    size_t len;
    const char *prompt = get_text(a[0], &len, MP_QSTR_prompt, CLAW_CHECK_PROMPT);
    // The request's buffer (heap, for this call alone: nothing is kept
    // between calls), taken before the core runs: a MemoryError leaves no
    // state behind. What needs no buffer is checked first (an offline call
    // allocates nothing). The reply becomes the str in place.
    size_t work_len = 0;
    bentoclaw_check(claw_ask_check((const uint8_t *)prompt, len, &work_len), NULL);
    vstr_t work;
    vstr_init(&work, work_len);
    bentoclaw_ctx_t ctx = { MP_OBJ_NULL, MP_OBJ_NULL, MP_OBJ_NULL, !claw_session_dirty() };
    claw_status_t s = claw_ask((const uint8_t *)prompt, len, (uint8_t *)work.buf, work_len, &ctx, &work.len);
    bentoclaw_check(s, &ctx);
    return mp_obj_new_str_from_vstr(&work);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_ask_obj, 0, bentoclaw_ask);

// tool()'s result text at most: a vendor tool's whole answer.
#define TOOL_OUT_MAX (1024)

// The value of a tool that ran (tool(), confirm()): an int, a bool, a Python
// tool's own result, the caller's `arg` (echo; MP_OBJ_NULL: as text), else
// the text in `out` (a C tool's), after which the reset a tool asked for
// (hard_reset, safe_boot) is done, now that it has returned (`after_call`).
static mp_obj_t tool_value(const claw_value_t *v, const bentoclaw_ctx_t *ctx, mp_obj_t arg, vstr_t *out,
    bool after_call) {
    if (v->kind == CLAW_VALUE_INT) {
        return uint_obj(v->ival);
    } else if (v->kind == CLAW_VALUE_BOOL) {
        return mp_obj_new_bool(v->ival);
    } else if (v->kind == CLAW_VALUE_HOST && ctx->result != MP_OBJ_NULL) {
        return ctx->result;
    } else if (v->kind == CLAW_VALUE_ARG && arg != MP_OBJ_NULL) {
        return arg;
    }
    out->len = v->len;
    mp_obj_t ret = mp_obj_new_str_from_vstr(out);
    if (after_call) {
        bentoclaw_c_tools_after_call();
    }
    return ret;
}

static mp_obj_t bentoclaw_tool(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(name), { MP_QSTR_arg, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} } };
    PARSE(a);
    size_t name_len;
    const char *name = get_text(a[0], &name_len, MP_QSTR_name, CLAW_CHECK_TOOL_NAME);
    mp_obj_t arg = a[1];
    mp_int_t iv = mp_obj_is_small_int(arg) ? MP_OBJ_SMALL_INT_VALUE(arg) : arg == mp_const_true;
    uint8_t kind = arg == mp_const_none ? CLAW_ARG_NONE
        : mp_obj_is_bool(arg) ? CLAW_ARG_BOOL
        : mp_obj_is_small_int(arg) && iv >= INT32_MIN && iv <= INT32_MAX ? CLAW_ARG_INT
        : mp_obj_is_str(arg) ? CLAW_ARG_TEXT // checked by the core, after the name
        : CLAW_ARG_OTHER;
    size_t text_len = 0;
    const char *text = kind == CLAW_ARG_TEXT ? mp_obj_str_get_data(arg, &text_len) : NULL;
    bentoclaw_ctx_t ctx = { arg, MP_OBJ_NULL, MP_OBJ_NULL, !claw_session_dirty() };
    // The result's text, up to what a vendor tool writes (fs_read's 512
    // bytes of content, escaped): on the heap, not on the 8 KiB stack.
    vstr_t out;
    vstr_init(&out, TOOL_OUT_MAX);
    claw_value_t v = { 0 };
    claw_status_t s = claw_tool((const uint8_t *)name, name_len, kind, (const uint8_t *)text, text_len,
        (int32_t)iv, &ctx, (uint8_t *)out.buf, TOOL_OUT_MAX, &v);
    if (claw_status_named(s)) {
        bentoclaw_raise(s, MP_QSTR_arg);
    }
    bentoclaw_check(s, &ctx);
    return tool_value(&v, &ctx, arg, &out, true);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_tool_obj, 0, bentoclaw_tool);

// confirm(yes=True): the person at the device's answer to the tool call the
// model asked for and the core holds (src/agent/confirm.rs): its result, or
// None when refused.
static mp_obj_t bentoclaw_confirm(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { { MP_QSTR_yes, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_TRUE} } };
    PARSE(a);
    bool yes = get_flag(a[0], MP_QSTR_yes);
    mp_obj_t arg = MP_STATE_VM(bentoclaw_held_arg);
    size_t len = 0;
    const char *text = arg != MP_OBJ_NULL && arg != mp_const_none ? mp_obj_str_get_data(arg, &len) : NULL;
    bentoclaw_ctx_t ctx = { arg != MP_OBJ_NULL ? arg : mp_const_none, MP_OBJ_NULL, MP_OBJ_NULL, !claw_session_dirty() };
    vstr_t out;
    vstr_init(&out, TOOL_OUT_MAX);
    claw_value_t v = { 0 };
    bool ran = false;
    claw_status_t s = claw_confirm(yes, text != NULL ? CLAW_ARG_TEXT : CLAW_ARG_NONE, (const uint8_t *)text, len,
        &ctx, (uint8_t *)out.buf, TOOL_OUT_MAX, &v, &ran);
    MP_STATE_VM(bentoclaw_held_arg) = MP_OBJ_NULL;
    bentoclaw_check(s, &ctx);
    return ran ? tool_value(&v, &ctx, MP_OBJ_NULL, &out, true) : mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_confirm_obj, 0, bentoclaw_confirm);

/* --- TACP v2, the BENTO AI IDE's protocol (docs/TACP.md): the core
 * dispatches a request and answers through claw_port_tacp_respond() --- */

#ifdef MICROPY_HW_BOARD_NAME
#define BENTOCLAW_BOARD_NAME MICROPY_HW_BOARD_NAME
#else
#define BENTOCLAW_BOARD_NAME MICROPY_PY_SYS_PLATFORM
#endif

#if BENTOCLAW_PORT_FIRMWARE
// The vendor archive's (tacp.c): frames and sends one answer with the
// sequence number of the request being dispatched.
void tacp_claw_respond(uint8_t sub_cmd, const char *payload, uint16_t payload_len);
#endif

// Where the answers of the running tacp()/tacp_ready() call go: frames
// with the request's `seq`, into `out`, which has room for one frame
// reserved before each request (a port callback must not allocate). NULL:
// to the link (firmware builds), or nowhere.
typedef struct _tacp_sink_t {
    vstr_t *out;
    uint8_t seq;
} tacp_sink_t;
static tacp_sink_t *s_tacp_sink;
// Answers sent: a request the core left unanswered is still answered.
static uint32_t s_tacp_answers;

void claw_port_tacp_respond(uint8_t sub, const uint8_t *payload, size_t len) {
    len = len < CLAW_TACP_PAYLOAD_MAX ? len : CLAW_TACP_PAYLOAD_MAX;
    s_tacp_answers++;
    tacp_sink_t *k = s_tacp_sink;
    if (k != NULL) {
        vstr_t *v = k->out;
        if (v->alloc - v->len >= CLAW_TACP_FRAME_MAX) {
            v->len += claw_tacp_frame(sub, k->seq, payload, len, (uint8_t *)v->buf + v->len, v->alloc - v->len);
        }
        return;
    }
    #if BENTOCLAW_PORT_FIRMWARE
    tacp_claw_respond(sub, (const char *)payload, (uint16_t)len);
    #endif
}

// One request through the core, its answers to `sink` (NULL: the link), its
// work buffer on the heap for the call. Answered in every case: by the core,
// or here (an error frame of the binding's own) when no buffer could be had
// or the core sent nothing.
static claw_status_t tacp_run(tacp_sink_t *sink, uint8_t sub, const uint8_t *payload, size_t len,
    bentoclaw_ctx_t *ctx) {
    tacp_sink_t *outer = s_tacp_sink;
    s_tacp_sink = sink;
    uint32_t answers = s_tacp_answers;
    size_t work_len = claw_tacp_work_size(sub, payload, len);
    uint8_t *work = m_new_maybe(uint8_t, work_len);
    bool oom = work == NULL;
    claw_status_t s = oom ? CLAW_OK : claw_tacp_dispatch(sub, payload, len, work, work_len, ctx);
    if (!oom) {
        m_del(uint8_t, work, work_len);
    }
    if (s == CLAW_STATUS_TACP_ASK) {
        // An ASK while connected is an ask(), run as bentoclaw.ask() runs
        // it (its buffer on the heap for the call), then answered.
        size_t reply_len = 0;
        s = claw_ask_check(payload, len, &work_len);
        work = s == CLAW_OK ? m_new_maybe(uint8_t, work_len) : NULL;
        oom = s == CLAW_OK && work == NULL;
        if (work != NULL) {
            s = claw_ask(payload, len, work, work_len, ctx, &reply_len);
        }
        if (!oom) {
            s = claw_tacp_ask_done(s, work, s == CLAW_OK ? reply_len : 0);
        }
        if (work != NULL) {
            m_del(uint8_t, work, work_len);
        }
    }
    if (oom || s_tacp_answers == answers) {
        const char *why = oom ? "out of memory" : "no answer";
        claw_port_tacp_respond(0xFF, (const uint8_t *)why, strlen(why));
    }
    s_tacp_sink = outer;
    return s;
}

// Called by the vendor's tacp.c (or a board's stand-in for it) for every
// claw frame it received whole on the console UART, on the MicroPython task. Raises nothing but
// what a tool asked for once its answer is out (safe_boot's SystemExit).
void bentoclaw_tacp_dispatch(uint8_t sub, const char *payload, uint16_t len) {
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        bentoclaw_vm_check();
        bentoclaw_ensure_init();
        bentoclaw_ctx_t ctx = { MP_OBJ_NULL, MP_OBJ_NULL, MP_OBJ_NULL, !claw_session_dirty() };
        // A KeyboardInterrupt (the IDE's TERMINATE) stopped it: answered
        // "interrupted", and nothing left to raise.
        (void)bentoclaw_check(tacp_run(NULL, sub, (const uint8_t *)payload, len, &ctx), &ctx);
        nlr_pop();
    }
    // As the vendor: the heap tidied after a tool or a request (the IDE's
    // file uploads want one large block), then the reset a tool asked for.
    if (sub == 0x01 || sub == 0x02) {
        gc_collect();
    }
    if (sub == 0x01) {
        bentoclaw_c_tools_after_call();
    }
}

// The READY frame (seq 0) through the core, to `sink` (NULL: the link), its
// work buffer on the heap for the call; the core then shows the STATS card.
static claw_status_t tacp_ready(tacp_sink_t *sink) {
    size_t work_len = claw_tacp_work_size(0, NULL, 0);
    uint8_t *work = m_new(uint8_t, work_len);
    tacp_sink_t *outer = s_tacp_sink;
    s_tacp_sink = sink;
    claw_status_t s = claw_tacp_ready(BENTOCLAW_VERSION, BENTOCLAW_BOARD_NAME, work, work_len);
    s_tacp_sink = outer;
    m_del(uint8_t, work, work_len);
    return s;
}

// Called once the board is up (the vendor's mpy_main.c: after boot.py and
// main.py, before the REPL): the READY frame and the STATS card.
void bentoclaw_send_ready(void) {
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        bentoclaw_vm_check();
        bentoclaw_ensure_init();
        (void)bentoclaw_check(tacp_ready(NULL), NULL);
        nlr_pop();
    }
}

// The receiver's payload buffer, dropped when no frame is under way.
static void tacp_payload_release(void) {
    if (!claw_tacp_rx_in_frame(&s_tacp_rx) && MP_STATE_VM(bentoclaw_tacp_payload) != NULL) {
        m_del(uint8_t, MP_STATE_VM(bentoclaw_tacp_payload), CLAW_TACP_PAYLOAD_MAX);
        MP_STATE_VM(bentoclaw_tacp_payload) = NULL;
    }
}

// tacp(data): the bytes as received from the USB host, through the core's
// framer; the frames the device sends back. A frame may be split across
// calls. Bytes that are not TACP (REPL input) are dropped. TERMINATE raises
// KeyboardInterrupt once the bytes before it are done (answers dropped).
static mp_obj_t bentoclaw_tacp(mp_obj_t data_in) {
    bentoclaw_ensure_init();
    if (mp_obj_is_str(data_in)) {
        mp_raise_TypeError(MP_ERROR_TEXT("data must be bytes"));
    }
    mp_buffer_info_t bi;
    mp_get_buffer_raise(data_in, &bi, MP_BUFFER_READ);
    // A bytearray could change under a tool that runs: read a copy (of
    // anything but bytes, which cannot change).
    vstr_t in;
    vstr_init_len(&in, mp_obj_is_type(data_in, &mp_type_bytes) ? 0 : bi.len);
    const uint8_t *data = in.len == 0 ? bi.buf : memcpy(in.buf, bi.buf, bi.len);
    vstr_t out;
    vstr_init(&out, 16);
    tacp_sink_t sink = { &out, 0 };
    bool terminate = false;
    for (size_t i = 0; i < bi.len && !terminate; i++) {
        if (MP_STATE_VM(bentoclaw_tacp_payload) == NULL) {
            MP_STATE_VM(bentoclaw_tacp_payload) = m_new(uint8_t, CLAW_TACP_PAYLOAD_MAX);
        }
        claw_tacp_event_t ev;
        uint8_t *payload = MP_STATE_VM(bentoclaw_tacp_payload);
        uint8_t kind = claw_tacp_rx_push(&s_tacp_rx, data[i], mp_hal_ticks_ms(), payload,
            CLAW_TACP_PAYLOAD_MAX, &ev);
        if (kind == CLAW_TACP_EV_CONTROL && ev.bytes[0] == 0x01) {
            terminate = true;
        } else if (kind == CLAW_TACP_EV_FRAME) {
            // Room for the answer, then the request, whose payload buffer
            // it takes (a tool may call tacp() again: that takes another).
            vstr_hint_size(&out, CLAW_TACP_FRAME_MAX);
            MP_STATE_VM(bentoclaw_tacp_payload) = NULL;
            sink.seq = ev.seq;
            bentoclaw_ctx_t ctx = { MP_OBJ_NULL, MP_OBJ_NULL, MP_OBJ_NULL, !claw_session_dirty() };
            claw_status_t s = tacp_run(&sink, ev.sub, payload, ev.len, &ctx);
            m_del(uint8_t, payload, CLAW_TACP_PAYLOAD_MAX);
            if (s != CLAW_OK) {
                tacp_payload_release();
                bentoclaw_check(s, &ctx);
            }
            if (ev.sub == 0x01 || ev.sub == 0x02) {
                gc_collect();
            }
        }
    }
    vstr_clear(&in);
    tacp_payload_release();
    // A Ctrl-C or SystemExit a file operation met (claw_port_vfs.c, rule 4)
    // is raised here, inside this call, not at the VM's next check.
    claw_port_vfs_raise_pending();
    if (terminate) {
        vstr_clear(&out);
        mp_raise_type(&mp_type_KeyboardInterrupt);
    }
    // A reset a tool asked for, now that the answers are made.
    bentoclaw_c_tools_after_call();
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_1(bentoclaw_tacp_obj, bentoclaw_tacp);

// tacp_ready(): the READY frame (seq 0) the board sends once it is up.
static mp_obj_t bentoclaw_tacp_ready(void) {
    bentoclaw_ensure_init();
    vstr_t out;
    vstr_init(&out, CLAW_TACP_FRAME_MAX);
    tacp_sink_t sink = { &out, 0 };
    bentoclaw_check(tacp_ready(&sink), NULL);
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_tacp_ready_obj, bentoclaw_tacp_ready);

static mp_obj_t bentoclaw_register_tool(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = {
        REQ(name), REQ(handler),
        { MP_QSTR_risk, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
        { MP_QSTR_rate_per_min, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
        { MP_QSTR_description, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_QSTR(MP_QSTR_)} },
        { MP_QSTR_confirm, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_FALSE} },
    };
    PARSE(a);
    size_t len;
    const char *name = get_text(a[0], &len, MP_QSTR_name, CLAW_CHECK_TOOL_NAME);
    if (!mp_obj_is_callable(a[1])) {
        mp_raise_TypeError(MP_ERROR_TEXT("handler must be callable"));
    }
    uint8_t risk = (uint8_t)get_int_in(a[2], MP_QSTR_risk, 0, 2);
    uint16_t rate = (uint16_t)get_int_in(a[3], MP_QSTR_rate_per_min, 0, 65535);
    size_t dlen;
    (void)get_text(a[4], &dlen, MP_QSTR_description, CLAW_CHECK_TEXT);
    if (dlen > CLAW_TOOL_DESCRIPTION_MAX) {
        mp_raise_ValueError(MP_ERROR_TEXT("description must be 0..127 bytes"));
    }
    bool confirm = get_flag(a[5], MP_QSTR_confirm);
    // The dict first: a MemoryError leaves nothing registered.
    if (PY_TOOLS == MP_OBJ_NULL) {
        PY_TOOLS = mp_obj_new_dict(0);
    }
    mp_obj_t entry[2] = { a[1], a[4] };
    mp_obj_t tuple = mp_obj_new_tuple(2, entry);
    int32_t slot = claw_tool_register((const uint8_t *)name, len, risk, rate, confirm);
    if (slot < 0) {
        bentoclaw_raise((claw_status_t)-slot, MP_QSTRnull);
    }
    mp_obj_dict_store(PY_TOOLS, MP_OBJ_NEW_SMALL_INT(slot), tuple);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_register_tool_obj, 0, bentoclaw_register_tool);

// tools(): the vendor's dicts (name, description, risk, confirm), then the
// library's keys (rate_per_min, builtin).
static mp_obj_t bentoclaw_tools(void) {
    bentoclaw_ensure_init();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    claw_tool_info_t t;
    for (uint8_t i = 0; i < CLAW_RATE_MAX_TOOLS; i++) {
        if (!claw_tool_info(i, &t)) {
            continue;
        }
        mp_obj_t *py = t.description == NULL ? py_tool(i) : NULL;
        mp_obj_t d = mp_obj_new_dict(6);
        dict_set(d, MP_QSTR_name, str_obj(t.name));
        dict_set(d, MP_QSTR_description, py != NULL ? py[1] : str_obj(t.description != NULL ? t.description : ""));
        dict_set(d, MP_QSTR_risk, MP_OBJ_NEW_SMALL_INT(t.risk));
        dict_set(d, MP_QSTR_confirm, mp_obj_new_bool(t.confirm));
        dict_set(d, MP_QSTR_rate_per_min, MP_OBJ_NEW_SMALL_INT(t.rate_per_min));
        dict_set(d, MP_QSTR_builtin, mp_obj_new_bool(t.builtin));
        mp_obj_list_append(list, d);
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_tools_obj, bentoclaw_tools);

// execute(name, params): the vendor's — the gates, the call recorded, no
// run; `params` is not read (as the vendor's).
static mp_obj_t bentoclaw_execute(mp_obj_t name_obj, mp_obj_t params) {
    (void)params;
    bentoclaw_ensure_init();
    if (!mp_obj_is_str(name_obj)) {
        mp_raise_TypeError(MP_ERROR_TEXT("name must be str"));
    }
    size_t len;
    const char *name = mp_obj_str_get_data(name_obj, &len);
    uint8_t risk = 0;
    bool confirm = false;
    claw_status_t s = claw_execute((const uint8_t *)name, len, &risk, &confirm);
    bentoclaw_check(s == CLAW_STATUS_TOOL_NAME ? CLAW_STATUS_UNKNOWN_TOOL : s, NULL);
    mp_obj_t d = mp_obj_new_dict(4);
    dict_set(d, MP_QSTR_tool, name_obj);
    dict_set(d, MP_QSTR_status, MP_OBJ_NEW_QSTR(MP_QSTR_ready));
    dict_set(d, MP_QSTR_risk, MP_OBJ_NEW_SMALL_INT(risk));
    dict_set(d, MP_QSTR_confirm, mp_obj_new_bool(confirm));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_2(bentoclaw_execute_obj, bentoclaw_execute);

/* --- memory and session --- */

static mp_obj_t bentoclaw_remember(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(key), REQ(value) };
    PARSE(a);
    const char *key = get_text(a[0], NULL, MP_QSTR_key, CLAW_CHECK_KEY);
    return saved(claw_memory_set(key, get_text(a[1], NULL, MP_QSTR_value, CLAW_CHECK_VALUE)), "memory");
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_remember_obj, 0, bentoclaw_remember);

static mp_obj_t bentoclaw_recall(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(key) };
    PARSE(a);
    char value[CLAW_MEM_VAL_MAX];
    bool found = claw_memory_get(get_text(a[0], NULL, MP_QSTR_key, CLAW_CHECK_KEY), value, sizeof(value));
    claw_port_vfs_raise_pending();
    return found ? str_obj(value) : mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_recall_obj, 0, bentoclaw_recall);

static mp_obj_t bentoclaw_session_clear(void) {
    bentoclaw_ensure_init();
    return bentoclaw_check(claw_clear(), NULL);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_session_clear_obj, bentoclaw_session_clear);

static mp_obj_t bentoclaw_flush(void) {
    bentoclaw_ensure_init();
    return saved(!claw_session_dirty() || claw_session_flush(), "session");
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_flush_obj, bentoclaw_flush);

static mp_obj_t bentoclaw_status(void) {
    // The session's accounting: the uint32_t fields of claw_session_stats_t.
    #define ACC(key, field) { MP_QSTR_##key, offsetof(claw_session_stats_t, field) }
    static const struct { qstr_short_t key; uint8_t off; } acc[] = {
        ACC(bytes_in, in_bytes), ACC(bytes_out, out_bytes), ACC(tokens_in, in_tokens), ACC(tokens_out, out_tokens),
        ACC(context_bytes, context_bytes), ACC(exchanges, exchanges), ACC(last_active, last_active),
    };
    bentoclaw_ensure_init();
    claw_agent_status_t st;
    claw_session_stats_t ss;
    busy_unless(claw_agent_status(&st) && claw_session_stats(&ss));
    // The vendor's keys, in the vendor's order, then the library's.
    mp_obj_t d = mp_obj_new_dict(18);
    dict_set(d, MP_QSTR_state, str_obj(st.state));
    dict_set(d, MP_QSTR_exec_count, uint_obj(st.exec_count));
    dict_set(d, MP_QSTR_error_count, uint_obj(st.errors));
    dict_set(d, MP_QSTR_tool_count, uint_obj(st.tool_count));
    dict_set(d, MP_QSTR_last_cmd, str_obj(st.last_cmd));
    dict_set(d, MP_QSTR_last_result, str_obj(st.last_result));
    dict_set(d, MP_QSTR_session_msgs, uint_obj(st.session_msgs));
    dict_set(d, MP_QSTR_connected, mp_obj_new_bool(st.connected));
    dict_set(d, MP_QSTR_errors, uint_obj(st.errors));
    dict_set(d, MP_QSTR_dirty, mp_obj_new_bool(st.dirty));
    dict_set(d, MP_QSTR_pending_confirm, str_obj(st.pending_confirm));
    for (size_t i = 0; i < MP_ARRAY_SIZE(acc); i++) {
        dict_set(d, acc[i].key, uint_obj(*(const uint32_t *)((const uint8_t *)&ss + acc[i].off)));
    }
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_status_obj, bentoclaw_status);

static mp_obj_t bentoclaw_safety(void) {
    bentoclaw_ensure_init();
    claw_agent_safety_t sf;
    busy_unless(claw_agent_safety(&sf));
    // The vendor's keys, then the library's (`trust`: the name this module
    // used before it took the vendor's `trust_level`).
    mp_obj_t d = mp_obj_new_dict(6);
    dict_set(d, MP_QSTR_circuit_breaker, str_obj(sf.circuit_breaker));
    dict_set(d, MP_QSTR_cooldown_ms, uint_obj(sf.cooldown_ms));
    dict_set(d, MP_QSTR_trust_level, str_obj(sf.trust_level));
    dict_set(d, MP_QSTR_connected, mp_obj_new_bool(sf.connected));
    dict_set(d, MP_QSTR_errors, uint_obj(sf.errors));
    dict_set(d, MP_QSTR_trust, str_obj(sf.trust_level));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_safety_obj, bentoclaw_safety);

static mp_obj_t bentoclaw_search(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(query), { MP_QSTR_n, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(5)} } };
    PARSE(a);
    const char *query = get_text(a[0], NULL, MP_QSTR_query, CLAW_CHECK_TEXT);
    if (!mp_obj_is_int(a[1])) {
        mp_raise_TypeError(MP_ERROR_TEXT("n must be int"));
    }
    // n >= 1; more than CLAW_MEMORY_SEARCH_MAX is capped (a big int too).
    if (mp_obj_int_sign(a[1]) <= 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("n must be >= 1"));
    }
    mp_int_t n = mp_obj_is_small_int(a[1]) ? MP_OBJ_SMALL_INT_VALUE(a[1]) : CLAW_MEMORY_SEARCH_MAX;
    size_t max = n < CLAW_MEMORY_SEARCH_MAX ? (size_t)n : CLAW_MEMORY_SEARCH_MAX;
    claw_memory_hit_t *hits = m_new(claw_memory_hit_t, max);
    size_t got = claw_memory_search(query, hits, max);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < got && i < max; i++) {
        mp_obj_t item[3] = { str_obj(hits[i].key), str_obj(hits[i].value), MP_OBJ_NEW_SMALL_INT(hits[i].score) };
        mp_obj_list_append(list, mp_obj_new_tuple(3, item));
    }
    m_del(claw_memory_hit_t, hits, max);
    claw_port_vfs_raise_pending();
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_search_obj, 0, bentoclaw_search);

static mp_obj_t bentoclaw_forget(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(key) };
    PARSE(a);
    return saved(claw_memory_forget(get_text(a[0], NULL, MP_QSTR_key, CLAW_CHECK_KEY)), "memory");
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_forget_obj, 0, bentoclaw_forget);

static mp_obj_t bentoclaw_pin(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = { REQ(key), { MP_QSTR_on, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_TRUE} } };
    PARSE(a);
    const char *key = get_text(a[0], NULL, MP_QSTR_key, CLAW_CHECK_KEY);
    return saved(claw_memory_pin(key, get_flag(a[1], MP_QSTR_on)), "memory");
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_pin_obj, 0, bentoclaw_pin);

static mp_obj_t bentoclaw_export_memory(void) {
    bentoclaw_ensure_init();
    size_t len = claw_memory_export_size();
    uint8_t *work = m_new(uint8_t, len);
    size_t off = 0, n = 0;
    claw_status_t s = claw_memory_export(work, len, &off, &n);
    mp_obj_t ret = s == CLAW_OK ? mp_obj_new_str((const char *)work + off, n) : mp_const_none;
    m_del(uint8_t, work, len);
    bentoclaw_check(s, NULL);
    return ret;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_export_memory_obj, bentoclaw_export_memory);

static mp_obj_t bentoclaw_import_memory(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = {
        REQ(text),
        { MP_QSTR_strict, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_FALSE} },
        { MP_QSTR_skipped, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
    };
    PARSE(a);
    size_t len;
    const char *text = get_text(a[0], &len, MP_QSTR_text, CLAW_CHECK_TEXT);
    bool strict = get_flag(a[1], MP_QSTR_strict);
    mp_obj_t skipped = a[2];
    if (skipped != mp_const_none && !mp_obj_is_type(skipped, &mp_type_list)) {
        mp_raise_TypeError(MP_ERROR_TEXT("skipped must be a list or None"));
    }
    // The skipped lines come back as (line, why) pairs in `bad`.
    size_t bad_max = len / 2 + 1;
    claw_import_bad_t *bad = m_new(claw_import_bad_t, bad_max);
    uint8_t *work = m_new(uint8_t, CLAW_IMPORT_WORK);
    claw_import_result_t r;
    claw_status_t s = claw_memory_import((const uint8_t *)text, len, strict, work, bad, bad_max, &r);
    m_del(uint8_t, work, CLAW_IMPORT_WORK);
    for (size_t i = 0; s == CLAW_OK && skipped != mp_const_none && i < r.bad && i < bad_max; i++) {
        mp_obj_t item[2] = { uint_obj(bad[i].line), str_obj(claw_import_why_text(bad[i].why)) };
        mp_obj_list_append(skipped, mp_obj_new_tuple(2, item));
    }
    m_del(claw_import_bad_t, bad, bad_max);
    claw_port_vfs_raise_pending();
    if (r.line > 0 && s == CLAW_STATUS_IMPORT_LINE) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("line %u: %s"), (unsigned)r.line,
            claw_import_why_text(r.why));
    }
    if (s == CLAW_STATUS_IMPORT_WRITE) {
        mp_raise_msg_varg(&mp_type_OSError, MP_ERROR_TEXT("memory write failed at line %u (%u pairs stored before it)"),
            (unsigned)r.line, (unsigned)r.keys);
    }
    bentoclaw_check(s, NULL);
    return uint_obj(r.keys);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_import_memory_obj, 0, bentoclaw_import_memory);

/* --- config, archive, session --- */

static mp_obj_t bentoclaw_config(size_t n_args, const mp_obj_t *args, mp_map_t *kw) {
    (void)args;
    bentoclaw_ensure_init();
    if (n_args != 0) {
        mp_raise_TypeError(MP_ERROR_TEXT("config() takes keyword arguments only"));
    }
    int32_t v[CLAW_CONFIG_KEYS];
    busy_unless(claw_config_get(v));
    uint32_t mask = 0;
    claw_config_key_t d;
    for (size_t k = 0; k < kw->alloc; k++) {
        if (!mp_map_slot_is_filled(kw, k)) {
            continue;
        }
        size_t nl;
        const char *name = mp_obj_str_get_data(kw->table[k].key, &nl);
        int32_t i = claw_config_index((const uint8_t *)name, nl);
        if (i < 0 || !claw_config_key((size_t)i, &d)) {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("unknown config key '%s' (keys: %s)"),
                name, claw_config_names());
        }
        mp_obj_t val = kw->table[k].value;
        qstr q = mp_obj_str_get_qstr(kw->table[k].key);
        if (!d.is_bool) {
            v[i] = (int32_t)get_int_in(val, q, d.lo, d.hi);
        } else if (mp_obj_is_bool(val) || (mp_obj_is_small_int(val) && (MP_OBJ_SMALL_INT_VALUE(val) >> 1) == 0)) {
            v[i] = mp_obj_is_true(val);
        } else {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be bool"), q);
        }
        mask |= 1u << i;
    }
    int32_t r = claw_config_set(v, mask);
    claw_port_vfs_raise_pending();
    if (r > 0) {
        char path[48];
        raise_io((int)r, "config", claw_io_error(path, sizeof(path)) ? path : "its file");
    }
    busy_unless(r == 0);
    (void)claw_config_get(v);
    mp_obj_t dict = mp_obj_new_dict(CLAW_CONFIG_KEYS);
    for (size_t i = 0; i < CLAW_CONFIG_KEYS; i++) {
        if (claw_config_key(i, &d)) {
            mp_obj_dict_store(dict, str_obj(d.name), d.is_bool ? mp_obj_new_bool(v[i]) : mp_obj_new_int(v[i]));
        }
    }
    return dict;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_config_obj, 0, bentoclaw_config);

static mp_obj_t bentoclaw_archive(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    static const mp_arg_t allowed[] = {
        { MP_QSTR_offset, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
        { MP_QSTR_n, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(1024)} },
    };
    PARSE(a);
    mp_int_t off = get_int_in(a[0], MP_QSTR_offset, 0, 0x3fffffff);
    mp_int_t n = get_int_in(a[1], MP_QSTR_n, 1, CLAW_REPLY_MAX);
    vstr_t v;
    vstr_init_len(&v, (size_t)n);
    size_t got = claw_archive_read((uint32_t)off, v.buf, (size_t)n);
    v.len = got <= (size_t)n ? got : 0;
    claw_port_vfs_raise_pending();
    return mp_obj_new_bytes_from_vstr(&v);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_archive_obj, 0, bentoclaw_archive);

static mp_obj_t bentoclaw_session(void) {
    static const char *const roles[] = { "user", "assistant", "system", "tool", "summary" };
    bentoclaw_ensure_init();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    char buf[CLAW_MSG_MAX_LEN];
    uint8_t role;
    for (uint16_t i = 0; claw_session_message(i, &role, buf, sizeof(buf)); i++) {
        mp_obj_t items[2] = { str_obj(role < MP_ARRAY_SIZE(roles) ? roles[role] : "unknown"), str_obj(buf) };
        mp_obj_list_append(list, mp_obj_new_tuple(2, items));
    }
    claw_port_vfs_raise_pending();
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_session_obj, bentoclaw_session);

// The context the next ask() would send, in `max` bytes (empty when it does
// not fit), as str or bytes.
static mp_obj_t context_text(size_t max, bool as_bytes) {
    bentoclaw_ensure_init();
    vstr_t v;
    vstr_init_len(&v, max);
    size_t n = claw_session_build_context(v.buf, max);
    v.len = n < max ? n : 0;
    claw_port_vfs_raise_pending();
    return as_bytes ? mp_obj_new_bytes_from_vstr(&v) : mp_obj_new_str_from_vstr(&v);
}

// history(): the vendor's — the context text in 3072 bytes (its s_work_large).
static mp_obj_t bentoclaw_history(void) {
    return context_text(3072, false);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_history_obj, bentoclaw_history);

static mp_obj_t bentoclaw_version(void) {
    return mp_obj_new_str(BENTOCLAW_VERSION, strlen(BENTOCLAW_VERSION));
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_version_obj, bentoclaw_version);

#if !BENTOCLAW_PORT_FIRMWARE
// The unix port's test hooks (the UI log and the clock: claw_transport.h).
// _context(): that context as bytes, CONTEXT_MAX at most (nothing sent, no turn).
static mp_obj_t bentoclaw__context(void) {
    return context_text(CLAW_CONTEXT_MAX + 1, true);
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw__context_obj, bentoclaw__context);

static mp_obj_t bentoclaw__ui_events(void) {
    bentoclaw_ensure_init();
    return bentoclaw_ui_events();
}
static MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw__ui_events_obj, bentoclaw__ui_events);

// _clock() -> the RTC seconds the core sees; _clock(s) fixes it at s;
// _clock(None) goes back to the real clock.
static mp_obj_t bentoclaw__clock(size_t n_args, const mp_obj_t *args) {
    bentoclaw_ensure_init();
    bentoclaw_clock_set(n_args, args);
    uint32_t now = claw_port_time_s();
    return mp_obj_new_int_from_uint(now >= CLAW_RTC_SET_AFTER ? now : 0);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(bentoclaw__clock_obj, 0, 1, bentoclaw__clock);
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
    { MP_ROM_QSTR(MP_QSTR_confirm), MP_ROM_PTR(&bentoclaw_confirm_obj) },
    { MP_ROM_QSTR(MP_QSTR_register_tool), MP_ROM_PTR(&bentoclaw_register_tool_obj) },
    { MP_ROM_QSTR(MP_QSTR_tools), MP_ROM_PTR(&bentoclaw_tools_obj) },
    { MP_ROM_QSTR(MP_QSTR_execute), MP_ROM_PTR(&bentoclaw_execute_obj) },
    { MP_ROM_QSTR(MP_QSTR_history), MP_ROM_PTR(&bentoclaw_history_obj) },
    { MP_ROM_QSTR(MP_QSTR_version), MP_ROM_PTR(&bentoclaw_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_tacp), MP_ROM_PTR(&bentoclaw_tacp_obj) },
    { MP_ROM_QSTR(MP_QSTR_tacp_ready), MP_ROM_PTR(&bentoclaw_tacp_ready_obj) },
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
    { MP_ROM_QSTR(MP_QSTR_PROMPT_MAX), MP_ROM_INT(CLAW_PROMPT_MAX) },
    { MP_ROM_QSTR(MP_QSTR_CONTEXT_MAX), MP_ROM_INT(CLAW_CONTEXT_MAX) },
    { MP_ROM_QSTR(MP_QSTR_REPLY_MAX), MP_ROM_INT(CLAW_REPLY_MAX) },
    { MP_ROM_QSTR(MP_QSTR_TOOL_ROUNDS_MAX), MP_ROM_INT(CLAW_TOOL_ROUNDS_MAX) },
    { MP_ROM_QSTR(MP_QSTR_CALL_REQUESTS_MAX), MP_ROM_INT(CLAW_CALL_REQUESTS_MAX) },
    { MP_ROM_QSTR(MP_QSTR_CALL_DEPTH_MAX), MP_ROM_INT(CLAW_CALL_DEPTH_MAX) },
    { MP_ROM_QSTR(MP_QSTR_ARCHIVE_MAX), MP_ROM_INT(CLAW_ARCHIVE_MAX) },
};
static MP_DEFINE_CONST_DICT(bentoclaw_module_globals, bentoclaw_module_globals_table);

const mp_obj_module_t mp_module_bentoclaw = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&bentoclaw_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_bentoclaw, mp_module_bentoclaw);
