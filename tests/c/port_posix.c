/*
 * port_posix.c — claw_port_* over POSIX files with a test clock and fault
 * injection. See port_posix.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "port_posix.h"

#include "claw_port.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FAULTS 8
#define MAX_TRACKED 16
#define PATH_MAX_LEN 512

struct port_file {
    bool used;
    int os_fd;
    uint8_t mode;
    bool write_failed;
    char path[128];
};

struct port_fault {
    bool armed;
    enum port_op op;
    unsigned countdown;
    int32_t err;
    size_t torn;
    char filter[64];
};

struct tracked {
    char path[128];
    unsigned long bytes;
};

/* Bytes the core read through claw_port_read (all files). */
static unsigned long s_bytes_read;

static char s_root[PATH_MAX_LEN];
static size_t s_root_len;
static uint32_t s_ticks;
static struct port_file s_files[CLAW_PORT_MAX_FILES];
static struct port_fault s_faults[MAX_FAULTS];
/* Faults armed now: with none (every run that measures), a call does not
 * scan the table. */
static unsigned s_armed;
static struct tracked s_tracked[MAX_TRACKED];
static unsigned long s_calls[PORT_OP_COUNT];
static unsigned long s_opens_w;
static unsigned long s_bytes_total;
static unsigned s_open_now;
static unsigned s_open_max;
static unsigned s_violations;
static char s_last_violation[256];
static void (*s_hook)(enum port_op);
static bool s_in_hook;
/* The MicroPython task: the thread that called port_init(). */
static pthread_t s_vm_thread;
static atomic_uint s_off_task_calls;

static void violation(const char *what, const char *detail)
{
    s_violations++;
    snprintf(s_last_violation, sizeof s_last_violation, "%s%s%s", what, detail ? ": " : "",
             detail ? detail : "");
    fprintf(stderr, "port: contract violation: %s\n", s_last_violation);
}

/* Off the MicroPython task a port call is counted and refused at once,
 * before anything of the test's state is touched (this thread must not
 * race the MicroPython task's counters). */
static bool off_task(const char *what)
{
    if (claw_port_on_vm_task()) {
        return false;
    }
    atomic_fetch_add(&s_off_task_calls, 1);
    fprintf(stderr, "port: contract violation: %s off the MicroPython task\n", what);
    return true;
}

/* False off the MicroPython task. */
static bool enter(enum port_op op)
{
    static const char *const names[] = { "ticks", "open", "read", "write", "close", "remove", "rename" };
    if (op != PORT_OP_TICKS && off_task(names[op])) {
        return false;
    }
    s_calls[op]++;
    if (s_hook && !s_in_hook) {
        s_in_hook = true;
        s_hook(op);
        s_in_hook = false;
    }
    return true;
}

/* Returns the injected error for this call, or 0; fills *torn for writes.
 * `writing`: the call is on a file opened for writing (a filter "w:..."
 * matches only those). */
static int32_t fault_for(enum port_op op, const char *path, bool writing, size_t *torn)
{
    if (s_armed == 0) {
        return 0;
    }
    for (unsigned i = 0; i < MAX_FAULTS; i++) {
        struct port_fault *f = &s_faults[i];
        if (!f->armed || f->op != op) {
            continue;
        }
        const char *filter = f->filter;
        if (strncmp(filter, "w:", 2) == 0) {
            if (!writing) {
                continue;
            }
            filter += 2;
        }
        if (filter[0] && (!path || !strstr(path, filter))) {
            continue;
        }
        if (--f->countdown == 0) {
            f->armed = false;
            s_armed--;
            if (torn) {
                *torn = f->torn;
            }
            return f->err;
        }
    }
    return 0;
}

static bool map_path(const char *path, char *out, size_t out_max)
{
    if (!path) {
        violation("NULL path", NULL);
        return false;
    }
    size_t len = strlen(path);
    if (path[0] != '/' || strstr(path, "..") || len >= 128) {
        violation("path not absolute or not plain", path);
        return false;
    }
    /* By hand, not snprintf: the callgrind harness measures the library
     * with this port under it, and a formatted join cost ~750 instructions
     * an open. */
    if (s_root_len + len >= out_max) {
        return false;
    }
    memcpy(out, s_root, s_root_len);
    memcpy(out + s_root_len, path, len + 1);
    return true;
}

static struct port_file *file_of(int32_t fd, const char *op)
{
    if (fd < 0 || fd >= CLAW_PORT_MAX_FILES || !s_files[fd].used) {
        char d[32];
        snprintf(d, sizeof d, "fd %d", (int)fd);
        violation(op, d);
        return NULL;
    }
    return &s_files[fd];
}

static void track_bytes(const char *path, size_t n)
{
    s_bytes_total += n;
    for (unsigned i = 0; i < MAX_TRACKED; i++) {
        if (s_tracked[i].path[0] && strcmp(s_tracked[i].path, path) == 0) {
            s_tracked[i].bytes += n;
            return;
        }
    }
    for (unsigned i = 0; i < MAX_TRACKED; i++) {
        if (!s_tracked[i].path[0]) {
            snprintf(s_tracked[i].path, sizeof s_tracked[i].path, "%s", path);
            s_tracked[i].bytes = n;
            return;
        }
    }
}

/* ---- test control ------------------------------------------------------ */

void port_init(const char *root_dir)
{
    s_vm_thread = pthread_self();
    atomic_store(&s_off_task_calls, 0);
    snprintf(s_root, sizeof s_root, "%s", root_dir);
    s_root_len = strlen(s_root);
    for (unsigned i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (s_files[i].used) {
            close(s_files[i].os_fd);
        }
    }
    memset(s_files, 0, sizeof s_files);
    s_open_now = 0;
    s_violations = 0;
    s_last_violation[0] = 0;
    s_hook = NULL;
    port_clear_faults();
    port_reset_counters();
}

void port_set_ticks(uint32_t ms) { s_ticks = ms; }
uint32_t port_get_ticks(void) { return s_ticks; }
void port_advance(uint32_t ms) { s_ticks += ms; }

static void arm(enum port_op op, unsigned nth, int32_t err, size_t torn, const char *filter)
{
    for (unsigned i = 0; i < MAX_FAULTS; i++) {
        struct port_fault *f = &s_faults[i];
        if (!f->armed) {
            f->armed = true;
            f->op = op;
            f->countdown = nth ? nth : 1;
            f->err = err;
            f->torn = torn;
            snprintf(f->filter, sizeof f->filter, "%s", filter ? filter : "");
            s_armed++;
            return;
        }
    }
    fprintf(stderr, "port: too many faults armed\n");
}

void port_fail(enum port_op op, unsigned nth, int32_t neg_errno, const char *path_filter)
{
    arm(op, nth, neg_errno, 0, path_filter);
}

void port_fail_torn_write(unsigned nth, int32_t neg_errno, size_t torn_bytes,
                          const char *path_filter)
{
    arm(PORT_OP_WRITE, nth, neg_errno, torn_bytes, path_filter);
}

void port_clear_faults(void)
{
    memset(s_faults, 0, sizeof s_faults);
    s_armed = 0;
}

unsigned port_faults_armed(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < MAX_FAULTS; i++) {
        n += s_faults[i].armed;
    }
    return n;
}

void port_reset_counters(void)
{
    memset(s_calls, 0, sizeof s_calls);
    memset(s_tracked, 0, sizeof s_tracked);
    s_opens_w = 0;
    s_bytes_total = 0;
    s_open_max = s_open_now;
}

unsigned long port_bytes_read(void) { return s_bytes_read; }

unsigned long port_calls(enum port_op op) { return op < PORT_OP_COUNT ? s_calls[op] : 0; }
unsigned long port_opens_for_writing(void) { return s_opens_w; }

unsigned long port_bytes_written(const char *path)
{
    if (!path) {
        return s_bytes_total;
    }
    for (unsigned i = 0; i < MAX_TRACKED; i++) {
        if (strcmp(s_tracked[i].path, path) == 0) {
            return s_tracked[i].bytes;
        }
    }
    return 0;
}

unsigned port_off_task_calls(void) { return atomic_load(&s_off_task_calls); }
unsigned port_open_now(void) { return s_open_now; }
unsigned port_open_max(void) { return s_open_max; }
unsigned port_violations(void) { return s_violations; }
const char *port_last_violation(void) { return s_last_violation; }
void port_set_hook(void (*hook)(enum port_op op)) { s_hook = hook; }

long port_file_read(const char *path, char *buf, size_t max)
{
    char full[PATH_MAX_LEN];
    snprintf(full, sizeof full, "%s%s", s_root, path);
    FILE *f = fopen(full, "rb");
    if (!f) {
        return -1;
    }
    size_t n = fread(buf, 1, max, f);
    fclose(f);
    return (long)n;
}

int port_file_write(const char *path, const void *data, size_t len)
{
    char full[PATH_MAX_LEN];
    snprintf(full, sizeof full, "%s%s", s_root, path);
    FILE *f = fopen(full, "wb");
    if (!f) {
        return -1;
    }
    size_t n = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && n == len) ? 0 : -1;
}

bool port_file_exists(const char *path)
{
    char full[PATH_MAX_LEN];
    struct stat st;
    snprintf(full, sizeof full, "%s%s", s_root, path);
    return stat(full, &st) == 0;
}

void port_files_remove_all(void)
{
    DIR *d = opendir(s_root);
    if (!d) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char full[PATH_MAX_LEN + 256];
        snprintf(full, sizeof full, "%s/%s", s_root, e->d_name);
        unlink(full);
    }
    closedir(d);
}

/* ---- the port ---------------------------------------------------------- */

bool claw_port_on_vm_task(void)
{
    return pthread_equal(pthread_self(), s_vm_thread) != 0;
}

uint32_t claw_port_ticks_ms(void)
{
    /* Callable from any task: counted (and hooked) on the MicroPython
     * task's only. */
    if (claw_port_on_vm_task()) {
        enter(PORT_OP_TICKS);
    }
    return s_ticks;
}

int32_t claw_port_open(const char *path, uint8_t mode)
{
    if (!enter(PORT_OP_OPEN)) {
        return -EAGAIN;
    }
    char full[PATH_MAX_LEN];
    if (!map_path(path, full, sizeof full)) {
        return -EINVAL;
    }
    if (mode > CLAW_PORT_MODE_APPEND) {
        violation("open: bad mode", path);
        return -EINVAL;
    }
    int32_t err = fault_for(PORT_OP_OPEN, path, mode != CLAW_PORT_MODE_READ, NULL);
    if (err) {
        return err;
    }
    int slot = -1;
    for (int i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (!s_files[i].used) {
            slot = i;
            break;
        }
    }
    if (slot < 0) {
        violation("open: more than CLAW_PORT_MAX_FILES files open", path);
        return -EMFILE;
    }
    int flags = mode == CLAW_PORT_MODE_READ    ? O_RDONLY
                : mode == CLAW_PORT_MODE_WRITE ? O_WRONLY | O_CREAT | O_TRUNC
                                               : O_WRONLY | O_CREAT | O_APPEND;
    int fd = open(full, flags, 0644);
    if (fd < 0) {
        return -errno;
    }
    struct port_file *f = &s_files[slot];
    memset(f, 0, sizeof *f);
    f->used = true;
    f->os_fd = fd;
    f->mode = mode;
    memcpy(f->path, path, strlen(path) + 1); /* < 128 bytes: map_path */
    if (mode != CLAW_PORT_MODE_READ) {
        s_opens_w++;
    }
    if (++s_open_now > s_open_max) {
        s_open_max = s_open_now;
    }
    return slot;
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len)
{
    if (!enter(PORT_OP_READ)) {
        return -EAGAIN;
    }
    struct port_file *f = file_of(fd, "read: bad descriptor");
    if (!f) {
        return -EBADF;
    }
    if (!buf && len) {
        violation("read: NULL buffer", f->path);
        return -EINVAL;
    }
    if (f->mode != CLAW_PORT_MODE_READ) {
        violation("read: file not opened for reading", f->path);
        return -EBADF;
    }
    int32_t err = fault_for(PORT_OP_READ, f->path, false, NULL);
    if (err) {
        return err;
    }
    if (len > INT32_MAX) {
        len = INT32_MAX;
    }
    ssize_t n = read(f->os_fd, buf, len);
    if (n > 0) {
        s_bytes_read += (unsigned long)n;
    }
    return n < 0 ? -errno : (int32_t)n;
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len)
{
    if (!enter(PORT_OP_WRITE)) {
        return -EAGAIN;
    }
    struct port_file *f = file_of(fd, "write: bad descriptor");
    if (!f) {
        return -EBADF;
    }
    if (!buf && len) {
        violation("write: NULL buffer", f->path);
        return -EINVAL;
    }
    if (f->mode == CLAW_PORT_MODE_READ) {
        violation("write: file opened for reading", f->path);
        return -EBADF;
    }
    if (f->write_failed) {
        violation("write through a handle whose write failed", f->path);
        return -EIO;
    }
    if (len > INT32_MAX) {
        violation("write: length over INT32_MAX", f->path);
        return -EINVAL;
    }
    size_t torn = 0;
    int32_t err = fault_for(PORT_OP_WRITE, f->path, true, &torn);
    size_t todo = err ? (torn < len ? torn : len) : len;
    size_t done = 0;
    while (done < todo) {
        ssize_t n = write(f->os_fd, buf + done, todo - done);
        if (n < 0) {
            err = -errno;
            break;
        }
        done += (size_t)n;
    }
    track_bytes(f->path, done);
    if (err) {
        f->write_failed = true;
        return err;
    }
    return (int32_t)len;
}

int32_t claw_port_close(int32_t fd)
{
    if (!enter(PORT_OP_CLOSE)) {
        return -EAGAIN;
    }
    struct port_file *f = file_of(fd, "close: bad descriptor");
    if (!f) {
        return -EBADF;
    }
    int32_t err = fault_for(PORT_OP_CLOSE, f->path, f->mode != CLAW_PORT_MODE_READ, NULL);
    int rc = close(f->os_fd);
    f->used = false;
    s_open_now--;
    if (err) {
        return err;
    }
    if (f->write_failed) {
        /* Like littlefs: a handle whose write failed never commits. */
        return -EIO;
    }
    return rc < 0 ? -errno : 0;
}

int32_t claw_port_remove(const char *path)
{
    if (!enter(PORT_OP_REMOVE)) {
        return -EAGAIN;
    }
    char full[PATH_MAX_LEN];
    if (!map_path(path, full, sizeof full)) {
        return -EINVAL;
    }
    int32_t err = fault_for(PORT_OP_REMOVE, path, false, NULL);
    if (err) {
        return err;
    }
    for (int i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (s_files[i].used && strcmp(s_files[i].path, path) == 0) {
            violation("remove: file is open", path);
        }
    }
    return unlink(full) == 0 ? 0 : -errno;
}

int32_t claw_port_rename(const char *from, const char *to)
{
    if (!enter(PORT_OP_RENAME)) {
        return -EAGAIN;
    }
    char full_from[PATH_MAX_LEN];
    char full_to[PATH_MAX_LEN];
    if (!map_path(from, full_from, sizeof full_from) || !map_path(to, full_to, sizeof full_to)) {
        return -EINVAL;
    }
    int32_t err = fault_for(PORT_OP_RENAME, from, false, NULL);
    if (err) {
        return err;
    }
    for (int i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        if (s_files[i].used &&
            (strcmp(s_files[i].path, from) == 0 || strcmp(s_files[i].path, to) == 0)) {
            violation("rename: file is open", s_files[i].path);
        }
    }
    return rename(full_from, full_to) == 0 ? 0 : -errno;
}

uint8_t claw_port_atomic_write(const char *path)
{
    /* A POSIX file opened with O_TRUNC is not replaced atomically. */
    (void)path;
    (void)off_task("atomic_write");
    return 0;
}
