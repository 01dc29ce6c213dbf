/*
 * port_ram.c — claw_port_* over files in RAM, and the part of the C tests'
 * port API (tests/c/port_posix.h) that tests/bench/callgrind/harness.c
 * calls, for its emulated Cortex-M33 build (scripts/insn_m33.sh).
 *
 * The same behaviour as tests/c/port_posix.c where the harness depends on
 * it (READ must exist, WRITE truncates, APPEND writes at the end, rename
 * replaces, claw_port_atomic_write answers 0 so the core writes a temporary
 * file and renames it, bytes read and calls counted), with memcpy in place
 * of the system calls: nothing the emulator does varies from run to run.
 * A contract violation (a bad descriptor, more than CLAW_PORT_MAX_FILES
 * open, a file that outgrows its buffer, ...) is counted; the harness
 * fails on any.
 *
 * Built with -DPORT_MARKERS (the second image of scripts/insn_m33.sh), each
 * claw_port_* function runs its body between two markers, `mov r10, r10`
 * (`mov sl, sl` to qemu's disassembler): with match=mov sl,, sl the plugin
 * counts the instructions of every port call apart, the M33's "of which in
 * claw_port_*" (tests/bench/m33/insn_summary.py). The markers stand around a
 * call of the body (the call, the return and the wrapper's own few
 * instructions are not counted as the port's), and the image that counts
 * the calls themselves has neither markers nor wrappers.
 */
#include "claw_port.h"
#include "port_posix.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PORT_MARKERS
#define PORT_FN(type, name) __attribute__((noipa)) static type ram_##name
#else
#define PORT_FN(type, name) type claw_port_##name
#endif

#define RAM_FILES 32
#define RAM_FILE_MAX (16u * 1024u)
#define RAM_PATH_MAX 64

struct ram_file {
    bool used;
    char path[RAM_PATH_MAX];
    size_t size;
    uint8_t data[RAM_FILE_MAX];
};

struct ram_fd {
    bool used;
    bool write_failed;
    uint8_t mode;
    struct ram_file *file;
    size_t pos;
};

static struct ram_file s_files[RAM_FILES];
static struct ram_fd s_fds[CLAW_PORT_MAX_FILES];
static uint32_t s_ticks;
static unsigned long s_bytes_read;
static unsigned long s_calls[PORT_OP_COUNT];
static unsigned s_violations;

static void violation(const char *what, const char *detail)
{
    s_violations++;
    fprintf(stderr, "port: contract violation: %s: %s\n", what, detail ? detail : "");
}

static bool path_ok(const char *path)
{
    if (!path || path[0] != '/' || strstr(path, "..") || strlen(path) >= RAM_PATH_MAX) {
        violation("path not absolute, not plain or too long", path);
        return false;
    }
    return true;
}

static struct ram_file *find(const char *path)
{
    for (unsigned i = 0; i < RAM_FILES; i++) {
        if (s_files[i].used && strcmp(s_files[i].path, path) == 0) {
            return &s_files[i];
        }
    }
    return NULL;
}

static struct ram_fd *fd_of(int32_t fd, const char *op)
{
    if (fd < 0 || fd >= CLAW_PORT_MAX_FILES || !s_fds[fd].used) {
        violation(op, "bad descriptor");
        return NULL;
    }
    return &s_fds[fd];
}

static bool is_open(const struct ram_file *f)
{
    for (unsigned i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (s_fds[i].used && s_fds[i].file == f) {
            return true;
        }
    }
    return false;
}

/* ---- the part of tests/c/port_posix.h the harness calls ------------------ */

void port_init(const char *root_dir)
{
    (void)root_dir;
    memset(s_fds, 0, sizeof s_fds);
    port_files_remove_all();
    memset(s_calls, 0, sizeof s_calls);
    s_violations = 0;
}

void port_set_ticks(uint32_t ms) { s_ticks = ms; }
void port_advance(uint32_t ms) { s_ticks += ms; }
unsigned long port_bytes_read(void) { return s_bytes_read; }
unsigned long port_calls(enum port_op op) { return op < PORT_OP_COUNT ? s_calls[op] : 0; }
unsigned port_violations(void) { return s_violations; }
bool port_file_exists(const char *path) { return find(path) != NULL; }

void port_files_remove_all(void)
{
    for (unsigned i = 0; i < RAM_FILES; i++) {
        s_files[i].used = false;
    }
}

/* The harness's temporary directory: nothing to make or remove here. */
char *mkdtemp(char *tmpl) { return tmpl; }
int rmdir(const char *path)
{
    (void)path;
    return 0;
}

/* ---- the port ---------------------------------------------------------- */

PORT_FN(bool, on_vm_task)(void) { return true; }

PORT_FN(uint32_t, ticks_ms)(void)
{
    s_calls[PORT_OP_TICKS]++;
    return s_ticks;
}

PORT_FN(int32_t, open)(const char *path, uint8_t mode)
{
    s_calls[PORT_OP_OPEN]++;
    if (!path_ok(path)) {
        return -EINVAL;
    }
    if (mode > CLAW_PORT_MODE_APPEND) {
        violation("open: bad mode", path);
        return -EINVAL;
    }
    int slot = -1;
    for (int i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (!s_fds[i].used) {
            slot = i;
            break;
        }
    }
    if (slot < 0) {
        violation("open: more than CLAW_PORT_MAX_FILES files open", path);
        return -EMFILE;
    }
    struct ram_file *f = find(path);
    if (!f) {
        if (mode == CLAW_PORT_MODE_READ) {
            return -ENOENT;
        }
        for (unsigned i = 0; i < RAM_FILES && !f; i++) {
            if (!s_files[i].used) {
                f = &s_files[i];
            }
        }
        if (!f) {
            violation("open: more than RAM_FILES files", path);
            return -ENOSPC;
        }
        f->used = true;
        memcpy(f->path, path, strlen(path) + 1);
        f->size = 0;
    }
    if (mode == CLAW_PORT_MODE_WRITE) {
        f->size = 0;
    }
    s_fds[slot] = (struct ram_fd){ .used = true, .mode = mode, .file = f,
                                   .pos = mode == CLAW_PORT_MODE_APPEND ? f->size : 0 };
    return slot;
}

PORT_FN(int32_t, read)(int32_t fd, uint8_t *buf, size_t len)
{
    s_calls[PORT_OP_READ]++;
    struct ram_fd *d = fd_of(fd, "read");
    if (!d) {
        return -EBADF;
    }
    if (d->mode != CLAW_PORT_MODE_READ) {
        violation("read: file not opened for reading", d->file->path);
        return -EBADF;
    }
    size_t n = d->file->size - d->pos;
    if (n > len) {
        n = len;
    }
    memcpy(buf, d->file->data + d->pos, n);
    d->pos += n;
    s_bytes_read += n;
    return (int32_t)n;
}

PORT_FN(int32_t, write)(int32_t fd, const uint8_t *buf, size_t len)
{
    s_calls[PORT_OP_WRITE]++;
    struct ram_fd *d = fd_of(fd, "write");
    if (!d) {
        return -EBADF;
    }
    if (d->mode == CLAW_PORT_MODE_READ || d->write_failed) {
        violation("write: file opened for reading, or its write failed", d->file->path);
        return -EBADF;
    }
    if (len > RAM_FILE_MAX - d->pos) {
        violation("write: file larger than RAM_FILE_MAX", d->file->path);
        d->write_failed = true;
        return -ENOSPC;
    }
    memcpy(d->file->data + d->pos, buf, len);
    d->pos += len;
    if (d->pos > d->file->size) {
        d->file->size = d->pos;
    }
    return (int32_t)len;
}

PORT_FN(int32_t, close)(int32_t fd)
{
    s_calls[PORT_OP_CLOSE]++;
    struct ram_fd *d = fd_of(fd, "close");
    if (!d) {
        return -EBADF;
    }
    d->used = false;
    return d->write_failed ? -EIO : 0;
}

PORT_FN(int32_t, remove)(const char *path)
{
    s_calls[PORT_OP_REMOVE]++;
    if (!path_ok(path)) {
        return -EINVAL;
    }
    struct ram_file *f = find(path);
    if (!f) {
        return -ENOENT;
    }
    if (is_open(f)) {
        violation("remove: file is open", path);
    }
    f->used = false;
    return 0;
}

PORT_FN(int32_t, rename)(const char *from, const char *to)
{
    s_calls[PORT_OP_RENAME]++;
    if (!path_ok(from) || !path_ok(to)) {
        return -EINVAL;
    }
    struct ram_file *f = find(from);
    if (!f) {
        return -ENOENT;
    }
    struct ram_file *old = find(to);
    if (is_open(f) || (old && is_open(old))) {
        violation("rename: file is open", from);
    }
    if (old && old != f) {
        old->used = false;
    }
    memcpy(f->path, to, strlen(to) + 1);
    return 0;
}

PORT_FN(uint8_t, atomic_write)(const char *path)
{
    /* As the POSIX port: not atomic, so the core writes tmp + rename. */
    (void)path;
    return 0;
}

/* ---- with PORT_MARKERS: the exported functions, each body between two markers */

#ifdef PORT_MARKERS
#define PORT_CALL(type, call)                                                                      \
    do {                                                                                           \
        __asm__ volatile("mov r10, r10" ::: "memory");                                             \
        type r_ = call;                                                                            \
        __asm__ volatile("mov r10, r10" ::: "memory");                                             \
        return r_;                                                                                 \
    } while (0)

bool claw_port_on_vm_task(void) { PORT_CALL(bool, ram_on_vm_task()); }
uint32_t claw_port_ticks_ms(void) { PORT_CALL(uint32_t, ram_ticks_ms()); }
int32_t claw_port_open(const char *path, uint8_t mode) { PORT_CALL(int32_t, ram_open(path, mode)); }
int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len) { PORT_CALL(int32_t, ram_read(fd, buf, len)); }
int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len)
{
    PORT_CALL(int32_t, ram_write(fd, buf, len));
}
int32_t claw_port_close(int32_t fd) { PORT_CALL(int32_t, ram_close(fd)); }
int32_t claw_port_remove(const char *path) { PORT_CALL(int32_t, ram_remove(path)); }
int32_t claw_port_rename(const char *from, const char *to) { PORT_CALL(int32_t, ram_rename(from, to)); }
uint8_t claw_port_atomic_write(const char *path) { PORT_CALL(uint8_t, ram_atomic_write(path)); }
#endif
