/*
 * harness.c — instruction counts of the claw_* functions under callgrind.
 *
 * Links target/release/libbentoclaw.a (host build) with the POSIX port of the
 * C tests (tests/c/port_posix.c: real files in a temporary directory, a test
 * clock). Run it under
 *
 *   valgrind --tool=callgrind --collect-atstart=no --dump-instr=no \
 *            --callgrind-out-file=OUT tests/bench/callgrind/harness
 *
 * Every measured call is bracketed by CALLGRIND_TOGGLE_COLLECT and followed
 * by CALLGRIND_DUMP_STATS_AT("<label>"), so each dump holds one call and
 * everything it called: the core, compiler builtins, the claw_port_*
 * callbacks and the libc below them (system call time itself is not counted
 * by valgrind). scripts/perf_report.sh reads the dumps.
 *
 * The state is the worst case the contract allows where it matters: a full
 * ring (10 messages of 255 bytes), a full memory store (32 keys of 31 bytes,
 * values of 127 bytes), a full rate table (12 spare slots of 31-byte names; the
 * gates run on the last one). Without valgrind the client requests are no-ops
 * and the harness just checks its own sequencing (exit status 1 on a
 * surprise).
 */
#define _POSIX_C_SOURCE 200809L

#include "claw_port.h"
#include "claw_safety.h"
#include "claw_session.h"
#include "port_posix.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

static int s_bad;

/* Each measured call also prints "READ <label> <bytes>": the bytes it read
 * through claw_port_read (outside the collected part). */
#define MEASURE(label, stmt)                                                                       \
    do {                                                                                           \
        unsigned long read0_ = port_bytes_read();                                                  \
        CALLGRIND_TOGGLE_COLLECT;                                                                  \
        stmt;                                                                                      \
        CALLGRIND_TOGGLE_COLLECT;                                                                  \
        CALLGRIND_DUMP_STATS_AT(label);                                                            \
        printf("READ\t%s\t%lu\n", label, port_bytes_read() - read0_);                              \
    } while (0)

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "harness: line %d: expected %s\n", __LINE__, #cond);                   \
            s_bad = 1;                                                                             \
        }                                                                                          \
    } while (0)

/* A 255-byte message: Thai and ASCII with a quote and a newline to escape. */
static void message(char *out, unsigned n)
{
    char *p = out;
    p += sprintf(p, "turn %02u \"q\"\n", n);
    while (p - out + 3 <= 255) {
        memcpy(p, "\xe0\xb8\x81", 3); /* U+0E01 */
        p += 3;
    }
    while (p - out < 255) {
        *p++ = 'x';
    }
    *p = 0;
}

static void key_name(char *out, unsigned i)
{
    snprintf(out, CLAW_MEM_KEY_MAX, "memory_key_%02u_abcdefghijklmnop", i); /* 31 bytes */
}

static void tool_name(char *out, unsigned i)
{
    snprintf(out, CLAW_RATE_NAME_MAX, "tool_%02u_abcdefghijklmnopqrstuv", i); /* 31 bytes */
}

__attribute__((noinline)) static int run(void)
{
    char root[] = "/tmp/bentoclaw-callgrind-XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    port_init(root);
    port_set_ticks(1000000);

    char msg[256], key[CLAW_MEM_KEY_MAX], val[CLAW_MEM_VAL_MAX], tool[CLAW_RATE_NAME_MAX];
    static char ctx[3072];
    volatile bool b;
    volatile size_t n;
    volatile uint16_t c;

    MEASURE("claw_rate_init", claw_rate_init());
    MEASURE("claw_cb_init", claw_cb_init());
    MEASURE("claw_session_init (empty, no I/O)", claw_session_init());
    MEASURE("claw_trust_set", claw_trust_set(CLAW_TRUST_USB));

    /* Full rate table: every spare slot taken by a 31-byte name (the
     * slowest lookup: past every known name and every spare), a few calls
     * recorded over the window. */
    enum { SPARE = CLAW_RATE_MAX_TOOLS - CLAW_RATE_KNOWN_TOOLS };
    for (unsigned i = 0; i < SPARE; i++) {
        tool_name(tool, i);
        if (i + 1 == SPARE) {
            MEASURE("claw_rate_set (last spare slot, table filling up)", claw_rate_set(tool, 20));
        } else {
            claw_rate_set(tool, 20);
        }
    }
    for (unsigned round = 0; round < 6; round++) {
        for (unsigned i = 0; i < SPARE; i++) {
            tool_name(tool, i);
            claw_rate_record(tool);
        }
        port_advance(9000);
    }

    /* Full memory store: 32 keys, values of 127 bytes. */
    memset(val, 'v', CLAW_MEM_VAL_MAX - 1);
    val[CLAW_MEM_VAL_MAX - 1] = 0;
    for (unsigned i = 0; i < CLAW_MEM_MAX_ENTRIES; i++) {
        key_name(key, i);
        val[0] = (char)('A' + i % 26);
        EXPECT(claw_memory_set(key, val));
    }

    /* Full ring: 10 messages of 255 bytes on flash. */
    for (unsigned i = 0; i < CLAW_SESSION_MAX_MSGS; i++) {
        message(msg, i);
        EXPECT(claw_session_add(i % 2 ? CLAW_ROLE_ASSISTANT : CLAW_ROLE_USER, msg));
    }
    EXPECT(claw_session_flush());

    /* Lazy load of the 10-line file, then the ring in RAM. */
    claw_session_init();
    MEASURE("claw_session_count (first call: loads the 10-line file)", c = claw_session_count());
    EXPECT(c == CLAW_SESSION_MAX_MSGS);
    MEASURE("claw_session_count", c = claw_session_count());
    MEASURE("claw_session_dirty", b = claw_session_dirty());

    /* The gate sequence of one tool call, on the last tool of a full table. */
    tool_name(tool, SPARE - 1);
    MEASURE("claw_cb_allow", b = claw_cb_allow());
    EXPECT(b);
    MEASURE("claw_trust_allows", b = claw_trust_allows(2));
    EXPECT(b);
    MEASURE("claw_rate_check (last spare slot, full table)", b = claw_rate_check(tool));
    EXPECT(b);
    MEASURE("claw_rate_record (last spare slot, full table)", claw_rate_record(tool));
    MEASURE("gate sequence (allow, trust, check, record)", {
        b = claw_cb_allow() && claw_trust_allows(2) && claw_rate_check(tool);
        if (b) {
            claw_rate_record(tool);
        }
    });
    EXPECT(b);
    MEASURE("claw_cb_success", claw_cb_success());
    MEASURE("claw_cb_failure", claw_cb_failure());
    MEASURE("claw_cb_state", c = (uint16_t)claw_cb_state());
    MEASURE("claw_cb_cooldown_remaining", n = claw_cb_cooldown_remaining());
    MEASURE("claw_trust_get", c = (uint16_t)claw_trust_get());

    /* Session work on the full ring and the full store. */
    message(msg, 10);
    MEASURE("claw_session_add (255 bytes, full ring)",
            b = claw_session_add(CLAW_ROLE_USER, msg));
    EXPECT(b);
    unsigned long renames = port_calls(PORT_OP_RENAME);
    MEASURE("claw_session_flush (one batch into its slot)", b = claw_session_flush());
    EXPECT(b && port_calls(PORT_OP_RENAME) == renames);
    MEASURE("claw_session_build_context (full ring + store, 3 KiB)",
            n = claw_session_build_context(ctx, sizeof ctx));
    EXPECT(n > 2048 && n < sizeof ctx);

    key_name(key, CLAW_MEM_MAX_ENTRIES - 1);
    MEASURE("claw_memory_get (last of 32 keys)", b = claw_memory_get(key, val, sizeof val));
    EXPECT(b);
    MEASURE("claw_memory_get (absent key)", b = claw_memory_get("absent", val, sizeof val));
    EXPECT(!b);
    key_name(key, 0);
    memset(val, 'w', CLAW_MEM_VAL_MAX - 1);
    val[CLAW_MEM_VAL_MAX - 1] = 0;
    MEASURE("claw_memory_set (replace, 32 keys)", b = claw_memory_set(key, val));
    EXPECT(b);

    /* One-message batches until the slot to overwrite holds a message of
     * the ring: that flush folds (the ring to tmp + rename over the base). */
    unsigned long before = port_calls(PORT_OP_RENAME);
    unsigned i = 0;
    for (; i < 30 && port_calls(PORT_OP_RENAME) == before; i++) {
        message(msg, 11 + i);
        EXPECT(claw_session_add(CLAW_ROLE_ASSISTANT, msg));
        EXPECT(claw_session_flush());
    }
    EXPECT(port_calls(PORT_OP_RENAME) == before + 1);
    /* After a fold, six batches go to the slots; the seventh finds its slot
     * holding a message of the ring and folds. */
    for (unsigned k = 0; k < 6; k++, i++) {
        message(msg, 11 + i);
        EXPECT(claw_session_add(CLAW_ROLE_ASSISTANT, msg));
        EXPECT(claw_session_flush());
    }
    EXPECT(port_calls(PORT_OP_RENAME) == before + 1);
    message(msg, 11 + i);
    EXPECT(claw_session_add(CLAW_ROLE_USER, msg));
    MEASURE("claw_session_flush (a fold: the ring to tmp + rename)", b = claw_session_flush());
    EXPECT(b && port_calls(PORT_OP_RENAME) == before + 2);

    MEASURE("claw_session_clear", claw_session_clear());
    EXPECT(!port_file_exists("/.bentoclaw_session"));

    EXPECT(port_violations() == 0);
    port_files_remove_all();
    rmdir(root);
    if (s_bad) {
        fprintf(stderr, "harness: sequencing failed\n");
    }
    return s_bad;
}

/* The environment and argv[0] sit on top of the stack, so where main's frame
 * starts depends on them; libc's string functions take different paths near
 * a page end. Starting the work at a fixed offset within a page makes the
 * counts the same whatever the environment or the checkout's path. */
int main(void)
{
    size_t pad = ((uintptr_t)__builtin_frame_address(0) & 4095u) + 256u;
    volatile char *p = __builtin_alloca(pad);
    p[0] = 0;
    return run();
}
