/*
 * modvclaw.c — the test module `vclaw`: the archive's 22 functions called
 * the way the vendor's own binding (the SDK's bento_libs/claw/common/mpy/
 * modbentoclaw.c; ../shared/spec/VENDOR-SDK.md §1–§2, §4) calls them, so that
 * the tests can check that our archive behaves under it. Written from those
 * call sequences; none of the vendor's code.
 *
 * What it keeps of the vendor binding:
 *  - ensure_init() behind a plain C static: once per hard boot, so a soft
 *    reset calls no _init again (`goto soft_reset` does not clear .bss);
 *  - the registry of 32 tools (29 always, radar/capsense/potentiometer with
 *    their BSP options) with their per-minute limits, each installed with
 *    claw_rate_set();
 *  - execute(): claw_cb_allow -> claw_trust_allows(risk) -> claw_rate_check
 *    -> claw_rate_record, the TOOL turn "execute: NAME", claw_cb_success,
 *    and the vendor's exception texts;
 *  - ask(): claw_cb_allow, the USER turn, claw_session_build_context(buf,
 *    3072 - 256), then claw_cb_failure or claw_cb_success and the ASSISTANT
 *    turn; history(): build_context(buf, 3072); remember(); session_clear();
 *  - no claw_session_flush() anywhere, and no control of the VFS port
 *    (claw_port_vfs_*): an exception a file operation met is raised by the
 *    VM, not by this module.
 * What differs: no transport (ask(prompt, reply) takes the backend's answer,
 * None for a failed request, and returns the context it would have sent;
 * connect(ok) the transport's), no UI messages, no TACP.
 *
 * Test helpers, not of the vendor's module: _recall(key), _dirty(),
 * _count(), idle() (the one line of the firmware's idle point,
 * docs/BUILD.md), _hard_boot() (what a power cycle does to the RAM state:
 * ensure_init runs again), _stale_files() (the port's file slots set, as a
 * previous VM's would be), and off_task(ops): the given claw_* calls made
 * from another task — a pthread on a POSIX host, an interrupt handler on a
 * bare-metal Cortex-M board (board_run_in_irq()) — with their results.
 */
#include <string.h>

#include "py/obj.h"
#include "py/runtime.h"

#include "claw_safety.h"
#include "claw_session.h"

/* --- The vendor's registry (VENDOR-SDK.md §4.1), in its order --- */

typedef struct {
    const char *name;
    uint8_t risk;
    bool confirm;
    uint16_t rate_per_min;
} vclaw_tool_t;

static const vclaw_tool_t s_tools[] = {
    { "gpio_set", 1, false, 30 },
    { "gpio_read", 0, false, 60 },
    { "sensor_read_all", 0, false, 30 },
    { "lcd_console", 1, false, 20 },
    { "ui_notify", 1, false, 10 },
    { "wifi_status", 0, false, 10 },
    { "trustm_info", 0, false, 5 },
    { "trustm_sign", 2, true, 2 },
    { "joystick_read", 0, false, 60 },
    { "rule_set", 2, true, 5 },
    { "rule_clear", 2, true, 2 },
    { "diagnostics_read", 0, false, 10 },
    { "rtc_read", 0, false, 60 },
    { "radar_read", 0, false, 30 }, // BSP_HAS_RADAR
    { "heap_info", 0, false, 10 },
    { "fs_list", 0, false, 10 },
    { "fs_stat", 0, false, 30 },
    { "fs_read", 0, false, 10 },
    { "py_exec", 2, true, 5 },
    { "wifi_scan", 0, false, 2 },
    { "wifi_ping", 0, false, 5 },
    { "wifi_packet_stats", 0, false, 10 },
    { "ntp_status", 0, false, 30 },
    { "rtc_set", 2, true, 5 },
    { "fs_write", 2, true, 5 },
    { "fs_delete", 2, true, 5 },
    { "trustm_random", 0, false, 10 },
    { "trustm_sha256", 0, false, 10 },
    { "hard_reset", 2, true, 1 },
    { "safe_boot", 2, true, 1 },
    { "capsense_read", 0, false, 30 },      // BSP_HAS_CAPSENSE
    { "potentiometer_read", 0, false, 30 }, // BSP_HAS_POTENTIOMETER
};
#define TOOL_COUNT (sizeof(s_tools) / sizeof(s_tools[0]))

/* --- The binding's state: C statics, as the vendor's --- */

static bool s_module_inited;
// Set once this binding has initialised the core: from then on the image is
// a firmware whose binding is the vendor's (one binding per firmware). The
// emulated board reads it (weakly) and leaves READY to that binding, which
// vclaw does not implement, instead of calling bentoclaw's, whose
// ensure_init would initialise the core again at every VM start.
bool vclaw_is_the_binding;
static uint16_t s_exec_count, s_error_count;
static char s_work_large[3072];

static void ensure_init(void) {
    if (s_module_inited) {
        return;
    }
    claw_rate_init();
    claw_cb_init();
    claw_session_init();
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        if (s_tools[i].rate_per_min > 0) {
            claw_rate_set(s_tools[i].name, s_tools[i].rate_per_min);
        }
    }
    s_module_inited = true;
    vclaw_is_the_binding = true;
}

// RuntimeError(text): a str object, as the texts hold non-ASCII (the em
// dash) that MP_ERROR_TEXT may not carry.
static NORETURN void raise_runtime(const char *text) {
    nlr_raise(mp_obj_new_exception_arg1(&mp_type_RuntimeError, mp_obj_new_str(text, strlen(text))));
}

static void dict_set(mp_obj_t d, const char *key, mp_obj_t value) {
    mp_obj_dict_store(d, mp_obj_new_str(key, strlen(key)), value);
}

static mp_obj_t str_of(const char *s) {
    return mp_obj_new_str(s, strlen(s));
}

static mp_obj_t vclaw_tools(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        mp_obj_t d = mp_obj_new_dict(4);
        dict_set(d, "name", str_of(s_tools[i].name));
        dict_set(d, "risk", MP_OBJ_NEW_SMALL_INT(s_tools[i].risk));
        dict_set(d, "confirm", mp_obj_new_bool(s_tools[i].confirm));
        dict_set(d, "rate_per_min", MP_OBJ_NEW_SMALL_INT(s_tools[i].rate_per_min));
        mp_obj_list_append(list, d);
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_tools_obj, vclaw_tools);

static mp_obj_t vclaw_execute(mp_obj_t name_obj, mp_obj_t params) {
    (void)params; // the vendor's execute() never reads it
    ensure_init();
    size_t len;
    const char *name = mp_obj_str_get_data(name_obj, &len);
    const vclaw_tool_t *t = NULL;
    for (size_t i = 0; i < TOOL_COUNT && t == NULL; i++) {
        if (strlen(s_tools[i].name) == len && memcmp(s_tools[i].name, name, len) == 0) {
            t = &s_tools[i];
        }
    }
    if (t == NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("unknown tool"));
    }
    if (!claw_cb_allow()) {
        s_error_count++;
        raise_runtime("circuit breaker open \xe2\x80\x94 cooldown active");
    }
    if (!claw_trust_allows(t->risk)) {
        s_error_count++;
        raise_runtime("tool risk exceeds transport trust level");
    }
    if (!claw_rate_check(t->name)) {
        s_error_count++;
        raise_runtime("rate limit exceeded for this tool");
    }
    claw_rate_record(t->name);
    s_exec_count++;
    char entry[CLAW_MSG_MAX_LEN];
    size_t n = strlen(t->name);
    memcpy(entry, "execute: ", 9);
    memcpy(entry + 9, t->name, n + 1);
    claw_session_add(CLAW_ROLE_TOOL, entry);
    claw_cb_success();
    mp_obj_t d = mp_obj_new_dict(4);
    dict_set(d, "tool", str_of(t->name));
    dict_set(d, "status", str_of("ready"));
    dict_set(d, "risk", MP_OBJ_NEW_SMALL_INT(t->risk));
    dict_set(d, "confirm", mp_obj_new_bool(t->confirm));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_2(vclaw_execute_obj, vclaw_execute);

// ask(prompt, reply): the vendor's ask() with the backend's answer given
// (None: the request failed). Returns the context the request would carry.
static mp_obj_t vclaw_ask(mp_obj_t prompt_obj, mp_obj_t reply) {
    ensure_init();
    const char *prompt = mp_obj_str_get_str(prompt_obj);
    if (!claw_cb_allow()) {
        raise_runtime("circuit breaker open");
    }
    claw_session_add(CLAW_ROLE_USER, prompt);
    size_t n = claw_session_build_context(s_work_large, sizeof(s_work_large) - 256);
    mp_obj_t context = mp_obj_new_str(s_work_large, n < sizeof(s_work_large) ? n : 0);
    if (reply == mp_const_none) {
        s_error_count++;
        claw_cb_failure();
        raise_runtime("HTTPS request failed");
    }
    claw_cb_success();
    claw_session_add(CLAW_ROLE_ASSISTANT, mp_obj_str_get_str(reply));
    return context;
}
static MP_DEFINE_CONST_FUN_OBJ_2(vclaw_ask_obj, vclaw_ask);

// connect(ok): the vendor's connect() with the transport's answer given.
static mp_obj_t vclaw_connect(mp_obj_t ok) {
    ensure_init();
    claw_trust_set(CLAW_TRUST_HTTPS);
    if (!mp_obj_is_true(ok)) {
        claw_trust_set(CLAW_TRUST_USB);
        return mp_const_false;
    }
    claw_session_add(CLAW_ROLE_SYSTEM, "Connected to TESAIoT backend");
    return mp_const_true;
}
static MP_DEFINE_CONST_FUN_OBJ_1(vclaw_connect_obj, vclaw_connect);

// disconnect(): no ensure_init in the vendor's either.
static mp_obj_t vclaw_disconnect(void) {
    claw_trust_set(CLAW_TRUST_USB);
    claw_session_add(CLAW_ROLE_SYSTEM, "Disconnected from backend");
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_disconnect_obj, vclaw_disconnect);

static mp_obj_t vclaw_remember(mp_obj_t key, mp_obj_t value) {
    ensure_init();
    return mp_obj_new_bool(claw_memory_set(mp_obj_str_get_str(key), mp_obj_str_get_str(value)));
}
static MP_DEFINE_CONST_FUN_OBJ_2(vclaw_remember_obj, vclaw_remember);

static mp_obj_t vclaw_history(void) {
    ensure_init();
    size_t n = claw_session_build_context(s_work_large, sizeof(s_work_large));
    return mp_obj_new_str(s_work_large, n < sizeof(s_work_large) ? n : 0);
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_history_obj, vclaw_history);

static mp_obj_t vclaw_session_clear(void) {
    ensure_init();
    claw_session_clear();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_session_clear_obj, vclaw_session_clear);

static mp_obj_t vclaw_safety(void) {
    static const char *const cb[] = { "closed", "open", "half-open" };
    static const char *const trust[] = { "none", "https", "usb" };
    ensure_init();
    uint8_t s = claw_cb_state();
    uint8_t l = claw_trust_get();
    mp_obj_t d = mp_obj_new_dict(3);
    dict_set(d, "circuit_breaker", str_of(s < 3 ? cb[s] : "unknown"));
    dict_set(d, "cooldown_ms", mp_obj_new_int_from_uint(claw_cb_cooldown_remaining()));
    dict_set(d, "trust_level", str_of(l < 3 ? trust[l] : "unknown"));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_safety_obj, vclaw_safety);

static mp_obj_t vclaw_status(void) {
    ensure_init();
    mp_obj_t d = mp_obj_new_dict(4);
    dict_set(d, "exec_count", MP_OBJ_NEW_SMALL_INT(s_exec_count));
    dict_set(d, "error_count", MP_OBJ_NEW_SMALL_INT(s_error_count));
    dict_set(d, "tool_count", MP_OBJ_NEW_SMALL_INT(TOOL_COUNT));
    dict_set(d, "session_msgs", MP_OBJ_NEW_SMALL_INT(claw_session_count()));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_status_obj, vclaw_status);

/* --- Test helpers --- */

static mp_obj_t vclaw__recall(mp_obj_t key) {
    ensure_init();
    char v[CLAW_MEM_VAL_MAX];
    return claw_memory_get(mp_obj_str_get_str(key), v, sizeof(v)) ? str_of(v) : mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(vclaw__recall_obj, vclaw__recall);

static mp_obj_t vclaw__dirty(void) {
    return mp_obj_new_bool(claw_session_dirty());
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw__dirty_obj, vclaw__dirty);

static mp_obj_t vclaw__count(void) {
    return MP_OBJ_NEW_SMALL_INT(claw_session_count());
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw__count_obj, vclaw__count);

// The firmware's idle point (docs/BUILD.md): the one line beside
// wifi_creds_flush_if_dirty() in mpy_main.c.
static mp_obj_t vclaw_idle(void) {
    return mp_obj_new_bool(claw_session_flush());
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw_idle_obj, vclaw_idle);

// A power cycle, as far as RAM goes: ensure_init runs again at the next
// call, and trust rests at USB.
static mp_obj_t vclaw__hard_boot(void) {
    s_module_inited = false;
    s_exec_count = s_error_count = 0;
    claw_trust_set(CLAW_TRUST_USB);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw__hard_boot_obj, vclaw__hard_boot);

// Every slot of the VFS port's file table (its root pointer) holding an
// object, as files of a previous VM would: the next core call must forget
// them (rule 5 of mpy/claw_port_vfs.c), or every open fails (EMFILE).
static mp_obj_t vclaw__stale_files(void) {
    for (size_t i = 0; i < 3; i++) {
        MP_STATE_VM(bentoclaw_port_files)[i] = mp_obj_new_bytearray(4, "file");
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(vclaw__stale_files_obj, vclaw__stale_files);

/* --- off_task(ops): claw_* calls from another task ---
 * ops: a list of tuples (name, args...), one of the 22 each. They are turned
 * into C values here, on the MicroPython task; the other task runs them and
 * touches no Python object; the results become Python values back here. */

#define OFF_MAX_OPS 32
#define OFF_STR_MAX 64

typedef enum {
    OP_SESSION_INIT, OP_SESSION_ADD, OP_SESSION_COUNT, OP_SESSION_CLEAR, OP_BUILD_CONTEXT,
    OP_MEMORY_SET, OP_MEMORY_GET, OP_SESSION_DIRTY, OP_SESSION_FLUSH,
    OP_CB_INIT, OP_CB_ALLOW, OP_CB_SUCCESS, OP_CB_FAILURE, OP_CB_STATE, OP_CB_COOLDOWN,
    OP_RATE_INIT, OP_RATE_CHECK, OP_RATE_RECORD, OP_RATE_SET,
    OP_TRUST_SET, OP_TRUST_GET, OP_TRUST_ALLOWS, OP_COUNT
} off_op_t;

static const char *const s_op_names[OP_COUNT] = {
    "session_init", "session_add", "session_count", "session_clear", "session_build_context",
    "memory_set", "memory_get", "session_dirty", "session_flush",
    "cb_init", "cb_allow", "cb_success", "cb_failure", "cb_state", "cb_cooldown_remaining",
    "rate_init", "rate_check", "rate_record", "rate_set",
    "trust_set", "trust_get", "trust_allows",
};

typedef struct {
    off_op_t op;
    uint32_t n;           // an integer argument (role, limit, level, risk)
    char a[OFF_STR_MAX];  // a string argument (content, key, tool name)
    char b[OFF_STR_MAX];  // a second one (value)
    uint32_t ret;         // the result
    char out[OFF_STR_MAX];
    bool out_untouched;
} off_call_t;

static off_call_t s_off[OFF_MAX_OPS];
static size_t s_off_n;

static void off_run(void *arg) {
    (void)arg;
    for (size_t i = 0; i < s_off_n; i++) {
        off_call_t *c = &s_off[i];
        memset(c->out, 0x55, sizeof(c->out));
        switch (c->op) {
            case OP_SESSION_INIT: claw_session_init(); break;
            case OP_SESSION_ADD: c->ret = claw_session_add((claw_role_t)c->n, c->a); break;
            case OP_SESSION_COUNT: c->ret = claw_session_count(); break;
            case OP_SESSION_CLEAR: claw_session_clear(); break;
            case OP_BUILD_CONTEXT: c->ret = (uint32_t)claw_session_build_context(c->out, sizeof(c->out)); break;
            case OP_MEMORY_SET: c->ret = claw_memory_set(c->a, c->b); break;
            case OP_MEMORY_GET: c->ret = claw_memory_get(c->a, c->out, sizeof(c->out)); break;
            case OP_SESSION_DIRTY: c->ret = claw_session_dirty(); break;
            case OP_SESSION_FLUSH: c->ret = claw_session_flush(); break;
            case OP_CB_INIT: claw_cb_init(); break;
            case OP_CB_ALLOW: c->ret = claw_cb_allow(); break;
            case OP_CB_SUCCESS: claw_cb_success(); break;
            case OP_CB_FAILURE: claw_cb_failure(); break;
            case OP_CB_STATE: c->ret = claw_cb_state(); break;
            case OP_CB_COOLDOWN: c->ret = claw_cb_cooldown_remaining(); break;
            case OP_RATE_INIT: claw_rate_init(); break;
            case OP_RATE_CHECK: c->ret = claw_rate_check(c->a); break;
            case OP_RATE_RECORD: claw_rate_record(c->a); break;
            case OP_RATE_SET: claw_rate_set(c->a, (uint16_t)c->n); break;
            case OP_TRUST_SET: claw_trust_set((claw_trust_level_t)c->n); break;
            case OP_TRUST_GET: c->ret = claw_trust_get(); break;
            case OP_TRUST_ALLOWS: c->ret = claw_trust_allows((uint8_t)c->n); break;
            default: break;
        }
        c->out_untouched = c->out[0] == 0x55 && c->out[sizeof(c->out) - 1] == 0x55;
    }
}

// Runs off_run on another task; false when this build has none.
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
static void *off_thread(void *arg) {
    off_run(arg);
    return NULL;
}
static bool off_task_run(void) {
    pthread_t th;
    if (pthread_create(&th, NULL, off_thread, NULL) != 0) {
        return false;
    }
    return pthread_join(th, NULL) == 0;
}
#else
// The board's (tests/qemu/boards/MPS2_AN505/board.c): runs fn(arg) in an
// interrupt handler; true when it ran. A board without one has no other task.
MP_WEAK bool board_run_in_irq(void (*fn)(void *), void *arg) {
    (void)fn;
    (void)arg;
    return false;
}
static bool off_task_run(void) {
    return board_run_in_irq(off_run, NULL);
}
#endif

static void off_str(char *dst, mp_obj_t s) {
    size_t len;
    const char *p = mp_obj_str_get_data(s, &len);
    if (len >= OFF_STR_MAX) {
        mp_raise_ValueError(MP_ERROR_TEXT("argument too long"));
    }
    memcpy(dst, p, len);
    dst[len] = 0;
}

static mp_obj_t vclaw_off_task(mp_obj_t ops) {
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(ops, &n, &items);
    if (n > OFF_MAX_OPS) {
        mp_raise_ValueError(MP_ERROR_TEXT("too many ops"));
    }
    memset(s_off, 0, sizeof(s_off));
    for (size_t i = 0; i < n; i++) {
        size_t k;
        mp_obj_t *t;
        mp_obj_get_array(items[i], &k, &t);
        const char *name = k > 0 ? mp_obj_str_get_str(t[0]) : "";
        size_t op = 0;
        while (op < OP_COUNT && strcmp(s_op_names[op], name) != 0) {
            op++;
        }
        if (op == OP_COUNT) {
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("unknown op '%s'"), name);
        }
        off_call_t *c = &s_off[i];
        c->op = (off_op_t)op;
        size_t strs = 0;
        for (size_t j = 1; j < k; j++) {
            if (mp_obj_is_int(t[j])) {
                c->n = (uint32_t)mp_obj_get_int(t[j]);
            } else if (strs < 2) {
                off_str(strs++ == 0 ? c->a : c->b, t[j]);
            }
        }
    }
    s_off_n = n;
    if (!off_task_run()) {
        mp_raise_msg(&mp_type_OSError, MP_ERROR_TEXT("no other task to run on"));
    }
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        off_call_t *c = &s_off[i];
        mp_obj_t r;
        switch (c->op) {
            case OP_SESSION_ADD: case OP_SESSION_DIRTY: case OP_SESSION_FLUSH: case OP_MEMORY_SET:
            case OP_CB_ALLOW: case OP_RATE_CHECK: case OP_TRUST_ALLOWS:
                r = mp_obj_new_bool(c->ret);
                break;
            case OP_MEMORY_GET: // the value, or (False, whether out was untouched)
                if (c->ret) {
                    r = str_of(c->out);
                } else {
                    mp_obj_t pair[2] = { mp_const_false, mp_obj_new_bool(c->out_untouched) };
                    r = mp_obj_new_tuple(2, pair);
                }
                break;
            case OP_BUILD_CONTEXT: { // (n, the text up to the NUL or None)
                void *nul = memchr(c->out, 0, sizeof(c->out));
                mp_obj_t pair[2] = {
                    MP_OBJ_NEW_SMALL_INT(c->ret),
                    nul ? mp_obj_new_str(c->out, (const char *)nul - c->out) : mp_const_none,
                };
                r = mp_obj_new_tuple(2, pair);
                break;
            }
            case OP_SESSION_COUNT: case OP_CB_STATE: case OP_CB_COOLDOWN: case OP_TRUST_GET:
                r = mp_obj_new_int_from_uint(c->ret);
                break;
            default:
                r = mp_const_none;
                break;
        }
        mp_obj_list_append(list, r);
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(vclaw_off_task_obj, vclaw_off_task);

static const mp_rom_map_elem_t vclaw_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_vclaw) },
    { MP_ROM_QSTR(MP_QSTR_tools), MP_ROM_PTR(&vclaw_tools_obj) },
    { MP_ROM_QSTR(MP_QSTR_execute), MP_ROM_PTR(&vclaw_execute_obj) },
    { MP_ROM_QSTR(MP_QSTR_ask), MP_ROM_PTR(&vclaw_ask_obj) },
    { MP_ROM_QSTR(MP_QSTR_connect), MP_ROM_PTR(&vclaw_connect_obj) },
    { MP_ROM_QSTR(MP_QSTR_disconnect), MP_ROM_PTR(&vclaw_disconnect_obj) },
    { MP_ROM_QSTR(MP_QSTR_remember), MP_ROM_PTR(&vclaw_remember_obj) },
    { MP_ROM_QSTR(MP_QSTR_history), MP_ROM_PTR(&vclaw_history_obj) },
    { MP_ROM_QSTR(MP_QSTR_session_clear), MP_ROM_PTR(&vclaw_session_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_safety), MP_ROM_PTR(&vclaw_safety_obj) },
    { MP_ROM_QSTR(MP_QSTR_status), MP_ROM_PTR(&vclaw_status_obj) },
    { MP_ROM_QSTR(MP_QSTR__recall), MP_ROM_PTR(&vclaw__recall_obj) },
    { MP_ROM_QSTR(MP_QSTR__dirty), MP_ROM_PTR(&vclaw__dirty_obj) },
    { MP_ROM_QSTR(MP_QSTR__count), MP_ROM_PTR(&vclaw__count_obj) },
    { MP_ROM_QSTR(MP_QSTR_idle), MP_ROM_PTR(&vclaw_idle_obj) },
    { MP_ROM_QSTR(MP_QSTR__hard_boot), MP_ROM_PTR(&vclaw__hard_boot_obj) },
    { MP_ROM_QSTR(MP_QSTR__stale_files), MP_ROM_PTR(&vclaw__stale_files_obj) },
    { MP_ROM_QSTR(MP_QSTR_off_task), MP_ROM_PTR(&vclaw_off_task_obj) },
    { MP_ROM_QSTR(MP_QSTR_TOOL_COUNT), MP_ROM_INT(TOOL_COUNT) },
};
static MP_DEFINE_CONST_DICT(vclaw_module_globals, vclaw_module_globals_table);

const mp_obj_module_t mp_module_vclaw = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&vclaw_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_vclaw, mp_module_vclaw);
