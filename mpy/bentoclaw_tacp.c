/*
 * bentoclaw_tacp.c — TACP, the line protocol of the USB host (docs/TACP.md).
 *
 * bentoclaw.tacp(line) takes one request line (str or bytes, with or
 * without its CRLF/LF) and returns one response line (str, no terminator).
 * A USB CDC loop in Python feeds it; this file only parses and answers.
 *
 * Rules it keeps:
 *  - a line that is not a valid request (too long, not UTF-8, control
 *    characters, bad quoting, unknown command, wrong argument count) is
 *    answered "err <reason>" and changes nothing — no error count, no quota,
 *    no breaker report;
 *  - TOOL runs through the one gated call of modbentoclaw.c at USB trust
 *    (the person at the USB port may run every risk): the level is saved,
 *    set to CLAW_TRUST_USB and restored on every way out, and
 *    claw_trust_allows() still judges the registry's risk;
 *  - a tool that raises is a breaker failure (counted in the gated call) and
 *    is answered "err <exception text>"; only KeyboardInterrupt/SystemExit
 *    propagate (the trust level restored first);
 *  - every response is one line of valid UTF-8: data strings go out as JSON
 *    strings, error texts with control characters turned into spaces.
 */
#include <string.h>

#include "py/nlr.h"
#include "py/obj.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "claw_safety.h"
#include "claw_session.h"
#include "bentoclaw_internal.h"

#ifndef BENTOCLAW_TACP_LINE_MAX
#define BENTOCLAW_TACP_LINE_MAX (512) // bytes, without the line terminator
#endif
// A TOOL result is str(result) cut to this many bytes before JSON escaping.
#ifndef BENTOCLAW_TACP_RESULT_MAX
#define BENTOCLAW_TACP_RESULT_MAX (400)
#endif
// An "err <exception text>" reason is cut to this many bytes.
#define TACP_REASON_MAX (160)
#define TACP_TOKENS_MAX (3) // command + two arguments at most

typedef struct _tacp_token_t {
    const char *s; // in the decode buffer, not NUL-terminated
    size_t len;
} tacp_token_t;

static mp_obj_t tacp_reply(const char *text) {
    return mp_obj_new_str(text, strlen(text));
}

// "err <reason>" with control characters as spaces and the reason cut on a
// character boundary.
static mp_obj_t tacp_err_vstr(vstr_t *reason) {
    vstr_t v;
    vstr_init(&v, 4 + reason->len);
    vstr_add_str(&v, "err ");
    size_t len = reason->len;
    if (len > TACP_REASON_MAX) {
        len = TACP_REASON_MAX;
        while (len > 0 && ((uint8_t)reason->buf[len] & 0xc0) == 0x80) {
            len--;
        }
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)reason->buf[i];
        vstr_add_byte(&v, (c < 0x20 || c == 0x7f) ? ' ' : (byte)c);
    }
    return mp_obj_new_str_from_vstr(&v);
}

// A JSON string literal of s[0..len).
static void tacp_put_json_str(vstr_t *v, const char *s, size_t len) {
    vstr_add_byte(v, '"');
    size_t n = bentoclaw_json_escape(NULL, s, len);
    char *p = vstr_add_len(v, n);
    bentoclaw_json_escape(p, s, len);
    vstr_add_byte(v, '"');
}

// A status()/safety() dict as one JSON object: str, bool, int and None
// values as JSON; anything else as the JSON string of its str().
static mp_obj_t tacp_dict_json(mp_obj_t dict) {
    mp_map_t *map = mp_obj_dict_get_map(dict);
    vstr_t v;
    mp_print_t print; // ints are printed straight into v
    vstr_init_print(&v, 128, &print);
    vstr_add_byte(&v, '{');
    bool first = true;
    for (size_t i = 0; i < map->alloc; i++) {
        if (!mp_map_slot_is_filled(map, i)) {
            continue;
        }
        mp_obj_t key = map->table[i].key;
        mp_obj_t val = map->table[i].value;
        if (!first) {
            vstr_add_byte(&v, ',');
        }
        first = false;
        size_t klen;
        const char *k = mp_obj_str_get_data(key, &klen);
        tacp_put_json_str(&v, k, klen);
        vstr_add_byte(&v, ':');
        if (val == mp_const_true || val == mp_const_false) {
            vstr_add_str(&v, val == mp_const_true ? "true" : "false");
        } else if (val == mp_const_none) {
            vstr_add_str(&v, "null");
        } else if (mp_obj_is_int(val)) {
            mp_obj_print_helper(&print, val, PRINT_REPR);
        } else {
            vstr_t sv;
            vstr_init(&sv, 32);
            bentoclaw_str_capped(&sv, val, 255);
            tacp_put_json_str(&v, sv.buf, sv.len);
            vstr_clear(&sv);
        }
    }
    vstr_add_byte(&v, '}');
    return mp_obj_new_str_from_vstr(&v);
}

// Split the line into tokens decoded into `dec` (same size as the line).
// Returns the token count, or NULL-reason via *why.
static int tacp_split(const char *line, size_t len, char *dec, tacp_token_t *tok, const char **why) {
    size_t i = 0, d = 0;
    int n = 0;
    for (;;) {
        while (i < len && line[i] == ' ') {
            i++;
        }
        if (i == len) {
            return n;
        }
        if (n == TACP_TOKENS_MAX) {
            *why = "too many arguments";
            return -1;
        }
        tok[n].s = dec + d;
        size_t start = d;
        if (line[i] == '"') {
            i++;
            for (;;) {
                if (i == len) {
                    *why = "unterminated quote";
                    return -1;
                }
                char c = line[i++];
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    if (i == len || (line[i] != '"' && line[i] != '\\')) {
                        *why = "bad escape (only \\\" and \\\\)";
                        return -1;
                    }
                    c = line[i++];
                }
                dec[d++] = c;
            }
            if (i < len && line[i] != ' ') {
                *why = "bad quoting";
                return -1;
            }
        } else {
            while (i < len && line[i] != ' ') {
                if (line[i] == '"') {
                    *why = "bad quoting";
                    return -1;
                }
                dec[d++] = line[i++];
            }
        }
        tok[n].len = d - start;
        n++;
    }
}

static bool tacp_is(const tacp_token_t *t, const char *cmd) {
    size_t n = strlen(cmd);
    if (t->len != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = t->s[i];
        if (c >= 'a' && c <= 'z') {
            c = (char)(c - 'a' + 'A');
        }
        if (c != cmd[i]) {
            return false;
        }
    }
    return true;
}

static mp_obj_t tacp_tool(const tacp_token_t *name, const tacp_token_t *arg_tok) {
    int idx = -1;
    if (name->len > 0 && name->len < CLAW_RATE_NAME_MAX) {
        idx = bentoclaw_tool_find(name->s, name->len);
    }
    if (idx < 0) {
        return tacp_reply("err unknown tool");
    }
    mp_obj_t arg = arg_tok != NULL ? mp_obj_new_str(arg_tok->s, arg_tok->len) : mp_const_none;
    vstr_t v;
    vstr_init(&v, 64);
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t result;
        bentoclaw_gate_t gate = bentoclaw_tool_call((size_t)idx, arg, CLAW_TRUST_USB, &result);
        if (gate != BENTOCLAW_GATE_OK) {
            vstr_add_str(&v, "err ");
            vstr_add_str(&v, bentoclaw_gate_text(gate));
        } else {
            vstr_t sv;
            vstr_init(&sv, 64);
            bentoclaw_str_capped(&sv, result, BENTOCLAW_TACP_RESULT_MAX);
            tacp_put_json_str(&v, sv.buf, sv.len);
            vstr_clear(&sv);
        }
        nlr_pop();
    } else {
        // The trust level is already restored (bentoclaw_tool_call).
        if (!bentoclaw_exc_is_failure(nlr.ret_val)) {
            nlr_jump(nlr.ret_val);
        }
        vstr_t reason;
        vstr_init(&reason, 64);
        bentoclaw_exc_text(&reason, nlr.ret_val, TACP_REASON_MAX);
        vstr_clear(&v);
        return tacp_err_vstr(&reason);
    }
    return mp_obj_new_str_from_vstr(&v);
}

static mp_obj_t tacp_remember(const tacp_token_t *k, const tacp_token_t *val) {
    if (k->len == 0 || k->len >= CLAW_MEM_KEY_MAX) {
        return tacp_reply("err key must be 1..31 bytes");
    }
    if (val->len >= CLAW_MEM_VAL_MAX) {
        return tacp_reply("err value must be 0..127 bytes");
    }
    char key[CLAW_MEM_KEY_MAX];
    char value[CLAW_MEM_VAL_MAX];
    memcpy(key, k->s, k->len);
    key[k->len] = '\0';
    memcpy(value, val->s, val->len);
    value[val->len] = '\0';
    return tacp_reply(claw_memory_set(key, value) ? "ok" : "full");
}

static mp_obj_t tacp_recall(const tacp_token_t *k) {
    if (k->len == 0 || k->len >= CLAW_MEM_KEY_MAX) {
        return tacp_reply("err key must be 1..31 bytes");
    }
    char key[CLAW_MEM_KEY_MAX];
    memcpy(key, k->s, k->len);
    key[k->len] = '\0';
    char value[CLAW_MEM_VAL_MAX];
    if (!claw_memory_get(key, value, sizeof(value))) {
        return tacp_reply("err not found");
    }
    // What came off flash is checked like recall() does.
    size_t len = strnlen(value, sizeof(value));
    if (len == sizeof(value) || !bentoclaw_utf8_valid(value, len)) {
        return tacp_reply("err not found");
    }
    vstr_t v;
    vstr_init(&v, len + 8);
    tacp_put_json_str(&v, value, len);
    return mp_obj_new_str_from_vstr(&v);
}

static mp_obj_t bentoclaw_tacp(mp_obj_t line_in) {
    bentoclaw_ensure_init();
    size_t len;
    const char *line;
    if (mp_obj_is_str(line_in)) {
        line = mp_obj_str_get_data(line_in, &len);
    } else if (mp_obj_is_type(line_in, &mp_type_bytes) || mp_obj_is_type(line_in, &mp_type_bytearray)) {
        mp_buffer_info_t bi;
        mp_get_buffer_raise(line_in, &bi, MP_BUFFER_READ);
        line = bi.buf;
        len = bi.len;
    } else {
        mp_raise_TypeError(MP_ERROR_TEXT("line must be str or bytes"));
    }

    // One terminator may end the line: CRLF, LF or CR.
    if (len > 0 && line[len - 1] == '\n') {
        len--;
    }
    if (len > 0 && line[len - 1] == '\r') {
        len--;
    }
    if (len > BENTOCLAW_TACP_LINE_MAX) {
        return tacp_reply("err line too long");
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)line[i];
        if (c < 0x20 || c == 0x7f) {
            return tacp_reply("err control character");
        }
    }
    if (!bentoclaw_utf8_valid(line, len)) {
        return tacp_reply("err invalid UTF-8");
    }

    char dec[BENTOCLAW_TACP_LINE_MAX];
    tacp_token_t tok[TACP_TOKENS_MAX];
    const char *why = NULL;
    int n = tacp_split(line, len, dec, tok, &why);
    if (n < 0) {
        vstr_t reason;
        vstr_init(&reason, 32);
        vstr_add_str(&reason, why);
        return tacp_err_vstr(&reason);
    }
    if (n == 0) {
        return tacp_reply("err empty line");
    }
    const tacp_token_t *cmd = &tok[0];
    int argc = n - 1;
    if (tacp_is(cmd, "STATUS")) {
        return argc == 0 ? tacp_dict_json(bentoclaw_status()) : tacp_reply("err usage: STATUS");
    }
    if (tacp_is(cmd, "SAFETY")) {
        return argc == 0 ? tacp_dict_json(bentoclaw_safety()) : tacp_reply("err usage: SAFETY");
    }
    if (tacp_is(cmd, "REMEMBER")) {
        return argc == 2 ? tacp_remember(&tok[1], &tok[2]) : tacp_reply("err usage: REMEMBER <key> <value>");
    }
    if (tacp_is(cmd, "RECALL")) {
        return argc == 1 ? tacp_recall(&tok[1]) : tacp_reply("err usage: RECALL <key>");
    }
    if (tacp_is(cmd, "TOOL")) {
        if (argc < 1) {
            return tacp_reply("err usage: TOOL <name> [arg]");
        }
        return tacp_tool(&tok[1], argc == 2 ? &tok[2] : NULL);
    }
    if (tacp_is(cmd, "CLEAR")) {
        if (argc != 0) {
            return tacp_reply("err usage: CLEAR");
        }
        bentoclaw_session_clear();
        return tacp_reply("ok");
    }
    return tacp_reply("err unknown command");
}
MP_DEFINE_CONST_FUN_OBJ_1(bentoclaw_tacp_obj, bentoclaw_tacp);
