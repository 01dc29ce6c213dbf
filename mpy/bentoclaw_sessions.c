/*
 * bentoclaw_sessions.c — sessions that last (issue #6, docs/SESSIONS.md):
 * the binding side of include/claw_ext.h's session calls.
 *
 *   config(**kw)              -> dict     settings, stored in /.bentoclaw_config
 *   archive(offset=0, n=1024) -> bytes    a chunk of /.bentoclaw_archive
 *   session()                 -> [(role, text), ...]  the ring, oldest first
 *   ask("/new"), ask("/reset"), ask("/compact")       commands (no exchange)
 *
 * and what ask() calls around an exchange: the byte/token accounting after
 * every answered POST, the idle and daily resets and the automatic
 * compaction before the USER turn is added, and a local compaction before a
 * TOOL turn would push a turn out of the ring.
 *
 * The core never raises; every exception is raised here after the core call
 * returned. The config file is written by this file itself, through the same
 * VFS bridge the core uses (claw_port_open/write/close/rename), temp file +
 * rename, so a power cut leaves the old file or the new one.
 *
 * Static RAM: the config (12 bytes), a loaded flag, the tick of the last
 * exchange (for the idle timeout without an RTC), and on the unix port a
 * clock override for tests.
 */
#include <string.h>

#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/nlr.h"
#include "py/obj.h"
#include "py/runtime.h"
#include "shared/timeutils/timeutils.h"

#include "claw_port.h"
#include "claw_session.h"
#include "claw_ext.h"
#include "claw_safety.h"
#include "claw_transport.h"
#include "bentoclaw_internal.h"

#define CONFIG_PATH "/.bentoclaw_config"
#define CONFIG_TMP_PATH "/.bentoclaw_config.tmp"
// A config file is a few hundred bytes; a larger one is not ours.
#define CONFIG_FILE_MAX (512)

// An RTC reading before 2024-01-01T00:00:00Z means "not set" (a board
// whose RTC starts at 2000 or 2015 after a power-on).
#define RTC_SET_AFTER (1704067200u)

// "summary: " + 255 bytes + "\n": the most a summary entry takes in the
// context. Folding fewer bytes than this cannot make the context smaller.
#define SUMMARY_LINE_MAX (9u + (CLAW_MSG_MAX_LEN - 1u) + 1u)

/* ---------------------------------------------------------------------------
 * The clock
 */

#if !BENTOCLAW_PORT_FIRMWARE
// Test hook (bentoclaw._clock()): 0 = the real clock, else this value.
static uint32_t s_clock_override;
static bool s_clock_overridden;
#endif

// The tick of the last answered exchange: the idle timeout without an RTC
// (valid within one boot; a soft reset keeps it, a reboot forgets it).
static uint32_t s_last_ticks;
static bool s_last_ticks_valid;
// The last backend request failed: compactions use the local digest until a
// request succeeds again (no extra request to a backend that is failing).
static bool s_last_request_failed;

static uint32_t rtc_raw(void) {
    #if defined(BENTOCLAW_RTC_SECONDS)
    // The firmware may name its own source: seconds since 1970, 0 if unset.
    return (uint32_t)(BENTOCLAW_RTC_SECONDS);
    #elif MICROPY_PY_TIME_TIME_TIME_NS
    // mp_hal_time_ns() counts from the port's epoch (1970 or 2000).
    uint64_t ns = timeutils_nanoseconds_since_epoch_to_nanoseconds_since_1970(mp_hal_time_ns());
    uint64_t s = ns / 1000000000ULL;
    return s > UINT32_MAX ? 0 : (uint32_t)s;
    #else
    return 0; // no wall clock on this port
    #endif
}

uint32_t bentoclaw_rtc_now(void) {
    #if !BENTOCLAW_PORT_FIRMWARE
    uint32_t now = s_clock_overridden ? s_clock_override : rtc_raw();
    #else
    uint32_t now = rtc_raw();
    #endif
    return now >= RTC_SET_AFTER ? now : 0;
}

/* ---------------------------------------------------------------------------
 * config(): settings on flash
 *
 * /.bentoclaw_config, key=value lines (decimal integers; booleans 0/1), all
 * keys written, then a last line "end":
 *
 *   compact_threshold_pct=80
 *   ...
 *   auto_compact=1
 *   end
 *
 * A file without the "end" line (torn on a file system without atomic
 * rename), larger than CONFIG_FILE_MAX or unreadable is ignored whole: the
 * defaults apply. Unknown keys and out-of-range values in it are skipped,
 * so an older or newer firmware reads what it understands.
 */

enum {
    CFG_THRESHOLD,
    CFG_MIN_MSGS,
    CFG_KEEP,
    CFG_BUDGET,
    CFG_IDLE,
    CFG_RESET_HOUR,
    CFG_AUTO,
    CFG_COUNT,
};

typedef struct _cfg_desc_t {
    const char *name;
    qstr q;
    int32_t lo;
    int32_t hi;
    int32_t def;
    bool is_bool;
} cfg_desc_t;

// compact_keep stops at MAX_MSGS - 3: after a compaction the summary, the
// kept turns and one exchange (USER + ASSISTANT) fit the ring.
static const cfg_desc_t cfg_desc[CFG_COUNT] = {
    [CFG_THRESHOLD] = { "compact_threshold_pct", MP_QSTR_compact_threshold_pct, 1, 100, 80, false },
    [CFG_MIN_MSGS] = { "compact_min_msgs", MP_QSTR_compact_min_msgs, 1, CLAW_SESSION_MAX_MSGS, 4, false },
    [CFG_KEEP] = { "compact_keep", MP_QSTR_compact_keep, 0, CLAW_SESSION_MAX_MSGS - 3, 4, false },
    [CFG_BUDGET] = { "context_budget", MP_QSTR_context_budget, 256, BENTOCLAW_CONTEXT_MAX, BENTOCLAW_CONTEXT_MAX, false },
    [CFG_IDLE] = { "idle_timeout_s", MP_QSTR_idle_timeout_s, 0, 30 * 86400, 0, false },
    [CFG_RESET_HOUR] = { "daily_reset_hour", MP_QSTR_daily_reset_hour, -1, 23, 4, false },
    [CFG_AUTO] = { "auto_compact", MP_QSTR_auto_compact, 0, 1, 1, true },
};

static bentoclaw_config_t s_config;
static bool s_config_loaded;

static int32_t cfg_value(const bentoclaw_config_t *c, size_t i) {
    switch (i) {
        case CFG_THRESHOLD:
            return c->compact_threshold_pct;
        case CFG_MIN_MSGS:
            return c->compact_min_msgs;
        case CFG_KEEP:
            return c->compact_keep;
        case CFG_BUDGET:
            return c->context_budget;
        case CFG_IDLE:
            return (int32_t)c->idle_timeout_s;
        case CFG_RESET_HOUR:
            return c->daily_reset_hour;
        default:
            return c->auto_compact;
    }
}

// `v` is within cfg_desc[i]'s range.
static void cfg_set(bentoclaw_config_t *c, size_t i, int32_t v) {
    switch (i) {
        case CFG_THRESHOLD:
            c->compact_threshold_pct = (uint8_t)v;
            break;
        case CFG_MIN_MSGS:
            c->compact_min_msgs = (uint8_t)v;
            break;
        case CFG_KEEP:
            c->compact_keep = (uint8_t)v;
            break;
        case CFG_BUDGET:
            c->context_budget = (uint16_t)v;
            break;
        case CFG_IDLE:
            c->idle_timeout_s = (uint32_t)v;
            break;
        case CFG_RESET_HOUR:
            c->daily_reset_hour = (int8_t)v;
            break;
        default:
            c->auto_compact = v != 0;
            break;
    }
}

static void cfg_defaults(bentoclaw_config_t *c) {
    for (size_t i = 0; i < CFG_COUNT; i++) {
        cfg_set(c, i, cfg_desc[i].def);
    }
}

// One "key=value" line of buf[0..len) into `c` (unknown or bad: skipped).
static void cfg_parse_line(bentoclaw_config_t *c, const char *line, size_t len) {
    const char *eq = memchr(line, '=', len);
    if (eq == NULL) {
        return;
    }
    size_t key_len = (size_t)(eq - line);
    const char *p = eq + 1;
    const char *end = line + len;
    bool neg = p < end && *p == '-';
    if (neg) {
        p++;
    }
    if (p == end || end - p > 9) {
        return; // no digits, or more than any range here needs
    }
    int32_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') {
            return;
        }
        v = v * 10 + (*p - '0');
    }
    if (neg) {
        v = -v;
    }
    for (size_t i = 0; i < CFG_COUNT; i++) {
        const cfg_desc_t *d = &cfg_desc[i];
        if (strlen(d->name) == key_len && memcmp(d->name, line, key_len) == 0) {
            if (v >= d->lo && v <= d->hi) {
                cfg_set(c, i, v);
            }
            return;
        }
    }
}

// Reads the file into s_config. A missing file is the defaults (loaded); an
// unreadable one gives the defaults for now and is read again next time.
static void cfg_load(void) {
    cfg_defaults(&s_config);
    int32_t fd = claw_port_open(CONFIG_PATH, CLAW_PORT_MODE_READ);
    if (fd < 0) {
        s_config_loaded = fd == -MP_ENOENT;
        return;
    }
    char buf[CONFIG_FILE_MAX + 1];
    size_t len = 0;
    int32_t r;
    do {
        r = claw_port_read(fd, (uint8_t *)buf + len, sizeof(buf) - len);
        if (r > 0) {
            len += (size_t)r;
        }
    } while (r > 0 && len < sizeof(buf));
    (void)claw_port_close(fd);
    if (r < 0) {
        return; // read error: defaults for now, try again later
    }
    s_config_loaded = true;
    // Trusted only whole: it must end with the line "end" and fit.
    if (len > CONFIG_FILE_MAX || len < 4 || memcmp(buf + len - 4, "end\n", 4) != 0
        || (len > 4 && buf[len - 5] != '\n')) {
        return;
    }
    bentoclaw_config_t c = s_config;
    size_t start = 0;
    for (size_t i = 0; i < len - 4; i++) {
        if (buf[i] == '\n') {
            size_t l = i - start;
            if (l > 0 && buf[start + l - 1] == '\r') {
                l--;
            }
            cfg_parse_line(&c, buf + start, l);
            start = i + 1;
        }
    }
    s_config = c;
}

const bentoclaw_config_t *bentoclaw_config(void) {
    if (!s_config_loaded) {
        cfg_load();
    }
    return &s_config;
}

void bentoclaw_sessions_vm_reset(void) {
    s_config_loaded = false;
    #if !BENTOCLAW_PORT_FIRMWARE
    s_clock_overridden = false;
    #endif
}

// Writes `c` to the file (temp + rename). 0 or -errno.
static int32_t cfg_write(const bentoclaw_config_t *c) {
    char buf[CONFIG_FILE_MAX];
    size_t len = 0;
    for (size_t i = 0; i < CFG_COUNT; i++) {
        // Each line is at most 21 + 1 + 11 + 1 bytes: 7 of them fit.
        char num[12];
        int32_t v = cfg_value(c, i);
        uint32_t u = v < 0 ? (uint32_t)(-(int64_t)v) : (uint32_t)v;
        size_t n = sizeof(num);
        do {
            num[--n] = (char)('0' + u % 10);
            u /= 10;
        } while (u > 0);
        if (v < 0) {
            num[--n] = '-';
        }
        size_t name_len = strlen(cfg_desc[i].name);
        memcpy(buf + len, cfg_desc[i].name, name_len);
        len += name_len;
        buf[len++] = '=';
        memcpy(buf + len, num + n, sizeof(num) - n);
        len += sizeof(num) - n;
        buf[len++] = '\n';
    }
    memcpy(buf + len, "end\n", 4);
    len += 4;

    int32_t fd = claw_port_open(CONFIG_TMP_PATH, CLAW_PORT_MODE_WRITE);
    if (fd < 0) {
        return fd;
    }
    int32_t w = claw_port_write(fd, (const uint8_t *)buf, len);
    int32_t cl = claw_port_close(fd);
    int32_t r = w < 0 ? w : cl < 0 ? cl : claw_port_rename(CONFIG_TMP_PATH, CONFIG_PATH);
    if (r < 0) {
        (void)claw_port_remove(CONFIG_TMP_PATH);
        return r;
    }
    return 0;
}

static mp_obj_t cfg_dict(const bentoclaw_config_t *c) {
    mp_obj_t d = mp_obj_new_dict(CFG_COUNT);
    for (size_t i = 0; i < CFG_COUNT; i++) {
        int32_t v = cfg_value(c, i);
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(cfg_desc[i].q),
            cfg_desc[i].is_bool ? mp_obj_new_bool(v) : mp_obj_new_int(v));
    }
    return d;
}

// config(**kw) -> dict. Every keyword is checked before anything changes;
// a changed setting is written to flash at once (temp + rename), an
// unchanged one writes nothing. A failed write raises OSError and keeps the
// settings as they were.
static mp_obj_t bentoclaw_config_fn(size_t n_args, const mp_obj_t *args, mp_map_t *kw) {
    bentoclaw_ensure_init();
    (void)args;
    if (n_args != 0) {
        mp_raise_TypeError(MP_ERROR_TEXT("config() takes keyword arguments only"));
    }
    const bentoclaw_config_t *cur = bentoclaw_config();
    bentoclaw_config_t next = *cur;
    for (size_t k = 0; k < kw->alloc; k++) {
        if (!mp_map_slot_is_filled(kw, k)) {
            continue;
        }
        mp_obj_t key = kw->table[k].key;
        mp_obj_t val = kw->table[k].value;
        size_t i = 0;
        qstr q = mp_obj_str_get_qstr(key);
        while (i < CFG_COUNT && cfg_desc[i].q != q) {
            i++;
        }
        if (i == CFG_COUNT) {
            mp_raise_msg_varg(&mp_type_TypeError,
                MP_ERROR_TEXT("unknown config key '%q' (keys: compact_threshold_pct, compact_min_msgs, "
                    "compact_keep, context_budget, idle_timeout_s, daily_reset_hour, auto_compact)"), q);
        }
        const cfg_desc_t *d = &cfg_desc[i];
        mp_int_t v;
        if (d->is_bool) {
            if (mp_obj_is_bool(val)) {
                v = val == mp_const_true;
            } else if (mp_obj_is_small_int(val) && (MP_OBJ_SMALL_INT_VALUE(val) == 0 || MP_OBJ_SMALL_INT_VALUE(val) == 1)) {
                v = MP_OBJ_SMALL_INT_VALUE(val);
            } else {
                mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be bool"), q);
            }
        } else {
            if (!mp_obj_is_int(val)) {
                mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%q must be int"), q);
            }
            v = mp_obj_is_small_int(val) ? MP_OBJ_SMALL_INT_VALUE(val) : (mp_int_t)d->lo - 1;
            if (v < d->lo || v > d->hi) {
                mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%q must be %d..%d"),
                    q, (int)d->lo, (int)d->hi);
            }
        }
        cfg_set(&next, i, (int32_t)v);
    }
    bool changed = false;
    for (size_t i = 0; i < CFG_COUNT; i++) {
        changed |= cfg_value(&next, i) != cfg_value(cur, i);
    }
    if (changed) {
        int32_t r = cfg_write(&next);
        if (r < 0) {
            mp_raise_OSError((int)-r);
        }
        s_config = next;
    }
    return cfg_dict(&s_config);
}
MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_config_obj, 0, bentoclaw_config_fn);

/* ---------------------------------------------------------------------------
 * Accounting
 */

// The vendor transport may not report tokens: then this default (weak, so
// the unix transport's definition wins) reports none.
MP_WEAK bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    if (tokens_in != NULL) {
        *tokens_in = 0;
    }
    if (tokens_out != NULL) {
        *tokens_out = 0;
    }
    return false;
}

static uint32_t clamp_u32(size_t v) {
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void bentoclaw_account(size_t body_len, size_t reply_len, size_t ctx_len) {
    uint32_t tin = 0, tout = 0;
    (void)claw_https_last_tokens(&tin, &tout);
    claw_session_account(clamp_u32(body_len), clamp_u32(reply_len), tin, tout,
        clamp_u32(ctx_len), bentoclaw_rtc_now());
    s_last_ticks = (uint32_t)mp_hal_ticks_ms();
    s_last_ticks_valid = true;
    s_last_request_failed = false;
}

void bentoclaw_request_failed(void) {
    s_last_request_failed = true;
}

/* ---------------------------------------------------------------------------
 * Compaction
 */

// Role of the index-th ring entry, or -1.
static int ring_role(uint16_t index, char *buf) {
    uint8_t role;
    return claw_session_message(index, &role, buf, CLAW_MSG_MAX_LEN) ? role : -1;
}

static const char *role_name(int role) {
    static const char *const names[] = { "user", "assistant", "system", "tool", "summary" };
    return role >= 0 && (size_t)role < MP_ARRAY_SIZE(names) ? names[role] : "unknown";
}

// What claw_session_compact(_, keep) would fold, as the core plans it
// (claw_session_compact_plan: all turns after the summary but the newest
// `keep`, less what keeps a TOOL turn with its asker and a reply with its
// question), and the context bytes of those turns.
typedef struct _fold_plan_t {
    uint16_t head;  // 1 when the ring starts with a summary
    uint16_t turns; // entries after it
    uint16_t fold;  // turns that would be folded
    size_t bytes;   // context bytes of the summary and the folded turns
} fold_plan_t;

static void fold_plan(uint16_t keep, fold_plan_t *p) {
    char buf[CLAW_MSG_MAX_LEN];
    uint16_t count = claw_session_count();
    p->head = count > 0 && ring_role(0, buf) == CLAW_ROLE_SUMMARY ? 1 : 0;
    p->turns = count - p->head;
    p->fold = claw_session_compact_plan(keep);
    p->bytes = 0;
    for (uint16_t i = 0; p->fold > 0 && i < p->head + p->fold; i++) {
        int role = ring_role(i, buf);
        p->bytes += strlen(role_name(role)) + 2 + strlen(buf) + 1;
    }
}

// The summary request (docs/BACKEND.md §4): the old summary and the turns to
// fold as "role: text" lines. Returns the summary (NUL-terminated in
// `reply`) or NULL when the request failed or gave nothing usable. A failed
// request is counted (errors, breaker failure); an answered one is a breaker
// success and is accounted like any exchange.
static const char *summary_request(const fold_plan_t *p, char *reply, bool *failed) {
    vstr_t lines;
    vstr_init(&lines, p->bytes + 1);
    char buf[CLAW_MSG_MAX_LEN];
    for (uint16_t i = 0; i < p->head + p->fold; i++) {
        int role = ring_role(i, buf);
        vstr_add_str(&lines, role_name(role));
        vstr_add_strn(&lines, ": ", 2);
        vstr_add_str(&lines, buf);
        vstr_add_char(&lines, '\n');
    }
    static const char head[] = "{\"summarize\":\"";
    static const char tail[] = "\",\"max_bytes\":255}";
    size_t esc = bentoclaw_json_escape(NULL, lines.buf, lines.len);
    size_t body_len = sizeof(head) - 1 + esc + sizeof(tail) - 1;
    char *body = m_new(char, body_len);
    memcpy(body, head, sizeof(head) - 1);
    bentoclaw_json_escape(body + sizeof(head) - 1, lines.buf, lines.len);
    memcpy(body + sizeof(head) - 1 + esc, tail, sizeof(tail) - 1);
    vstr_clear(&lines);

    int n = claw_https_post(body, body_len, reply, BENTOCLAW_REPLY_MAX);
    m_del(char, body, body_len);
    if (n < 0 || !bentoclaw_utf8_valid(reply, (size_t)n)) {
        s_last_request_failed = true;
        bentoclaw_summary_failed();
        *failed = true;
        return NULL;
    }
    claw_cb_success();
    claw_session_stats_t st;
    bentoclaw_account(body_len, (size_t)n, claw_session_stats(&st) ? st.context_bytes : 0);
    // Cut at a NUL (the core takes a C string); nothing left: a local digest.
    return reply[0] != '\0' ? reply : NULL;
}

// Folds with the plan for `keep`: a summary from the backend when
// `ask_backend`, else (or when that fails) a local digest. Returns the turns
// folded; *failed tells whether the summary request failed (the breaker has
// heard it). A MemoryError while building the request counts as a failed
// request and falls back to the local digest; only a KeyboardInterrupt/
// SystemExit raises.
static uint16_t compact_now(uint16_t keep, bool ask_backend, char *reply, bool *failed, bool *local) {
    *failed = false;
    *local = true;
    fold_plan_t p;
    fold_plan(keep, &p);
    if (p.fold == 0) {
        return 0;
    }
    const char *summary = NULL;
    if (ask_backend) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            summary = summary_request(&p, reply, failed);
            nlr_pop();
        } else if (!bentoclaw_exc_is_failure(nlr.ret_val)) {
            nlr_jump(nlr.ret_val);
        } else {
            // Out of heap before the POST: a failed request for the breaker
            // (as in ask()), so an admitted half-open trial is reported.
            bentoclaw_summary_failed();
            *failed = true;
        }
    }
    *local = summary == NULL;
    return claw_session_compact(summary, keep);
}

/* ---------------------------------------------------------------------------
 * Resets
 */

// Whether the session is due for a fresh start (idle timeout, daily reset).
static bool reset_due(const bentoclaw_config_t *c) {
    claw_session_stats_t st;
    if (!claw_session_stats(&st)) {
        return false;
    }
    uint32_t now = bentoclaw_rtc_now();
    uint32_t last = st.last_active;
    if (c->idle_timeout_s > 0) {
        if (now != 0 && last != 0) {
            if (now >= last && now - last >= c->idle_timeout_s) {
                return true;
            }
        } else if (s_last_ticks_valid) {
            uint32_t idle_ms = (uint32_t)mp_hal_ticks_ms() - s_last_ticks;
            if (idle_ms >= c->idle_timeout_s * 1000u) {
                return true;
            }
        }
    }
    if (c->daily_reset_hour >= 0 && now != 0 && last != 0) {
        // The newest hh:00:00 at or before now (RTC time taken as local).
        uint32_t since = (now - (uint32_t)c->daily_reset_hour * 3600u) % 86400u;
        uint32_t boundary = now - since;
        if (last < boundary) {
            return true;
        }
    }
    return false;
}

// Retires the session (archive + clear). False when the archive could not
// be written (then nothing changed).
static bool start_new(void) {
    if (!claw_session_new()) {
        return false;
    }
    s_last_ticks_valid = false;
    if (claw_ipc_initialized) {
        claw_ipc_send_ui(CLAW_UI_CLEAR, "", 0);
    }
    return true;
}

/* ---------------------------------------------------------------------------
 * ask()'s side
 */

static bool prompt_is(const char *p, size_t len, const char *cmd) {
    while (len > 0 && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
        p++;
        len--;
    }
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r' || p[len - 1] == '\n')) {
        len--;
    }
    return strlen(cmd) == len && memcmp(p, cmd, len) == 0;
}

mp_obj_t bentoclaw_ask_command(const char *prompt, size_t len) {
    if (len == 0 || len > 16) {
        return MP_OBJ_NULL;
    }
    if (prompt_is(prompt, len, "/new") || prompt_is(prompt, len, "/reset")) {
        if (!start_new()) {
            mp_raise_msg(&mp_type_OSError,
                MP_ERROR_TEXT("archive write failed: session kept (session_clear() drops it)"));
        }
        bentoclaw_set_last_result("new session");
        return mp_obj_new_str("new session", 11);
    }
    if (!prompt_is(prompt, len, "/compact")) {
        return MP_OBJ_NULL;
    }
    const bentoclaw_config_t *c = bentoclaw_config();
    fold_plan_t p;
    fold_plan(c->compact_keep, &p);
    uint16_t n = 0;
    bool failed = false, local = true;
    if (p.fold > 0) {
        // A summary from the backend when it is reachable and the breaker
        // admits a request; otherwise the local digest, no error.
        // The buffer is taken before the breaker admits the request, so
        // running out of heap cannot leave a half-open trial unreported.
        char *reply = NULL;
        bool online = false;
        if (claw_https_connected() && !s_last_request_failed) {
            reply = m_new(char, BENTOCLAW_REPLY_MAX + 1);
            online = claw_cb_allow();
        }
        n = compact_now(c->compact_keep, online, reply, &failed, &local);
        if (reply != NULL) {
            m_del(char, reply, BENTOCLAW_REPLY_MAX + 1);
        }
        if (n == 0) {
            if (claw_session_dirty()) {
                (void)claw_session_flush();
            }
            mp_raise_msg(&mp_type_OSError, MP_ERROR_TEXT("archive write failed: nothing compacted"));
        }
        if (claw_session_dirty()) {
            (void)claw_session_flush();
        }
    }
    (void)failed;
    vstr_t v;
    vstr_init(&v, 40);
    vstr_printf(&v, "compacted %u turns%s", (unsigned)n, n > 0 && local ? " (local digest)" : "");
    bentoclaw_set_last_result(vstr_null_terminated_str(&v));
    return mp_obj_new_str_from_vstr(&v);
}

bool bentoclaw_ask_prepare(char *reply) {
    const bentoclaw_config_t *c = bentoclaw_config();
    if (reset_due(c)) {
        // The archive could not be written: keep the session (nothing is
        // lost) and try again at the next ask().
        (void)start_new();
    }
    if (!c->auto_compact) {
        return true;
    }
    fold_plan_t p;
    fold_plan(c->compact_keep, &p);
    if (p.fold == 0) {
        return true;
    }
    // 1. The exchange's USER and ASSISTANT turns would push a turn out.
    bool due = p.head + p.turns + 2 > CLAW_SESSION_MAX_MSGS;
    // 2. The last request's context passed the threshold, the ring holds
    //    enough turns, and folding frees more than a summary takes.
    if (!due && p.turns >= c->compact_min_msgs && p.bytes > SUMMARY_LINE_MAX) {
        claw_session_stats_t st;
        if (claw_session_stats(&st)) {
            due = (uint64_t)st.context_bytes * 100u
                >= (uint64_t)c->compact_threshold_pct * c->context_budget;
        }
    }
    if (!due) {
        return true;
    }
    bool failed, local;
    (void)compact_now(c->compact_keep, !s_last_request_failed, reply, &failed, &local);
    // A failed summary request is a failed backend request: the breaker
    // heard it. The exchange goes ahead only if it still admits one.
    return !failed || claw_cb_allow();
}

void bentoclaw_ask_before_tool_turn(uint16_t turns_this_ask) {
    const bentoclaw_config_t *c = bentoclaw_config();
    if (!c->auto_compact || claw_session_count() + 2 <= CLAW_SESSION_MAX_MSGS) {
        return;
    }
    // Local digest: no extra POST in the middle of a tool round. The USER
    // turn of this ask() and its TOOL turns stay.
    uint16_t keep = c->compact_keep > turns_this_ask ? c->compact_keep : turns_this_ask;
    bool failed, local;
    (void)compact_now(keep, false, NULL, &failed, &local);
}

/* ---------------------------------------------------------------------------
 * archive(), session()
 */

// archive(offset=0, n=1024) -> bytes: up to n bytes of /.bentoclaw_archive
// from byte `offset` (b"" at the end or without an archive).
static mp_obj_t bentoclaw_archive_fn(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    enum { ARG_offset, ARG_n };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_offset, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(0)} },
        { MP_QSTR_n, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_INT(1024)} },
    };
    bentoclaw_ensure_init();
    mp_arg_val_t a[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args, pos, kw, MP_ARRAY_SIZE(allowed), allowed, a);
    mp_obj_t off_in = a[ARG_offset].u_obj, n_in = a[ARG_n].u_obj;
    if (!mp_obj_is_int(off_in)) {
        mp_raise_TypeError(MP_ERROR_TEXT("offset must be int"));
    }
    if (!mp_obj_is_int(n_in)) {
        mp_raise_TypeError(MP_ERROR_TEXT("n must be int"));
    }
    mp_int_t off = mp_obj_is_small_int(off_in) ? MP_OBJ_SMALL_INT_VALUE(off_in) : -1;
    mp_int_t n = mp_obj_is_small_int(n_in) ? MP_OBJ_SMALL_INT_VALUE(n_in) : -1;
    if (off < 0 || off > 0x3fffffff) {
        mp_raise_ValueError(MP_ERROR_TEXT("offset must be 0..1073741823"));
    }
    if (n < 1 || n > BENTOCLAW_REPLY_MAX) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("n must be 1..%d"), BENTOCLAW_REPLY_MAX);
    }
    vstr_t v;
    vstr_init_len(&v, (size_t)n);
    size_t got = claw_archive_read((uint32_t)off, v.buf, (size_t)n);
    v.len = got <= (size_t)n ? got : 0;
    return mp_obj_new_bytes_from_vstr(&v);
}
MP_DEFINE_CONST_FUN_OBJ_KW(bentoclaw_archive_obj, 0, bentoclaw_archive_fn);

// session() -> [(role, text), ...]: the ring, oldest first; role is "user",
// "assistant", "system", "tool" or "summary".
static mp_obj_t bentoclaw_session_fn(void) {
    bentoclaw_ensure_init();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    char buf[CLAW_MSG_MAX_LEN];
    uint16_t count = claw_session_count();
    for (uint16_t i = 0; i < count; i++) {
        uint8_t role;
        if (!claw_session_message(i, &role, buf, sizeof(buf))) {
            break;
        }
        size_t len = strnlen(buf, sizeof(buf));
        const char *name = role_name(role);
        mp_obj_t items[2] = {
            mp_obj_new_str(name, strlen(name)),
            // Never trust what came off flash to be a valid str.
            bentoclaw_utf8_valid(buf, len) ? mp_obj_new_str(buf, len) : mp_obj_new_bytes((const byte *)buf, len),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(2, items));
    }
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_0(bentoclaw_session_obj, bentoclaw_session_fn);

#if !BENTOCLAW_PORT_FIRMWARE
// Test hook of the unix port: _clock() -> the RTC seconds bentoclaw sees
// (0 = unset); _clock(s) makes the RTC read s from now on (any value, so a
// test can also make it unset), _clock(None) goes back to the real clock.
static mp_obj_t bentoclaw__clock(size_t n_args, const mp_obj_t *args) {
    bentoclaw_ensure_init();
    if (n_args > 0) {
        if (args[0] == mp_const_none) {
            s_clock_overridden = false;
        } else {
            s_clock_override = (uint32_t)mp_obj_get_int_truncated(args[0]);
            s_clock_overridden = true;
        }
    }
    return mp_obj_new_int_from_uint(bentoclaw_rtc_now());
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(bentoclaw__clock_obj, 0, 1, bentoclaw__clock);
#endif
