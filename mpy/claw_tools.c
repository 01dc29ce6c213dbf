/*
 * claw_tools.c — the tools of the vendor registry (src/agent/registry.rs)
 * that MicroPython does on any port: the files, the GC heap, the clock,
 * Python code, random bytes and hashes, the automation rules; in firmware
 * builds also the LCD console and the resets. They answer what the vendor's
 * answer (its JSON shapes and error texts, VENDOR-SDK.md §4.1), with these
 * improvements: JSON string arguments are read whole and unescaped (the
 * vendor's cut them to 127 bytes), every string written into an answer is
 * escaped, an answer never runs past its buffer, and a KeyboardInterrupt
 * inside a tool stops the call instead of becoming an answer.
 *
 * The hardware tools (gpio_*, sensors, Wi-Fi, joystick, radar, OPTIGA) are
 * the firmware's: it registers its own table with claw_tools_register(),
 * before MicroPython starts, and a name it registers runs its handler.
 *
 * Each handler runs inside claw_port_tool()'s exception handler (an
 * exception it does not catch becomes the tool's error) and returns the
 * length of its answer in out[0..out_max).
 */
#include <string.h>

#include "py/gc.h"
#include "py/builtin.h"
#include "py/compile.h"
#include "py/mphal.h"
#include "py/runtime.h"

#include "claw_safety.h"
#include "claw_tools.h"

/* --- Answers: a capped writer and JSON strings --- */

void bentoclaw_answer_strn(void *data, const char *s, size_t n) {
    answer_t *a = data;
    size_t room = a->max - a->len;
    n = n < room ? n : room;
    memcpy(a->buf + a->len, s, n);
    a->len += n;
}

#define ANSWER(a, out, out_max) \
    answer_t a = { (out), (out_max), 0 }; \
    mp_print_t a##_p = { &a, bentoclaw_answer_strn }
#define PUT(a, ...) mp_printf(&a##_p, __VA_ARGS__)

// s[0..n) as a JSON string, quotes included: `"` `\` and control characters
// escaped, bytes that are not UTF-8 as U+FFFD, cut on a character boundary
// when the answer is full (leaving room for `tail` more bytes).
static void put_json(answer_t *a, mp_print_t *p, const char *s, size_t n, size_t tail) {
    size_t stop = a->max > tail + 1 ? a->max - tail - 1 : 0;
    mp_print_str(p, "\"");
    for (size_t i = 0; i < n && a->len + 6 < stop;) {
        uint8_t c = (uint8_t)s[i];
        size_t w = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        size_t whole = w > 0 && i + w <= n ? claw_text_prefix((const uint8_t *)s + i, w) : 0;
        if (c == '"' || c == '\\') {
            mp_printf(p, "\\%c", c);
        } else if (c == '\n') {
            mp_print_str(p, "\\n");
        } else if (c < 0x20 || c == 0x7f) {
            mp_printf(p, "\\u%04x", c);
        } else if (whole == w) {
            bentoclaw_answer_strn(a, s + i, w);
        } else {
            mp_print_str(p, "\\ufffd");
            w = 1;
        }
        i += w;
    }
    mp_print_str(p, "\"");
}

#define PUT_JSON(a, s, n, tail) put_json(&a, &a##_p, (s), (n), (tail))

// A str's data.
static const char *str_of(mp_obj_t o, size_t *n) {
    return mp_obj_str_get_data(o, n);
}

/* --- Arguments: a JSON object's field, or the whole text --- */

// The field `key` of a JSON object argument (its value as given: a str, an
// int...), or, when the argument is not an object, the argument's text
// with leading spaces dropped. MP_OBJ_NULL when missing or empty.
static mp_obj_t arg_field(const char *args, size_t len, qstr key) {
    size_t i = 0;
    while (i < len && args[i] == ' ') {
        i++;
    }
    if (i == len) {
        return MP_OBJ_NULL;
    }
    if (args[i] != '{') {
        return mp_obj_new_str(args + i, len - i);
    }
    mp_obj_t obj = MP_OBJ_NULL;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t json = mp_import_name(MP_QSTR_json, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
        mp_obj_t d = mp_call_function_1(mp_load_attr(json, MP_QSTR_loads), mp_obj_new_str(args, len));
        if (mp_obj_is_type(d, &mp_type_dict)) {
            mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(d), MP_OBJ_NEW_QSTR(key), MP_MAP_LOOKUP);
            obj = e != NULL ? e->value : MP_OBJ_NULL;
        }
        nlr_pop();
    } else if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(MP_OBJ_FROM_PTR(nlr.ret_val))),
        MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        nlr_jump(nlr.ret_val); // a KeyboardInterrupt is not a bad argument
    }
    if (obj != MP_OBJ_NULL && mp_obj_is_str(obj)) {
        size_t n;
        (void)str_of(obj, &n);
        return n > 0 ? obj : MP_OBJ_NULL;
    }
    return obj;
}

// A str field (anything else is missing).
static const char *arg_text(const char *args, size_t len, qstr key, size_t *n) {
    mp_obj_t o = arg_field(args, len, key);
    return o != MP_OBJ_NULL && mp_obj_is_str(o) ? str_of(o, n) : NULL;
}

// Calls os.`fn`(path): true when it returned (its result in *ret), false
// when it raised an OSError (any other exception goes on).
static bool os_call(qstr fn, mp_obj_t path, mp_obj_t *ret) {
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t os = mp_import_name(MP_QSTR_os, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
        *ret = mp_call_function_1(mp_load_attr(os, fn), path);
        nlr_pop();
        return true;
    }
    if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(MP_OBJ_FROM_PTR(nlr.ret_val))),
        MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        nlr_jump(nlr.ret_val);
    }
    return false;
}

#define TOOL(name) static int32_t name(const char *args, size_t len, char *out, size_t out_max)
#define UNUSED_ARGS (void)args, (void)len

/* --- Files --- */

TOOL(tool_fs_list) {
    ANSWER(a, out, out_max);
    size_t n = 1;
    const char *path = arg_text(args, len, MP_QSTR_path, &n);
    path = path != NULL ? path : "/";
    mp_obj_t list;
    if (!os_call(MP_QSTR_listdir, mp_obj_new_str(path, n), &list)) {
        PUT(a, "{\"error\":\"listdir failed\",\"path\":");
        PUT_JSON(a, path, n, 2);
        PUT(a, "}");
        return (int32_t)a.len;
    }
    size_t count;
    mp_obj_t *items;
    mp_obj_list_get(list, &count, &items);
    PUT(a, "{\"path\":");
    PUT_JSON(a, path, n, 40);
    PUT(a, ",\"files\":[");
    // Names while they fit whole; the count says how many there are.
    for (size_t i = 0; i < count; i++) {
        size_t fl;
        const char *f = str_of(items[i], &fl);
        if (a.len + 2 * fl + 32 > a.max) {
            break;
        }
        PUT(a, i > 0 ? "," : "");
        PUT_JSON(a, f, fl, 24);
    }
    PUT(a, "],\"count\":%u}", (unsigned)count);
    return (int32_t)a.len;
}

TOOL(tool_fs_stat) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *path = arg_text(args, len, MP_QSTR_path, &n);
    if (path == NULL) {
        PUT(a, "{\"error\":\"no path given\"}");
        return (int32_t)a.len;
    }
    mp_obj_t st;
    PUT(a, "{\"path\":");
    PUT_JSON(a, path, n, 48);
    if (!os_call(MP_QSTR_stat, mp_obj_new_str(path, n), &st)) {
        PUT(a, ",\"exists\":false}");
        return (int32_t)a.len;
    }
    size_t k;
    mp_obj_t *items;
    mp_obj_tuple_get(st, &k, &items);
    mp_int_t mode = k > 0 ? mp_obj_get_int(items[0]) : 0;
    mp_int_t size = k > 6 ? mp_obj_get_int(items[6]) : 0;
    PUT(a, ",\"exists\":true,\"size\":%d,\"is_dir\":%s}", (int)size, (mode & 0x4000) ? "true" : "false");
    return (int32_t)a.len;
}

// The first 512 bytes, as the vendor's.
#define FS_READ_MAX (512)

TOOL(tool_fs_read) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *path = arg_text(args, len, MP_QSTR_path, &n);
    if (path == NULL) {
        PUT(a, "{\"error\":\"no path given\"}");
        return (int32_t)a.len;
    }
    mp_obj_t content = MP_OBJ_NULL;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t o[2] = { mp_obj_new_str(path, n), MP_OBJ_NEW_QSTR(MP_QSTR_rb) };
        mp_obj_t f = mp_builtin_open(2, o, (mp_map_t *)&mp_const_empty_map);
        content = mp_call_function_1(mp_load_attr(f, MP_QSTR_read), MP_OBJ_NEW_SMALL_INT(FS_READ_MAX));
        mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
        nlr_pop();
    } else if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(MP_OBJ_FROM_PTR(nlr.ret_val))),
        MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        nlr_jump(nlr.ret_val);
    }
    if (content == MP_OBJ_NULL) {
        PUT(a, "{\"error\":\"cannot read file\",\"path\":");
        PUT_JSON(a, path, n, 2);
        PUT(a, "}");
        return (int32_t)a.len;
    }
    mp_buffer_info_t b;
    mp_get_buffer_raise(content, &b, MP_BUFFER_READ);
    PUT(a, "{\"path\":");
    PUT_JSON(a, path, n, 40);
    PUT(a, ",\"size\":%u,\"content\":", (unsigned)b.len);
    PUT_JSON(a, b.buf, b.len, 2);
    PUT(a, "}");
    return (int32_t)a.len;
}

TOOL(tool_fs_write) {
    ANSWER(a, out, out_max);
    size_t pn = 0, dn = 0;
    const char *path, *data;
    if (len > 0 && args[0] == '{') {
        path = arg_text(args, len, MP_QSTR_path, &pn);
        mp_obj_t d = arg_field(args, len, MP_QSTR_data);
        data = d != MP_OBJ_NULL && mp_obj_is_str(d) ? str_of(d, &dn) : NULL;
        if (path == NULL || data == NULL) {
            PUT(a, path == NULL ? "{\"error\":\"format: /path content\"}" : "{\"error\":\"missing data field\"}");
            return (int32_t)a.len;
        }
    } else {
        // "/path content here...".
        const char *space = memchr(args, ' ', len);
        if (len < 3 || space == NULL || space == args) {
            PUT(a, "{\"error\":\"format: /path content\"}");
            return (int32_t)a.len;
        }
        path = args;
        pn = (size_t)(space - args);
        data = space + 1;
        dn = len - pn - 1;
    }
    if (pn > 127) {
        PUT(a, "{\"error\":\"path too long\"}");
        return (int32_t)a.len;
    }
    bool ok = false;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t o[2] = { mp_obj_new_str(path, pn), MP_OBJ_NEW_QSTR(MP_QSTR_w) };
        mp_obj_t f = mp_builtin_open(2, o, (mp_map_t *)&mp_const_empty_map);
        mp_call_function_1(mp_load_attr(f, MP_QSTR_write), mp_obj_new_str(data, dn));
        mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
        nlr_pop();
        ok = true;
    } else if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(MP_OBJ_FROM_PTR(nlr.ret_val))),
        MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        nlr_jump(nlr.ret_val);
    }
    PUT(a, ok ? "{\"path\":" : "{\"error\":\"write failed\",\"path\":");
    PUT_JSON(a, path, pn, 32);
    if (ok) {
        PUT(a, ",\"bytes_written\":%u", (unsigned)dn);
    }
    PUT(a, "}");
    return (int32_t)a.len;
}

TOOL(tool_fs_delete) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *path = arg_text(args, len, MP_QSTR_path, &n);
    if (path == NULL || path[0] != '/') {
        PUT(a, "{\"error\":\"invalid path\"}");
        return (int32_t)a.len;
    }
    mp_obj_t r;
    bool ok = os_call(MP_QSTR_remove, mp_obj_new_str(path, n), &r);
    PUT(a, "{\"path\":");
    PUT_JSON(a, path, n, 64);
    PUT(a, ok ? ",\"deleted\":true}" : ",\"deleted\":false,\"error\":\"not found or permission denied\"}");
    return (int32_t)a.len;
}

/* --- The heap, the clock, the system --- */

// The tasks the firmware runs (weak: one where nobody says).
MP_WEAK unsigned bentoclaw_task_count(void) {
    return 1;
}

TOOL(tool_heap_info) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    gc_collect();
    gc_info_t info;
    gc_info(&info);
    // gc_info() gives max_free in blocks; in bytes here, and the vendor's
    // gc_fragments (free - max_free) in bytes too.
    size_t max_free = info.max_free * MICROPY_BYTES_PER_GC_BLOCK;
    PUT(a, "{\"gc_total\":%u,\"gc_used\":%u,\"gc_free\":%u,\"gc_max_free\":%u,\"gc_fragments\":%u,"
        "\"uptime_ms\":%u,\"tasks\":%u}",
        (unsigned)info.total, (unsigned)info.used, (unsigned)info.free, (unsigned)max_free,
        (unsigned)(info.free > max_free ? info.free - max_free : 0), (unsigned)mp_hal_ticks_ms(),
        bentoclaw_task_count());
    return (int32_t)a.len;
}

TOOL(tool_diagnostics_read) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    static const char *const trust[] = { "NONE", "HTTPS", "USB" };
    claw_trust_level_t t = claw_trust_get();
    // The vendor's always says "USB"; this is the trust level in force.
    PUT(a, "{\"uptime_ms\":%u,\"tasks\":%u,\"transport\":\"%s\"}", (unsigned)mp_hal_ticks_ms(),
        bentoclaw_task_count(), t < 3 ? trust[t] : "NONE");
    return (int32_t)a.len;
}

TOOL(tool_rtc_read) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    mp_obj_t time = mp_import_name(MP_QSTR_time, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    mp_obj_t fn = mp_load_attr(time, MP_QSTR_localtime);
    size_t n;
    mp_obj_t *t;
    mp_obj_tuple_get(mp_call_function_0(fn), &n, &t);
    if (n < 7) {
        PUT(a, "{\"error\":\"no RTC\"}");
        return (int32_t)a.len;
    }
    // MicroPython's weekday: 0 is Monday.
    PUT(a, "{\"year\":%d,\"month\":%d,\"day\":%d,\"weekday\":%d,\"hour\":%d,\"min\":%d,\"sec\":%d}",
        (int)mp_obj_get_int(t[0]), (int)mp_obj_get_int(t[1]), (int)mp_obj_get_int(t[2]), (int)mp_obj_get_int(t[6]),
        (int)mp_obj_get_int(t[3]), (int)mp_obj_get_int(t[4]), (int)mp_obj_get_int(t[5]));
    return (int32_t)a.len;
}

// Six numbers "YYYY MM DD HH MM SS" from s[0..n).
static bool six_numbers(const char *s, size_t n, unsigned v[6]) {
    size_t i = 0;
    for (int k = 0; k < 6; k++) {
        while (i < n && s[i] == ' ') {
            i++;
        }
        if (i == n || s[i] < '0' || s[i] > '9') {
            return false;
        }
        v[k] = 0;
        for (int d = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++, d++) {
            if (d == 5) {
                return false;
            }
            v[k] = v[k] * 10 + (unsigned)(s[i] - '0');
        }
    }
    return true;
}

TOOL(tool_rtc_set) {
    ANSWER(a, out, out_max);
    unsigned v[6];
    if (len < 10 || !six_numbers(args, len, v)) {
        PUT(a, "{\"error\":\"format: YYYY MM DD HH MM SS\"}");
        return (int32_t)a.len;
    }
    if (v[0] < 2000 || v[0] > 2099 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59
        || v[5] > 59) {
        PUT(a, "{\"error\":\"date/time out of range\"}");
        return (int32_t)a.len;
    }
    // machine.RTC().datetime((y, m, d, weekday, h, min, s, subseconds)).
    mp_obj_t rtc = MP_OBJ_NULL;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t machine = mp_import_name(MP_QSTR_machine, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
        rtc = mp_call_function_0(mp_load_attr(machine, MP_QSTR_RTC));
        nlr_pop();
    } else if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(MP_OBJ_FROM_PTR(nlr.ret_val))),
        MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        nlr_jump(nlr.ret_val);
    }
    if (rtc == MP_OBJ_NULL) {
        PUT(a, "{\"error\":\"no RTC on this port\"}");
        return (int32_t)a.len;
    }
    mp_obj_t dt[8] = {
        MP_OBJ_NEW_SMALL_INT(v[0]), MP_OBJ_NEW_SMALL_INT(v[1]), MP_OBJ_NEW_SMALL_INT(v[2]), MP_OBJ_NEW_SMALL_INT(0),
        MP_OBJ_NEW_SMALL_INT(v[3]), MP_OBJ_NEW_SMALL_INT(v[4]), MP_OBJ_NEW_SMALL_INT(v[5]), MP_OBJ_NEW_SMALL_INT(0),
    };
    mp_call_function_1(mp_load_attr(rtc, MP_QSTR_datetime), mp_obj_new_tuple(8, dt));
    PUT(a, "{\"success\":true,\"set\":\"%04u-%02u-%02u %02u:%02u:%02u\"}", v[0], v[1], v[2], v[3], v[4], v[5]);
    return (int32_t)a.len;
}

/* --- Python code --- */

TOOL(tool_py_exec) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *code = arg_text(args, len, MP_QSTR_code, &n);
    if (code == NULL) {
        PUT(a, "{\"error\":\"no code given\"}");
        return (int32_t)a.len;
    }
    // Output goes to the console, as the vendor's; the answer reports how
    // the code ended.
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_lexer_t *lex = mp_lexer_new_from_str_len(MP_QSTR__lt_bentoclaw_gt_, code, n, 0);
        mp_parse_tree_t pt = mp_parse(lex, MP_PARSE_FILE_INPUT);
        mp_call_function_0(mp_compile(&pt, MP_QSTR__lt_bentoclaw_gt_, false));
        nlr_pop();
        PUT(a, "{\"status\":\"ok\",\"code_len\":%u}", (unsigned)n);
        return (int32_t)a.len;
    }
    mp_obj_t exc = MP_OBJ_FROM_PTR(nlr.ret_val);
    if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        nlr_jump(nlr.ret_val); // KeyboardInterrupt, SystemExit: the whole call stops
    }
    vstr_t v;
    vstr_init(&v, 64);
    mp_print_t vp;
    vstr_init_print(&v, 64, &vp);
    mp_obj_print_helper(&vp, exc, PRINT_EXC);
    PUT(a, "{\"status\":\"error\",\"exception\":");
    PUT_JSON(a, v.buf, v.len, 2);
    PUT(a, "}");
    vstr_clear(&v);
    return (int32_t)a.len;
}

/* --- Random bytes and hashes (the vendor's trustm_* of the MicroPython
 * build, which use os.urandom and hashlib, not the OPTIGA chip) --- */

static void put_hex(answer_t *a, mp_print_t *p, mp_obj_t bytes) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(bytes, &b, MP_BUFFER_READ);
    for (size_t i = 0; i < b.len; i++) {
        mp_printf(p, "%02x", ((const uint8_t *)b.buf)[i]);
    }
    (void)a;
}

TOOL(tool_trustm_random) {
    ANSWER(a, out, out_max);
    // {"length":N}, or N as text; 32 by default.
    mp_int_t n = 32;
    mp_obj_t f = arg_field(args, len, MP_QSTR_length);
    if (f != MP_OBJ_NULL && mp_obj_is_small_int(f)) {
        n = MP_OBJ_SMALL_INT_VALUE(f);
    } else if (f != MP_OBJ_NULL) {
        size_t k;
        const char *d = mp_obj_is_str(f) ? str_of(f, &k) : "";
        n = 0;
        for (size_t i = 0; d[0] != '\0' && i < k && n <= 256; i++) {
            n = d[i] >= '0' && d[i] <= '9' ? n * 10 + (d[i] - '0') : 1000;
        }
    }
    if (n < 8 || n > 256) {
        PUT(a, "{\"error\":\"len must be 8-256\"}");
        return (int32_t)a.len;
    }
    mp_obj_t os = mp_import_name(MP_QSTR_os, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    mp_obj_t r = mp_call_function_1(mp_load_attr(os, MP_QSTR_urandom), MP_OBJ_NEW_SMALL_INT(n));
    PUT(a, "{\"bytes\":%u,\"hex\":\"", (unsigned)n);
    put_hex(&a, &a_p, r);
    PUT(a, "\"}");
    return (int32_t)a.len;
}

static mp_obj_t sha256(const char *data, size_t n) {
    mp_obj_t hashlib = mp_import_name(MP_QSTR_hashlib, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    mp_obj_t h = mp_call_function_1(mp_load_attr(hashlib, MP_QSTR_sha256), mp_obj_new_bytes((const byte *)data, n));
    return mp_call_function_0(mp_load_attr(h, MP_QSTR_digest));
}

TOOL(tool_trustm_sha256) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *data = arg_text(args, len, MP_QSTR_data, &n);
    if (data == NULL) {
        PUT(a, "{\"error\":\"no data to hash\"}");
        return (int32_t)a.len;
    }
    PUT(a, "{\"algorithm\":\"sha256\",\"input_len\":%u,\"hash\":\"", (unsigned)n);
    put_hex(&a, &a_p, sha256(data, n));
    PUT(a, "\"}");
    return (int32_t)a.len;
}

TOOL(tool_trustm_sign) {
    ANSWER(a, out, out_max);
    size_t n;
    const char *data = arg_text(args, len, MP_QSTR_data, &n);
    if (data == NULL) {
        PUT(a, "{\"error\":\"usage: trustm_sign {\\\"data\\\":\\\"message\\\"}\"}");
        return (int32_t)a.len;
    }
    PUT(a, "{\"algorithm\":\"sha256\",\"input_len\":%u,\"digest\":\"", (unsigned)n);
    put_hex(&a, &a_p, sha256(data, n));
    PUT(a, "\",\"note\":\"OPTIGA ECDSA pending \xe2\x80\x94 digest only\"}");
    return (int32_t)a.len;
}

/* --- Automation rules (kept, as the vendor's, in RAM: here the GC heap,
 * only while there are rules; nothing evaluates them) --- */

#define RULES_MAX (4)
#define RULE_TEXT_MAX (23)
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_rules);

TOOL(tool_rule_set) {
    ANSWER(a, out, out_max);
    size_t tn, an;
    const char *trigger = arg_text(args, len, MP_QSTR_trigger, &tn);
    if (trigger == NULL || len == 0 || args[0] != '{') {
        PUT(a, "{\"error\":\"usage: {\\\"trigger\\\":\\\"button0\\\",\\\"action\\\":\\\"led1_on\\\"}\"}");
        return (int32_t)a.len;
    }
    const char *action = arg_text(args, len, MP_QSTR_action, &an);
    if (action == NULL) {
        PUT(a, "{\"error\":\"missing action field\"}");
        return (int32_t)a.len;
    }
    tn = claw_text_prefix((const uint8_t *)trigger, tn < RULE_TEXT_MAX ? tn : RULE_TEXT_MAX);
    an = claw_text_prefix((const uint8_t *)action, an < RULE_TEXT_MAX ? an : RULE_TEXT_MAX);
    if (MP_STATE_VM(bentoclaw_rules) == MP_OBJ_NULL) {
        MP_STATE_VM(bentoclaw_rules) = mp_obj_new_list(0, NULL);
    }
    size_t count;
    mp_obj_t *rules;
    mp_obj_list_get(MP_STATE_VM(bentoclaw_rules), &count, &rules);
    mp_obj_t t = mp_obj_new_str(trigger, tn);
    // The rule of the same trigger is replaced; a new one takes the next.
    size_t slot = count;
    for (size_t i = 0; i < count; i++) {
        size_t two;
        mp_obj_t *r;
        mp_obj_tuple_get(rules[i], &two, &r);
        if (mp_obj_equal(r[0], t)) {
            slot = i;
        }
    }
    if (slot == RULES_MAX) {
        PUT(a, "{\"error\":\"max %d rules\",\"max\":%d}", RULES_MAX, RULES_MAX);
        return (int32_t)a.len;
    }
    mp_obj_t pair[2] = { t, mp_obj_new_str(action, an) };
    mp_obj_t rule = mp_obj_new_tuple(2, pair);
    if (slot == count) {
        mp_obj_list_append(MP_STATE_VM(bentoclaw_rules), rule);
    } else {
        rules[slot] = rule;
    }
    PUT(a, "{\"status\":\"ok\",\"slot\":%u,\"trigger\":", (unsigned)slot);
    PUT_JSON(a, trigger, tn, 60);
    PUT(a, ",\"action\":");
    PUT_JSON(a, action, an, 2);
    PUT(a, "}");
    return (int32_t)a.len;
}

void bentoclaw_c_tools_reset(void) {
    MP_STATE_VM(bentoclaw_rules) = MP_OBJ_NULL;
}

TOOL(tool_rule_clear) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    size_t count = 0;
    mp_obj_t *rules;
    if (MP_STATE_VM(bentoclaw_rules) != MP_OBJ_NULL) {
        mp_obj_list_get(MP_STATE_VM(bentoclaw_rules), &count, &rules);
    }
    MP_STATE_VM(bentoclaw_rules) = MP_OBJ_NULL;
    PUT(a, "{\"status\":\"cleared\",\"rules_removed\":%u}", (unsigned)count);
    return (int32_t)a.len;
}

/* --- Firmware builds: the LCD console and the resets --- */

#if BENTOCLAW_PORT_FIRMWARE
#include "ipc_communication.h" // IPC_CMD_LCD_PRINT, NVIC_SystemReset()

bool (*bentoclaw_c_tools_ipc_send)(uint32_t cmd, int type, const char *text, size_t len);

TOOL(tool_lcd_console) {
    ANSWER(a, out, out_max);
    if (len == 0) {
        PUT(a, "{\"error\":\"no text\"}");
        return (int32_t)a.len;
    }
    if (bentoclaw_c_tools_ipc_send != NULL) {
        bentoclaw_c_tools_ipc_send(IPC_CMD_LCD_PRINT, -1, args, len);
    }
    PUT(a, "{\"status\":\"printed\",\"len\":%u}", (unsigned)len);
    return (int32_t)a.len;
}

// mpy_main.c's (the BENTO firmware's; the emulated board has its own).
extern void mpy_request_safe_boot_once(void);
static uint8_t s_pending_reset; // 1 hard reset, 2 safe boot

TOOL(tool_hard_reset) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    s_pending_reset = 1;
    PUT(a, "{\"status\":\"resetting\"}");
    return (int32_t)a.len;
}

TOOL(tool_safe_boot) {
    UNUSED_ARGS;
    ANSWER(a, out, out_max);
    mpy_request_safe_boot_once();
    s_pending_reset = 2;
    PUT(a, "{\"status\":\"safe_boot_scheduled\"}");
    return (int32_t)a.len;
}

void bentoclaw_c_tools_after_call(void) {
    uint8_t r = s_pending_reset;
    s_pending_reset = 0;
    if (r != 0) {
        mp_hal_delay_ms(100); // the answer drains out of the UART
    }
    if (r == 1) {
        NVIC_SystemReset();
    } else if (r == 2) {
        mp_raise_type(&mp_type_SystemExit); // the REPL loop soft-resets
    }
}
#else
void bentoclaw_c_tools_after_call(void) {
}
#endif

#define DEF(n, f) { #n, NULL, 0, false, 0, f }

const claw_tool_def_t bentoclaw_c_tools[] = {
    DEF(rule_set, tool_rule_set),
    DEF(rule_clear, tool_rule_clear),
    DEF(diagnostics_read, tool_diagnostics_read),
    DEF(rtc_read, tool_rtc_read),
    DEF(heap_info, tool_heap_info),
    DEF(fs_list, tool_fs_list),
    DEF(fs_stat, tool_fs_stat),
    DEF(fs_read, tool_fs_read),
    DEF(py_exec, tool_py_exec),
    DEF(rtc_set, tool_rtc_set),
    DEF(fs_write, tool_fs_write),
    DEF(fs_delete, tool_fs_delete),
    DEF(trustm_random, tool_trustm_random),
    DEF(trustm_sha256, tool_trustm_sha256),
    DEF(trustm_sign, tool_trustm_sign),
    #if BENTOCLAW_PORT_FIRMWARE
    DEF(lcd_console, tool_lcd_console),
    DEF(hard_reset, tool_hard_reset),
    DEF(safe_boot, tool_safe_boot),
    #endif
};
const size_t bentoclaw_c_tools_count = MP_ARRAY_SIZE(bentoclaw_c_tools);
