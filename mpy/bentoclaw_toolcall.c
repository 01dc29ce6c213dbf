/*
 * bentoclaw_toolcall.c — tool requests from the backend (docs/BACKEND.md).
 *
 * A reply body that is exactly
 *
 *     {"tool_call":{"name":"<tool>","arg":"<text>"|null}}
 *
 * (JSON whitespace allowed between tokens, the two members in any order,
 * "arg" optional) is a tool request; every other body is reply text. The
 * reader below is strict and small: a fixed two-level grammar walked by one
 * loop (no recursion), every string bounded by the reply buffer
 * (BENTOCLAW_REPLY_MAX), raw control characters, bad escapes, lone
 * surrogates, duplicate or unknown members, other value types and trailing
 * bytes all make the body reply text. Strings are validated in a first pass
 * and only then decoded in place (an escape never decodes to more bytes than
 * it takes), so a body that is not a request is returned to the caller
 * exactly as it came.
 *
 * The request runs through the one gated call (bentoclaw_tool_call()) at
 * HTTPS trust: a model can never run a tool that the HTTPS transport may
 * not, whatever level is current (a nested call from a TACP tool runs at USB).
 */
#include <string.h>

#include "py/nlr.h"
#include "py/obj.h"
#include "py/runtime.h"

#include "claw_safety.h"
#include "bentoclaw_internal.h"

/* ---------------------------------------------------------------------------
 * The strict reader
 */

typedef struct _tc_reader_t {
    char *buf;
    size_t len;
    size_t pos;
} tc_reader_t;

static void tc_ws(tc_reader_t *r) {
    while (r->pos < r->len) {
        char c = r->buf[r->pos];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            break;
        }
        r->pos++;
    }
}

static bool tc_char(tc_reader_t *r, char c) {
    tc_ws(r);
    if (r->pos < r->len && r->buf[r->pos] == c) {
        r->pos++;
        return true;
    }
    return false;
}

static int tc_hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= c - '0';
        } else if (c >= 'a' && c <= 'f') {
            v |= c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            v |= c - 'A' + 10;
        } else {
            return -1;
        }
    }
    return v;
}

// A JSON string at the cursor (after whitespace). Decoded bytes go to
// `out` (NULL: validate and count only; `out` may be the string's own first
// content byte, the decoding never overtakes the reading) and at most `cap`
// of them are allowed. *out_len: the decoded length. false: not a valid
// string, or longer than cap.
static bool tc_string(tc_reader_t *r, char *out, size_t cap, size_t *out_len) {
    if (!tc_char(r, '"')) {
        return false;
    }
    size_t n = 0;
    while (r->pos < r->len) {
        uint8_t c = (uint8_t)r->buf[r->pos];
        uint32_t cp;
        size_t take;
        if (c == '"') {
            r->pos++;
            *out_len = n;
            return true;
        }
        if (c < 0x20) {
            return false; // raw control characters are not JSON
        }
        if (c != '\\') {
            if (n >= cap) {
                return false;
            }
            if (out != NULL) {
                out[n] = (char)c;
            }
            n++;
            r->pos++;
            continue;
        }
        if (r->pos + 1 >= r->len) {
            return false;
        }
        char e = r->buf[r->pos + 1];
        take = 2;
        switch (e) {
            case '"':
            case '\\':
            case '/':
                cp = (uint8_t)e;
                break;
            case 'b':
                cp = '\b';
                break;
            case 'f':
                cp = '\f';
                break;
            case 'n':
                cp = '\n';
                break;
            case 'r':
                cp = '\r';
                break;
            case 't':
                cp = '\t';
                break;
            case 'u': {
                if (r->len - r->pos < 6) {
                    return false;
                }
                int v = tc_hex4(r->buf + r->pos + 2);
                if (v < 0) {
                    return false;
                }
                take = 6;
                if (v >= 0xdc00 && v <= 0xdfff) {
                    return false; // a lone low surrogate
                }
                if (v >= 0xd800 && v <= 0xdbff) {
                    if (r->len - r->pos < 12 || r->buf[r->pos + 6] != '\\' || r->buf[r->pos + 7] != 'u') {
                        return false; // a lone high surrogate
                    }
                    int lo = tc_hex4(r->buf + r->pos + 8);
                    if (lo < 0xdc00 || lo > 0xdfff) {
                        return false;
                    }
                    cp = 0x10000 + (((uint32_t)v - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                    take = 12;
                } else {
                    cp = (uint32_t)v;
                }
                break;
            }
            default:
                return false;
        }
        // UTF-8 of cp: 1..4 bytes, never more than the `take` bytes read.
        uint8_t u[4];
        size_t ul;
        if (cp < 0x80) {
            u[0] = (uint8_t)cp;
            ul = 1;
        } else if (cp < 0x800) {
            u[0] = (uint8_t)(0xc0 | (cp >> 6));
            u[1] = (uint8_t)(0x80 | (cp & 0x3f));
            ul = 2;
        } else if (cp < 0x10000) {
            u[0] = (uint8_t)(0xe0 | (cp >> 12));
            u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
            u[2] = (uint8_t)(0x80 | (cp & 0x3f));
            ul = 3;
        } else {
            u[0] = (uint8_t)(0xf0 | (cp >> 18));
            u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
            u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
            u[3] = (uint8_t)(0x80 | (cp & 0x3f));
            ul = 4;
        }
        if (ul > cap - n || n > cap) {
            return false;
        }
        if (out != NULL) {
            memcpy(out + n, u, ul);
        }
        n += ul;
        r->pos += take;
    }
    return false; // unterminated
}

// A member name into a small buffer (NUL-terminated); longer names are not
// ones we know.
static bool tc_key(tc_reader_t *r, char *key, size_t key_size) {
    size_t n;
    if (!tc_string(r, key, key_size - 1, &n)) {
        return false;
    }
    key[n] = '\0';
    if (strlen(key) != n) {
        return false; // an escaped NUL inside a member name
    }
    return tc_char(r, ':');
}

// One pass over the grammar; with `decode` the name and arg strings are
// decoded in place.
static bool tc_parse(char *buf, size_t len, bool decode, bentoclaw_toolcall_t *tc) {
    tc_reader_t r = { buf, len, 0 };
    char key[16];
    if (!tc_char(&r, '{') || !tc_key(&r, key, sizeof(key)) || strcmp(key, "tool_call") != 0
        || !tc_char(&r, '{')) {
        return false;
    }
    bool have_name = false, have_arg = false;
    tc->arg = NULL;
    tc->arg_len = 0;
    // At most two members: the loop is bounded by the grammar, not the input.
    for (int m = 0; m < 2; m++) {
        if (!tc_key(&r, key, sizeof(key))) {
            return false;
        }
        tc_ws(&r);
        char *content = buf + r.pos + 1; // the string's first content byte
        size_t n;
        if (strcmp(key, "name") == 0 && !have_name) {
            if (!tc_string(&r, decode ? content : NULL, len, &n)) {
                return false;
            }
            tc->name = content;
            tc->name_len = n;
            have_name = true;
        } else if (strcmp(key, "arg") == 0 && !have_arg) {
            if (r.len - r.pos >= 4 && memcmp(buf + r.pos, "null", 4) == 0) {
                r.pos += 4;
            } else {
                if (!tc_string(&r, decode ? content : NULL, len, &n)) {
                    return false;
                }
                tc->arg = content;
                tc->arg_len = n;
            }
            have_arg = true;
        } else {
            return false; // unknown or repeated member
        }
        if (tc_char(&r, '}')) {
            break;
        }
        if (m == 1 || !tc_char(&r, ',')) {
            return false;
        }
    }
    if (!have_name || !tc_char(&r, '}')) {
        return false;
    }
    tc_ws(&r);
    return r.pos == r.len;
}

bool bentoclaw_toolcall_parse(char *reply, size_t len, bentoclaw_toolcall_t *tc) {
    if (reply == NULL || !tc_parse(reply, len, false, tc)) {
        return false;
    }
    // Valid: decode in place (the same walk, now writing).
    return tc_parse(reply, len, true, tc);
}

/* ---------------------------------------------------------------------------
 * Running a request
 */

void bentoclaw_exc_text(vstr_t *out, void *exc, size_t max) {
    size_t start = out->len;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        bentoclaw_str_capped(out, MP_OBJ_FROM_PTR(exc), max);
        nlr_pop();
    } else {
        out->len = start; // its str() raised: the type name will do
    }
    if (out->len == start) {
        const mp_obj_type_t *type = mp_obj_get_type(MP_OBJ_FROM_PTR(exc));
        vstr_add_str(out, qstr_str(type->name));
    }
}

void bentoclaw_toolcall_run(const bentoclaw_toolcall_t *tc, bentoclaw_tool_result_t *out) {
    out->name = tc->name;
    out->name_len = tc->name_len;
    vstr_init(&out->result, 32);

    int idx = -1;
    if (tc->name_len > 0 && tc->name_len < CLAW_RATE_NAME_MAX) {
        idx = bentoclaw_tool_find(tc->name, tc->name_len);
    }
    if (idx < 0) {
        out->status = "unknown";
        vstr_add_str(&out->result, "unknown tool");
        bentoclaw_tool_log_note(tc->name, tc->name_len, "unknown tool", NULL);
        return;
    }

    // The backend's trust: HTTPS, or less when the current level is less.
    claw_trust_level_t cur = claw_trust_get();
    int level = (cur == CLAW_TRUST_HTTPS || cur == CLAW_TRUST_USB) ? CLAW_TRUST_HTTPS : CLAW_TRUST_NONE;

    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t arg = tc->arg != NULL ? mp_obj_new_str(tc->arg, tc->arg_len) : mp_const_none;
        mp_obj_t result;
        bentoclaw_gate_t gate = bentoclaw_tool_call((size_t)idx, arg, level, &result);
        if (gate == BENTOCLAW_GATE_OK) {
            out->status = "ok";
            bentoclaw_str_capped(&out->result, result, BENTOCLAW_TOOL_RESULT_MAX);
        } else {
            // Refused: never run, the model is told which gate said no.
            const char *text = bentoclaw_gate_text(gate);
            out->status = "refused";
            vstr_add_str(&out->result, text);
            bentoclaw_tool_log_note(tc->name, tc->name_len, "refused", text);
        }
        nlr_pop();
    } else {
        if (!bentoclaw_exc_is_failure(nlr.ret_val)) {
            vstr_clear(&out->result);
            nlr_jump(nlr.ret_val);
        }
        // The tool raised (already a breaker failure), its argument was
        // refused by a built-in, or str() of its result raised.
        out->status = "error";
        out->result.len = 0;
        bentoclaw_exc_text(&out->result, nlr.ret_val, BENTOCLAW_TOOL_RESULT_MAX);
        bentoclaw_tool_log_note(tc->name, tc->name_len, "error", vstr_null_terminated_str(&out->result));
    }
}
