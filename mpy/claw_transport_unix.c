/*
 * claw_transport_unix.c — claw_transport.h for the MicroPython unix port:
 * plain HTTP/1.1 on loopback to the local test backend
 * (mpy/examples/backend.py) instead of the firmware's HTTPS, for the UI
 * panel (include/claw_port.h's claw_port_ui) an in-RAM log of its messages
 * that tests read through bentoclaw._ui_events(), and the test clock of
 * bentoclaw._clock(). Only what those two test hooks call uses
 * MicroPython's API: the rest cannot raise, so any part of the binding or
 * the core may call it.
 *
 * The HTTP client is strict: every way a backend can misbehave must end as a
 * failed request within a bounded time, not a hang or a half-trusted reply:
 *  - one deadline (BENTOCLAW_HTTP_TIMEOUT_MS; the environment variable of
 *    that name overrides it, for tests whose clock runs faster than real
 *    time) covers connect, send and receive; every wait is a poll()
 *    against what is left of it;
 *  - no name lookup, which no deadline could bound (see "Addresses");
 *  - the header block must end within BENTOCLAW_HTTP_HEADER_MAX bytes;
 *  - only "HTTP/1.x 200" is success (SPEC §6; the vendor's transport takes
 *    any 2xx); a malformed status or header line fails;
 *  - Content-Length, when present, must be exact: fewer bytes before the
 *    peer closes is a truncated reply; more than the caller's buffer fails
 *    before reading it. Without it the body runs to the close and must fit;
 *  - chunked transfer coding is not spoken (we never ask for it) and fails.
 */
#define _GNU_SOURCE // memmem()
#include "claw_transport.h"

#if !BENTOCLAW_PORT_FIRMWARE

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "py/runtime.h"

#include "claw_ext.h"
#include "claw_port.h"

/* The whole response header block (status line + headers) must fit in this
 * many bytes; a larger one (a header flood) is a failed request. */
#ifndef BENTOCLAW_HTTP_HEADER_MAX
#define BENTOCLAW_HTTP_HEADER_MAX (1024)
#endif

static char s_host[BENTOCLAW_HOST_MAX];
static char s_api_key[BENTOCLAW_API_KEY_MAX];
static uint16_t s_port;
static bool s_connected;
// Token counts of the last response (X-Tokens-In / X-Tokens-Out), 0 when
// the backend did not report them or the request failed.
static struct {
    uint32_t in, out;
    bool reported;
} s_tokens;

// The request deadline in ms: BENTOCLAW_HTTP_TIMEOUT_MS, or the environment
// variable of that name (scripts/test_mpy.sh scales it for tests that run the
// clock 50 times faster, so that it stays 5 s of real time).
static uint64_t transport_timeout_ms(void) {
    const char *v = getenv("BENTOCLAW_HTTP_TIMEOUT_MS");
    unsigned long long ms = v != NULL ? strtoull(v, NULL, 10) : 0;
    return ms > 0 && ms < 86400000ull ? ms : BENTOCLAW_HTTP_TIMEOUT_MS;
}

static uint64_t transport_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// Wait until `fd` is ready for `events` or the deadline passes.
// Returns 1 when ready, 0 on timeout, -1 on error.
static int transport_wait(int fd, short events, uint64_t deadline) {
    for (;;) {
        uint64_t now = transport_now_ms();
        if (now >= deadline) {
            return 0;
        }
        struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
        int r = poll(&pfd, 1, deadline - now > 1000 ? 1000 : (int)(deadline - now));
        // POLLERR/POLLHUP also count as ready: the following
        // send/recv/getsockopt reports what happened.
        if (r > 0) {
            return 1;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
    }
}

/* --- Addresses: no name lookup ---------------------------------------------
 * getaddrinfo() on a name may ask DNS, and that wait cannot be bounded by the
 * request's deadline: it blocks inside the resolver (resolv.conf's timeout,
 * 5 s per try by default, times its attempts and name servers), and glibc's
 * getaddrinfo_a() cannot cancel a lookup that has started. The backend is on
 * this machine, so this transport takes a numeric IPv4 or IPv6 address
 * (AI_NUMERICHOST) or "localhost" (any case, with or without a final dot:
 * 127.0.0.1, then ::1, without /etc/hosts or DNS), and refuses every other
 * name at once (connect() returns False) with a line on stderr that says
 * why. The firmware's transport resolves names itself.
 */

// Non-blocking connect to each address of `numeric` in turn, bounded by the
// deadline. Returns a connected socket, -1 when none connected, -2 when
// `numeric` is not a numeric address.
static int transport_connect_numeric(const char *numeric, const char *port_str, uint64_t deadline) {
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(numeric, port_str, &hints, &res);
    if (gai != 0 || res == NULL) {
        return gai == EAI_NONAME ? -2 : -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        if (transport_now_ms() >= deadline) {
            break;
        }
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        int err = 0;
        socklen_t err_len = sizeof(err);
        if (r != 0 && (errno == EINPROGRESS || errno == EINTR) && transport_wait(fd, POLLOUT, deadline) == 1
            && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) == 0 && err == 0) {
            r = 0;
        }
        if (r == 0) {
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

// Connect to host:port, bounded by the deadline; no name lookup (above).
// Returns a connected socket, or a negative number.
static int transport_tcp_connect(const char *host, uint16_t port, uint64_t deadline) {
    char port_str[8];
    snprintf(port_str, sizeof(port_str), "%u", (unsigned)port);
    if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0) {
        int fd = transport_connect_numeric("127.0.0.1", port_str, deadline);
        return fd >= 0 ? fd : transport_connect_numeric("::1", port_str, deadline);
    }
    int fd = transport_connect_numeric(host, port_str, deadline);
    if (fd == -2) {
        fprintf(stderr,
            "bentoclaw: '%s' is not a numeric address or localhost: the unix transport "
            "does no name lookup (DNS has no deadline)\n", host);
        return -1;
    }
    return fd;
}

// After a send() or recv() that failed (-1): whether to try again, i.e. it
// was interrupted, or it would block and the socket became ready in time.
static bool transport_retry(int fd, short events, uint64_t deadline) {
    return errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && transport_wait(fd, events, deadline) == 1);
}

static bool transport_send_all(int fd, const char *buf, size_t len, uint64_t deadline) {
    while (len > 0) {
        // MSG_NOSIGNAL: a peer that closed early must give EPIPE, not kill
        // the interpreter with SIGPIPE.
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n == 0 || !transport_retry(fd, POLLOUT, deadline)) {
            return false;
        }
    }
    return true;
}

// Receive some bytes. Returns the count, 0 at the peer's close, -1 on error
// or when the deadline passes.
static ssize_t transport_recv(int fd, char *buf, size_t len, uint64_t deadline) {
    for (;;) {
        ssize_t n = recv(fd, buf, len, 0);
        if (n >= 0 || !transport_retry(fd, POLLIN, deadline)) {
            return n;
        }
    }
}

// Parse a decimal header value: digits only (surrounding blanks allowed), at
// most `max`. Returns false when malformed.
static bool transport_parse_uint(const char *p, const char *end, size_t max, size_t *out) {
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    if (p == end) {
        return false;
    }
    size_t v = 0;
    for (; p < end; p++) {
        size_t d = (size_t)(*p - '0');
        if (*p < '0' || *p > '9' || v > (max - d) / 10u) {
            return false; // not a digit, or above max
        }
        v = v * 10u + d;
    }
    *out = v;
    return true;
}

// A token count header value: at most 4294967295. Anything else is ignored
// (the reply itself is still good; only the count is unknown).
static void transport_parse_tokens(const char *p, const char *end, uint32_t *out) {
    size_t v;
    if (transport_parse_uint(p, end, UINT32_MAX, &v)) {
        *out = (uint32_t)v;
        s_tokens.reported = true;
    }
}

// Check the status line and headers in hdr[0..len) (which ends with the
// blank line). On success sets *has_length / *length and returns true.
static bool transport_parse_header(const char *hdr, size_t len, bool *has_length, size_t *length) {
    *has_length = false;
    // Status line: "HTTP/1.x 200" followed by a space (reason) or CRLF.
    if (len < 14 || memcmp(hdr, "HTTP/1.", 7) != 0 || (hdr[7] != '0' && hdr[7] != '1')
        || hdr[8] != ' ' || memcmp(hdr + 9, "200", 3) != 0 || (hdr[12] != ' ' && hdr[12] != '\r')) {
        return false;
    }
    const char *end = hdr + len - 2; // the final CRLF of the blank line
    const char *line = memchr(hdr, '\n', len);
    if (line == NULL) {
        return false;
    }
    line++;
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (eol == NULL || eol == line || eol[-1] != '\r') {
            return false; // bare LF or a line that never ends: not HTTP
        }
        const char *line_end = eol - 1;
        const char *colon = memchr(line, ':', (size_t)(line_end - line));
        if (colon == NULL || colon == line) {
            return false;
        }
        size_t name_len = (size_t)(colon - line);
        if (name_len == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
            size_t v;
            if (!transport_parse_uint(colon + 1, line_end, SIZE_MAX, &v) || (*has_length && v != *length)) {
                return false; // malformed, or conflicting lengths: refuse to guess
            }
            *has_length = true;
            *length = v;
        } else if (name_len == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
            return false; // we never ask for chunked and do not parse it
        } else if (name_len == 11 && strncasecmp(line, "X-Tokens-In", 11) == 0) {
            transport_parse_tokens(colon + 1, line_end, &s_tokens.in);
        } else if (name_len == 12 && strncasecmp(line, "X-Tokens-Out", 12) == 0) {
            transport_parse_tokens(colon + 1, line_end, &s_tokens.out);
        }
        line = eol + 1;
    }
    return true;
}

// One request/response exchange on a connected socket.
static int transport_exchange(int fd, const char *path, const char *body, size_t body_len,
    char *resp, size_t resp_max, uint64_t deadline) {
    char hdr[BENTOCLAW_HTTP_HEADER_MAX];
    // The key as APISIX key-auth reads it (the vendor transport's header).
    int n = snprintf(hdr, sizeof(hdr),
        "POST %s HTTP/1.1\r\n"
        "Host: %s:%u\r\n"
        "Content-Type: application/json\r\n"
        "apikey: %s\r\n"
        "Content-Length: %lu\r\n"
        "Connection: close\r\n"
        "\r\n",
        path, s_host, (unsigned)s_port, s_api_key, (unsigned long)body_len);
    if (n < 0 || (size_t)n >= sizeof(hdr) || !transport_send_all(fd, hdr, (size_t)n, deadline)
        || !transport_send_all(fd, body, body_len, deadline)) {
        return -1;
    }
    // Read until the blank line that ends the header block, which must fit in
    // hdr[] (a flood, a close or timeout inside it fail). What comes after it
    // is the start of the body.
    size_t got = 0, header_len = 0;
    while (header_len == 0) {
        ssize_t r = got == sizeof(hdr) ? -1 : transport_recv(fd, hdr + got, sizeof(hdr) - got, deadline);
        if (r <= 0) {
            return -1;
        }
        size_t from = got >= 3 ? got - 3 : 0;
        got += (size_t)r;
        const char *blank = memmem(hdr + from, got - from, "\r\n\r\n", 4);
        header_len = blank != NULL ? (size_t)(blank - hdr) + 4 : 0;
    }
    bool has_length;
    size_t length = 0;
    // A body declared larger than the caller's buffer fails before it is
    // read: -2, "too long" (claw_transport.h).
    if (!transport_parse_header(hdr, header_len, &has_length, &length)) {
        return -1;
    }
    if (has_length && length > resp_max) {
        return -2;
    }
    size_t limit = has_length ? length : resp_max;
    size_t body_got = got - header_len;
    if (body_got > limit && !has_length) {
        return -2;
    }
    body_got = body_got > limit ? limit : body_got; // bytes after the declared length are ignored
    memcpy(resp, hdr + header_len, body_got);
    while (!has_length || body_got < length) {
        char probe;
        // When the buffer is full, still read one byte to tell "ended here"
        // (close) from "larger than the buffer" without overrunning it.
        char *dst = body_got < limit ? resp + body_got : &probe;
        size_t room = body_got < limit ? limit - body_got : 1;
        ssize_t r = transport_recv(fd, dst, room, deadline);
        // Failed: an error, a close before the announced length (truncated),
        // a byte past a full buffer (larger than the caller's buffer: -2).
        if (r > 0 && dst == &probe) {
            return -2;
        }
        if (r < 0 || (r == 0 && has_length)) {
            return -1;
        }
        if (r == 0) {
            break;
        }
        body_got += (size_t)r;
    }
    resp[body_got] = '\0';
    return (int)body_got;
}

bool claw_https_connect(const char *host, uint16_t port, const char *api_key) {
    s_connected = false;
    if (host == NULL || api_key == NULL || strlen(host) >= sizeof(s_host)
        || strlen(api_key) >= sizeof(s_api_key)) {
        return false;
    }
    // Connecting once proves the endpoint is there; each request then opens
    // its own connection (Connection: close), which keeps no socket open
    // between requests and survives a backend restart.
    int fd = transport_tcp_connect(host, port, transport_now_ms() + transport_timeout_ms());
    if (fd < 0) {
        return false;
    }
    close(fd);
    strcpy(s_host, host);
    strcpy(s_api_key, api_key);
    s_port = port;
    s_connected = true;
    return true;
}

int claw_https_post(const char *path, const char *body, size_t body_len, char *resp, size_t resp_max) {
    // The path goes into the request line: printable ASCII from '/', no
    // space (the binding passes BENTOCLAW_HTTP_PATH).
    bool path_ok = path != NULL && path[0] == '/' && strlen(path) < 256;
    for (const char *c = path; path_ok && *c != '\0'; c++) {
        path_ok = *c > 0x20 && *c < 0x7f;
    }
    if (!s_connected || !path_ok || body == NULL || resp == NULL || resp_max > (size_t)INT32_MAX) {
        return -1;
    }
    memset(&s_tokens, 0, sizeof(s_tokens));
    uint64_t deadline = transport_now_ms() + transport_timeout_ms();
    int fd = transport_tcp_connect(s_host, s_port, deadline);
    if (fd < 0) {
        return -1;
    }
    int r = transport_exchange(fd, path, body, body_len, resp, resp_max, deadline);
    close(fd);
    if (r < 0) {
        memset(&s_tokens, 0, sizeof(s_tokens)); // counts of a failed request are not reported
    }
    return r;
}

bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    *tokens_in = s_tokens.in;
    *tokens_out = s_tokens.out;
    return s_tokens.reported;
}

bool claw_https_connected(void) {
    return s_connected;
}

void claw_https_disconnect(void) {
    s_connected = false;
    // The key does not linger in RAM after the session ends.
    memset(s_api_key, 0, sizeof(s_api_key));
}

/* --- The UI panel: a log of the newest UI_LOG_MAX messages ----------------
 * claw_port_ui() (include/claw_port.h) records each message with its type
 * (CLAW_PORT_UI_*) once claw_port_ui_init() has brought the "link" up, cut
 * to UI_TEXT_MAX - 1 bytes on a character boundary (the panel's own cut is
 * 126 bytes: IPC_DATA_MAX_LEN - 2); when the log is full the oldest goes.
 * bentoclaw_ui_events() (claw_transport.h) reads and clears it.
 */
#define UI_LOG_MAX (32)
#define UI_TEXT_MAX (127)

static bool s_ui_up;
static struct {
    uint8_t type;
    uint8_t len;
    char text[UI_TEXT_MAX];
} s_ui_log[UI_LOG_MAX];
static size_t s_ui_count;

void claw_port_ui_init(void) {
    s_ui_up = true;
}

void claw_port_ui(uint8_t type, const uint8_t *text, size_t len) {
    if (!s_ui_up) {
        return;
    }
    len = text == NULL ? 0 : len;
    if (len > UI_TEXT_MAX - 1) {
        // Cut on a character boundary: never half a Thai character.
        len = UI_TEXT_MAX - 1;
        while (len > 0 && (text[len] & 0xc0) == 0x80) {
            len--;
        }
    }
    if (s_ui_count == UI_LOG_MAX) {
        // Full: the oldest message goes.
        memmove(&s_ui_log[0], &s_ui_log[1], sizeof(s_ui_log) - sizeof(s_ui_log[0]));
        s_ui_count--;
    }
    s_ui_log[s_ui_count].type = type;
    s_ui_log[s_ui_count].len = (uint8_t)len;
    if (len > 0) {
        memcpy(s_ui_log[s_ui_count].text, text, len);
    }
    s_ui_log[s_ui_count++].text[len] = '\0';
}

mp_obj_t bentoclaw_ui_events(void) {
    static const char *const names[] = {
        "status", "last_cmd", "last_result", "progress", "error", "clear", "stats", "user", "assistant", "tool", "led",
    };
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < s_ui_count; i++) {
        uint8_t type = s_ui_log[i].type;
        const char *text = s_ui_log[i].text;
        mp_obj_t items[2] = {
            type < MP_ARRAY_SIZE(names) ? mp_obj_new_str(names[type], strlen(names[type]))
                : MP_OBJ_NEW_SMALL_INT(type),
            mp_obj_new_str(text, claw_text_prefix((const uint8_t *)text, s_ui_log[i].len)),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(2, items));
    }
    s_ui_count = 0;
    return list;
}

/* --- The test clock (claw_transport.h) --- */

bool bentoclaw_clock_fixed;
uint32_t bentoclaw_clock_s;

void bentoclaw_clock_set(size_t n_args, const mp_obj_t *args) {
    if (n_args > 0) {
        bentoclaw_clock_fixed = args[0] != mp_const_none;
        if (bentoclaw_clock_fixed) {
            bentoclaw_clock_s = (uint32_t)mp_obj_get_int_truncated(args[0]);
        }
    }
}

#endif // !BENTOCLAW_PORT_FIRMWARE
