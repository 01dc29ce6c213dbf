/*
 * port_posix.h — the claw_port_* interface over POSIX files, for the C tests.
 *
 * Paths the core passes ("/.bentoclaw_session") are mapped under a temporary
 * root directory. The clock is a plain variable the test sets. Every
 * operation can be made to fail on its Nth call with a chosen -errno, a write
 * can be torn (part of it reaches the file, then it fails), and the port
 * counts calls and bytes written per file and records contract violations
 * (more than CLAW_PORT_MAX_FILES open, a write through a failed handle, a bad
 * descriptor, a relative path, ...).
 */
#ifndef PORT_POSIX_H
#define PORT_POSIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum port_op {
    PORT_OP_TICKS,
    PORT_OP_OPEN,
    PORT_OP_READ,
    PORT_OP_WRITE,
    PORT_OP_CLOSE,
    PORT_OP_REMOVE,
    PORT_OP_RENAME,
    PORT_OP_COUNT
};

/* Root directory for all files; must exist. Resets faults and counters.
 * The calling thread becomes the MicroPython task of claw_port_on_vm_task();
 * every other thread is another task. */
void port_init(const char *root_dir);

/* Port calls other than the clock and claw_port_on_vm_task() made from a
 * thread other than port_init()'s since port_init() (the core must make
 * none: such a call is also a contract violation). */
unsigned port_off_task_calls(void);

/* Clock. */
void port_set_ticks(uint32_t ms);
uint32_t port_get_ticks(void);
void port_advance(uint32_t ms);

/* Make the nth matching call of `op` (1 = the next one) fail with
 * `neg_errno`. `path_filter` (NULL = any) must be a substring of the file's
 * port path (for read/write/close: the path it was opened with; for rename:
 * the `from` path); a filter "w:<substring>" matches only calls on files
 * opened for writing (open in WRITE/APPEND mode, write, close of such a
 * file). A write fault with `torn_bytes` > 0 first writes that many
 * bytes of the buffer (or all of it when shorter). Up to 8 faults can be
 * armed at once. */
void port_fail(enum port_op op, unsigned nth, int32_t neg_errno, const char *path_filter);
void port_fail_torn_write(unsigned nth, int32_t neg_errno, size_t torn_bytes,
                          const char *path_filter);
void port_clear_faults(void);
unsigned port_faults_armed(void);

/* Counters since the last port_reset_counters(). */
void port_reset_counters(void);
/* Bytes read through claw_port_read so far (all files). */
unsigned long port_bytes_read(void);
unsigned long port_calls(enum port_op op);
unsigned long port_opens_for_writing(void); /* WRITE or APPEND mode */
unsigned long port_bytes_written(const char *path); /* NULL: all files */
unsigned port_open_now(void);
unsigned port_open_max(void); /* most files open at once */

/* Contract violations seen since port_init (never reset otherwise). */
unsigned port_violations(void);
const char *port_last_violation(void);

/* Called at the start of every port call (not re-entered). */
void port_set_hook(void (*hook)(enum port_op op));

/* Direct access for the tests, by port path ("/.bentoclaw_memory"). */
long port_file_read(const char *path, char *buf, size_t max); /* size or -1 */
int port_file_write(const char *path, const void *data, size_t len);
bool port_file_exists(const char *path);
void port_files_remove_all(void);

#endif /* PORT_POSIX_H */
