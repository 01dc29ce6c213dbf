/*
 * bentoclaw_memory.c — memory search, pins, and MEMORY.md export/import
 * (include/claw_ext.h; the format is specified in docs/SESSIONS.md,
 * "MEMORY.md").
 *
 *   search(query, n=5)        -> [(key, value, score), ...]  best first
 *   forget(key)               -> bool
 *   pin(key, on=True)         -> bool
 *   export_memory()           -> str   "# Memory\n\n- **key**: value\n..."
 *   import_memory(text, strict=False, skipped=None) -> int
 *
 * Like the rest of the module: the core never raises, every check and every
 * exception happens here, before or after a core call — never inside one.
 * Nothing here takes static RAM: the search hits and the import's key list
 * live on the GC heap for one call.
 *
 * MEMORY.md format (export writes it, import reads it and more):
 *
 *   # Memory
 *
 *   - **name**: Somchai
 *   - **wifi\_pw** (pinned): hunter2
 *
 * Keys and values are escaped so that export -> import gives back the exact
 * bytes and a markdown viewer shows the text as it is:
 *   \\  \n  \r  \t        backslash, newline, CR, tab
 *   \xHH                  other ASCII control characters, and a space at
 *                         either end (a reader would trim it)
 *   \*  \`  \[  \]  \<  \>  \~   markdown punctuation
 *   \_                    an underscore not between two word characters
 * The reader takes "\" + any ASCII punctuation as that character (CommonMark)
 * and a backslash before anything else as a backslash.
 */
#include <string.h>

#include "py/obj.h"
#include "py/objint.h"
#include "py/objlist.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "claw_session.h"
#include "claw_ext.h"
#include "bentoclaw_internal.h"

#define MEM_KEY_BYTES (CLAW_MEM_KEY_MAX - 1) // 31
#define MEM_VAL_BYTES (CLAW_MEM_VAL_MAX - 1) // 127

#define TEXT_KEY_LIMIT "key must be 1..31 bytes (CLAW_MEM_KEY_MAX)"
#define TEXT_VAL_LIMIT "value must be 0..127 bytes (CLAW_MEM_VAL_MAX)"

/* ---------------------------------------------------------------------------
 * Arguments (the same rules as modbentoclaw.c: str, no NUL, strict UTF-8)
 */

static const char *mem_get_str(mp_obj_t obj, size_t *len, qstr what) {
    if (!mp_obj_is_str(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be str"), what);
    }
    const char *s = mp_obj_str_get_data(obj, len);
    if (memchr(s, '\0', *len) != NULL) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must not contain NUL"), what);
    }
    if (!bentoclaw_utf8_valid(s, *len)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must be valid UTF-8"), what);
    }
    return s;
}

static const char *mem_get_key(mp_obj_t obj) {
    size_t len;
    const char *key = mem_get_str(obj, &len, MP_QSTR_key);
    if (len == 0 || len > MEM_KEY_BYTES) {
        mp_raise_ValueError(MP_ERROR_TEXT(TEXT_KEY_LIMIT));
    }
    return key;
}

// bool or int (like Python's truth of a flag), anything else is a TypeError.
static bool mem_get_flag(mp_obj_t obj, qstr what) {
    if (!mp_obj_is_bool(obj) && !mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be bool"), what);
    }
    return mp_obj_is_true(obj);
}

// A pair that came off flash: NUL-terminated inside its buffers, a key of
// 1..31 bytes, both valid UTF-8. Never trust the file.
static bool mem_hit_ok(const claw_memory_hit_t *h, size_t *klen, size_t *vlen) {
    *klen = strnlen(h->key, sizeof(h->key));
    *vlen = strnlen(h->value, sizeof(h->value));
    return *klen > 0 && *klen < sizeof(h->key) && *vlen < sizeof(h->value)
           && bentoclaw_utf8_valid(h->key, *klen) && bentoclaw_utf8_valid(h->value, *vlen);
}

/* ---------------------------------------------------------------------------
 * search / forget / pin
 */

static mp_obj_t bentoclaw_search(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_query, ARG_n };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_query, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_n, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(5)} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed), allowed, args);
    bentoclaw_ensure_init();
    size_t qlen;
    const char *query = mem_get_str(args[ARG_query].u_obj, &qlen, MP_QSTR_query);
    mp_obj_t n_in = args[ARG_n].u_obj;
    if (!mp_obj_is_int(n_in)) {
        mp_raise_TypeError(MP_ERROR_TEXT("n must be int"));
    }
    // n >= 1; more than CLAW_MEMORY_SEARCH_MAX is capped (a big int too).
    size_t n = CLAW_MEMORY_SEARCH_MAX;
    if (mp_obj_is_small_int(n_in)) {
        mp_int_t v = MP_OBJ_SMALL_INT_VALUE(n_in);
        if (v < 1) {
            mp_raise_ValueError(MP_ERROR_TEXT("n must be >= 1"));
        }
        if ((mp_uint_t)v < CLAW_MEMORY_SEARCH_MAX) {
            n = (size_t)v;
        }
    } else if (mp_obj_int_sign(n_in) < 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("n must be >= 1"));
    }
    claw_memory_hit_t *hits = m_new(claw_memory_hit_t, n);
    size_t got = claw_memory_search(query, hits, n);
    if (got > n) {
        got = n;
    }
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < got; i++) {
        size_t klen, vlen;
        if (!mem_hit_ok(&hits[i], &klen, &vlen)) {
            continue;
        }
        mp_obj_t item[3] = {
            mp_obj_new_str(hits[i].key, klen),
            mp_obj_new_str(hits[i].value, vlen),
            MP_OBJ_NEW_SMALL_INT(hits[i].score),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(3, item));
    }
    m_del(claw_memory_hit_t, hits, n);
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_search_obj, 0, bentoclaw_search);

static mp_obj_t bentoclaw_forget(mp_obj_t key_in) {
    bentoclaw_ensure_init();
    const char *key = mem_get_key(key_in);
    return mp_obj_new_bool(claw_memory_forget(key));
}
MP_DEFINE_CONST_FUN_OBJ_1(bentoclaw_forget_obj, bentoclaw_forget);

static mp_obj_t bentoclaw_pin(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_key, ARG_on };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_key, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_on, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_TRUE} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed), allowed, args);
    bentoclaw_ensure_init();
    const char *key = mem_get_key(args[ARG_key].u_obj);
    bool on = mem_get_flag(args[ARG_on].u_obj, MP_QSTR_on);
    return mp_obj_new_bool(claw_memory_pin(key, on));
}
MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_pin_obj, 0, bentoclaw_pin);

/* ---------------------------------------------------------------------------
 * export_memory
 */

static bool mem_word_byte(uint8_t c) {
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void mem_escape(vstr_t *out, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)s[i];
        switch (c) {
            case '\\':
                vstr_add_strn(out, "\\\\", 2);
                continue;
            case '\n':
                vstr_add_strn(out, "\\n", 2);
                continue;
            case '\r':
                vstr_add_strn(out, "\\r", 2);
                continue;
            case '\t':
                vstr_add_strn(out, "\\t", 2);
                continue;
            case '*':
            case '`':
            case '[':
            case ']':
            case '<':
            case '>':
            case '~':
                vstr_add_byte(out, '\\');
                vstr_add_byte(out, c);
                continue;
            case '_': {
                bool inside = i > 0 && i + 1 < len
                    && mem_word_byte((uint8_t)s[i - 1]) && mem_word_byte((uint8_t)s[i + 1]);
                if (!inside) {
                    vstr_add_byte(out, '\\');
                }
                vstr_add_byte(out, '_');
                continue;
            }
            default:
                break;
        }
        if (c < 0x20 || c == 0x7f || (c == ' ' && (i == 0 || i + 1 == len))) {
            char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
            vstr_add_strn(out, e, 4);
        } else {
            vstr_add_byte(out, c);
        }
    }
}

// One exported line and where it sits in the output (a later line of the
// same key — only in a hand-edited store file — replaces it: the last line
// wins, as everywhere in the core).
typedef struct {
    char key[CLAW_MEM_KEY_MAX];
    size_t off, len;
} mem_line_t;

static mp_obj_t bentoclaw_export_memory(void) {
    bentoclaw_ensure_init();
    vstr_t out;
    vstr_init(&out, 256);
    vstr_add_str(&out, "# Memory\n\n");
    size_t alloc = CLAW_MEM_MAX_ENTRIES;
    size_t nlines = 0;
    mem_line_t *lines = m_new(mem_line_t, alloc);
    claw_memory_hit_t hit;
    for (size_t i = 0; claw_memory_at(i, &hit); i++) {
        size_t klen, vlen;
        if (!mem_hit_ok(&hit, &klen, &vlen)) {
            continue;
        }
        for (size_t j = 0; j < nlines; j++) {
            if (strcmp(lines[j].key, hit.key) == 0) {
                vstr_cut_out_bytes(&out, lines[j].off, lines[j].len);
                for (size_t k = j + 1; k < nlines; k++) {
                    lines[k].off -= lines[j].len;
                    lines[k - 1] = lines[k];
                }
                nlines--;
                break;
            }
        }
        if (nlines == alloc) {
            lines = m_renew(mem_line_t, lines, alloc, alloc * 2);
            alloc *= 2;
        }
        mem_line_t *l = &lines[nlines++];
        memcpy(l->key, hit.key, klen + 1);
        l->off = out.len;
        vstr_add_strn(&out, "- **", 4);
        mem_escape(&out, hit.key, klen);
        vstr_add_strn(&out, "**", 2);
        if (hit.pinned) {
            vstr_add_str(&out, " (pinned)");
        }
        vstr_add_byte(&out, ':');
        if (vlen > 0) {
            vstr_add_byte(&out, ' ');
            mem_escape(&out, hit.value, vlen);
        }
        vstr_add_byte(&out, '\n');
        l->len = out.len - l->off;
    }
    m_del(mem_line_t, lines, alloc);
    return mp_obj_new_str_from_vstr(&out);
}
MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_export_memory_obj, bentoclaw_export_memory);

/* ---------------------------------------------------------------------------
 * import_memory
 */

typedef struct {
    char key[CLAW_MEM_KEY_MAX];
    char value[CLAW_MEM_VAL_MAX];
    bool pinned;
} mem_pair_t;

typedef enum {
    MEM_LINE_PAIR,   // a pair, in the mem_pair_t
    MEM_LINE_IGNORE, // blank, heading, rule, comment: not counted
    MEM_LINE_BAD,    // skipped and counted; *why says why
} mem_line_kind_t;

static bool mem_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

static bool mem_is_punct(char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static int mem_hex(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Unescapes s[0..len) into out (NUL-terminated). Returns the length, or -1
// when it exceeds max bytes, or -2 for an escape that is not allowed (NUL,
// or a \x above 0x7f, which would not be UTF-8 on its own).
static int mem_unescape(const char *s, size_t len, char *out, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < len) {
            char e = s[i + 1];
            if (e == 'n' || e == 'r' || e == 't') {
                c = e == 'n' ? '\n' : e == 'r' ? '\r' : '\t';
                i++;
            } else if (e == 'x' && i + 3 < len && mem_hex(s[i + 2]) >= 0 && mem_hex(s[i + 3]) >= 0) {
                int v = mem_hex(s[i + 2]) * 16 + mem_hex(s[i + 3]);
                if (v == 0 || v > 0x7f) {
                    return -2;
                }
                c = (char)v;
                i += 3;
            } else if (mem_is_punct(e)) {
                c = e;
                i++;
            }
            // anything else: the backslash is literal
        }
        if (n >= max) {
            return -1;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return (int)n;
}

// Where the first unescaped `stop` (one or two characters) is in s[0..len),
// or len.
static size_t mem_find(const char *s, size_t len, const char *stop, size_t stop_len) {
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (i + stop_len <= len && memcmp(s + i, stop, stop_len) == 0) {
            return i;
        }
    }
    return len;
}

static void mem_trim(const char **s, size_t *len) {
    while (*len > 0 && mem_is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && mem_is_space((*s)[*len - 1])) {
        (*len)--;
    }
}


#define PIN_MARK "(pinned)"
#define PIN_MARK_LEN (sizeof(PIN_MARK) - 1)

static bool mem_contains(const char *s, size_t len, const char *needle, size_t nlen) {
    for (size_t i = 0; i + nlen <= len; i++) {
        if (memcmp(s + i, needle, nlen) == 0) {
            return true;
        }
    }
    return false;
}

// A thematic break: three or more of one of - * _ (spaces between).
static bool mem_is_rule(const char *s, size_t len) {
    char m = s[0];
    if (m != '-' && m != '*' && m != '_') {
        return false;
    }
    size_t count = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == m) {
            count++;
        } else if (!mem_is_space(s[i])) {
            return false;
        }
    }
    return count >= 3;
}

// Whether the last character of s[0..len) is an unescaped `c`.
static bool mem_ends_plain(const char *s, size_t len, char c) {
    bool plain = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len) {
            plain = false;
            i++;
        } else {
            plain = i + 1 == len && s[i] == c;
        }
    }
    return plain;
}

// Parses one line (without its '\n'). *in_comment carries an HTML comment
// over lines. For a bad line *why says why (a static string).
static mem_line_kind_t mem_parse_line(const char *s, size_t len, bool *in_comment,
    mem_pair_t *pair, const char **why) {
    mem_trim(&s, &len);
    if (*in_comment) {
        if (mem_contains(s, len, "-->", 3)) {
            *in_comment = false;
        }
        return MEM_LINE_IGNORE;
    }
    if (len == 0 || s[0] == '#') {
        return MEM_LINE_IGNORE; // blank line or heading
    }
    if (len >= 4 && memcmp(s, "<!--", 4) == 0) {
        *in_comment = !mem_contains(s + 4, len - 4, "-->", 3);
        return MEM_LINE_IGNORE;
    }
    if (mem_is_rule(s, len)) {
        return MEM_LINE_IGNORE;
    }
    if (len < 2 || (s[0] != '-' && s[0] != '*' && s[0] != '+') || !mem_is_space(s[1])) {
        *why = "not a list item";
        return MEM_LINE_BAD;
    }
    s += 2;
    len -= 2;
    mem_trim(&s, &len);
    const char *key, *val;
    size_t klen, vlen;
    bool pinned = false;
    if (len >= 2 && s[0] == '*' && s[1] == '*') {
        // - **key**: value   - **key** (pinned): value   - **key:** value
        size_t end = mem_find(s + 2, len - 2, "**", 2);
        if (end == len - 2) {
            *why = "no closing ** after the key";
            return MEM_LINE_BAD;
        }
        key = s + 2;
        klen = end;
        const char *p = key + end + 2;
        size_t plen = len - 2 - end - 2;
        mem_trim(&p, &plen);
        if (plen >= PIN_MARK_LEN && memcmp(p, PIN_MARK, PIN_MARK_LEN) == 0) {
            pinned = true;
            p += PIN_MARK_LEN;
            plen -= PIN_MARK_LEN;
            mem_trim(&p, &plen);
        }
        if (plen > 0 && p[0] == ':') {
            val = p + 1;
            vlen = plen - 1;
        } else if (mem_ends_plain(key, klen, ':')) {
            klen--;
            val = p;
            vlen = plen;
        } else {
            *why = "no ':' after the key";
            return MEM_LINE_BAD;
        }
    } else {
        // - key: value   - key (pinned): value
        size_t colon = mem_find(s, len, ":", 1);
        if (colon == len) {
            *why = "no ':' after the key";
            return MEM_LINE_BAD;
        }
        key = s;
        klen = colon;
        val = s + colon + 1;
        vlen = len - colon - 1;
        mem_trim(&key, &klen);
        if (klen > PIN_MARK_LEN && memcmp(key + klen - PIN_MARK_LEN, PIN_MARK, PIN_MARK_LEN) == 0
            && mem_is_space(key[klen - PIN_MARK_LEN - 1])) {
            pinned = true;
            klen -= PIN_MARK_LEN;
        }
    }
    mem_trim(&key, &klen);
    mem_trim(&val, &vlen);
    int k = mem_unescape(key, klen, pair->key, MEM_KEY_BYTES);
    int v = k < 0 ? 0 : mem_unescape(val, vlen, pair->value, MEM_VAL_BYTES);
    if (k == -2 || v == -2) {
        *why = "\\x00 and \\x80..\\xff are not allowed";
        return MEM_LINE_BAD;
    }
    if (k <= 0) {
        *why = TEXT_KEY_LIMIT;
        return MEM_LINE_BAD;
    }
    if (v < 0) {
        *why = TEXT_VAL_LIMIT;
        return MEM_LINE_BAD;
    }
    pair->pinned = pinned;
    return MEM_LINE_PAIR;
}

typedef struct {
    char k[CLAW_MEM_KEY_MAX];
} mem_key_t;

static bool mem_key_in(const mem_key_t *keys, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(keys[i].k, key) == 0) {
            return true;
        }
    }
    return false;
}

// The next line of text[*pos..len) without its '\n'; false at the end.
static bool mem_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *line_len) {
    if (*pos >= len) {
        return false;
    }
    const char *start = text + *pos;
    const char *nl = memchr(start, '\n', len - *pos);
    *line = start;
    *line_len = nl ? (size_t)(nl - start) : len - *pos;
    *pos += *line_len + 1;
    return true;
}

static NORETURN void mem_raise_full(mem_key_t *keys) {
    m_del(mem_key_t, keys, CLAW_MEM_MAX_ENTRIES);
    mp_raise_ValueError(MP_ERROR_TEXT("memory full: the store and the text hold more than 32 keys (CLAW_MEM_MAX_ENTRIES)"));
}

static mp_obj_t bentoclaw_import_memory(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_text, ARG_strict, ARG_skipped };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_text, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_strict, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_FALSE} },
        { MP_QSTR_skipped, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed), allowed, args);
    bentoclaw_ensure_init();
    size_t len;
    const char *text = mem_get_str(args[ARG_text].u_obj, &len, MP_QSTR_text);
    bool strict = mem_get_flag(args[ARG_strict].u_obj, MP_QSTR_strict);
    mp_obj_t skipped = args[ARG_skipped].u_obj;
    if (skipped != mp_const_none && !mp_obj_is_type(skipped, &mp_type_list)) {
        mp_raise_TypeError(MP_ERROR_TEXT("skipped must be a list or None"));
    }

    // Pass 1: check every line and gather the distinct keys, before a byte
    // is written (strict mode and the capacity check are all-or-nothing).
    mem_key_t *keys = m_new(mem_key_t, CLAW_MEM_MAX_ENTRIES);
    size_t nkeys = 0;
    mem_pair_t pair;
    bool in_comment = false;
    size_t pos = 0, line_no = 0;
    const char *line;
    size_t line_len;
    while (mem_next_line(text, len, &pos, &line, &line_len)) {
        line_no++;
        const char *why = "";
        mem_line_kind_t kind = mem_parse_line(line, line_len, &in_comment, &pair, &why);
        if (kind == MEM_LINE_BAD) {
            if (strict) {
                m_del(mem_key_t, keys, CLAW_MEM_MAX_ENTRIES);
                mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("line %u: %s"), (unsigned)line_no, why);
            }
            if (skipped != mp_const_none) {
                mp_obj_t item[2] = { mp_obj_new_int_from_uint(line_no), mp_obj_new_str(why, strlen(why)) };
                mp_obj_list_append(skipped, mp_obj_new_tuple(2, item));
            }
        } else if (kind == MEM_LINE_PAIR && !mem_key_in(keys, nkeys, pair.key)) {
            if (nkeys == CLAW_MEM_MAX_ENTRIES) {
                mem_raise_full(keys);
            }
            memcpy(keys[nkeys++].k, pair.key, sizeof(pair.key));
        }
    }
    size_t text_keys = nkeys;
    if (text_keys == 0) {
        m_del(mem_key_t, keys, CLAW_MEM_MAX_ENTRIES);
        return MP_OBJ_NEW_SMALL_INT(0);
    }
    // The keys after the import: the text's and the store's.
    claw_memory_hit_t hit;
    for (size_t i = 0; claw_memory_at(i, &hit); i++) {
        hit.key[sizeof(hit.key) - 1] = '\0';
        if (!mem_key_in(keys, nkeys, hit.key)) {
            if (nkeys == CLAW_MEM_MAX_ENTRIES) {
                mem_raise_full(keys);
            }
            memcpy(keys[nkeys++].k, hit.key, sizeof(hit.key));
        }
    }
    m_del(mem_key_t, keys, CLAW_MEM_MAX_ENTRIES);

    // Pass 2: store each pair (a key listed twice: the last line wins) and
    // set its pin as the line says. The core writes nothing for a pair that
    // is already stored as it is.
    in_comment = false;
    pos = 0;
    line_no = 0;
    size_t written = 0;
    while (mem_next_line(text, len, &pos, &line, &line_len)) {
        line_no++;
        const char *why;
        if (mem_parse_line(line, line_len, &in_comment, &pair, &why) != MEM_LINE_PAIR) {
            continue;
        }
        if (!claw_memory_set(pair.key, pair.value) || !claw_memory_pin(pair.key, pair.pinned)) {
            mp_raise_msg_varg(&mp_type_OSError,
                MP_ERROR_TEXT("memory write failed at line %u (%u pairs stored before it)"),
                (unsigned)line_no, (unsigned)written);
        }
        written++;
    }
    return mp_obj_new_int_from_uint(text_keys);
}
MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_import_memory_obj, 0, bentoclaw_import_memory);
