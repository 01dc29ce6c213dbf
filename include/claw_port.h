/*
 * claw_port.h — what the bentoclaw core needs from its host.
 *
 * The Rust core never touches a file system or a clock itself. It calls these
 * functions, which the host implements: on MicroPython the VFS bridge in
 * mpy/claw_port_vfs.c (MicroPython's own open()/VFS, so LittleFS, FAT and the
 * unix VFS all work), in the C tests a POSIX implementation with a
 * controllable clock. The Rust declarations are generated from this header by
 * bindgen (build.rs).
 *
 * Contract for every function below:
 *  - It returns normally: it never longjmps, throws or unwinds into the caller
 *    (a MicroPython exception is caught inside it and becomes -errno).
 *  - Negative return values are -errno (e.g. -2 ENOENT, -5 EIO, -28 ENOSPC).
 *  - It is called from the one task that drives bentoclaw; nothing is ISR-safe.
 *  - At most CLAW_PORT_MAX_FILES files are open at any one time.
 *  - A file descriptor is a small integer in 0..CLAW_PORT_MAX_FILES-1.
 *  - After a failed claw_port_write() the core only ever closes that file:
 *    it never writes or syncs through it again (littlefs can report success
 *    for a second sync on a failed handle and write nothing).
 */
#ifndef CLAW_PORT_H
#define CLAW_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How many files the core may have open at once. */
#define CLAW_PORT_MAX_FILES 3

/** claw_port_open() modes. */
#define CLAW_PORT_MODE_READ 0u   /* "rb": must exist */
#define CLAW_PORT_MODE_WRITE 1u  /* "wb": create or truncate */
#define CLAW_PORT_MODE_APPEND 2u /* "ab": create, write at the end */

/** Monotonic millisecond tick; wraps every 2^32 ms (49.7 days). */
uint32_t claw_port_ticks_ms(void);

/** Open `path` (NUL-terminated) with one of the CLAW_PORT_MODE_* modes.
 *  Returns a descriptor >= 0, or -errno. */
int32_t claw_port_open(const char *path, uint8_t mode);

/** Read up to `len` bytes into `buf`. Returns bytes read (0 = end of file),
 *  or -errno. */
int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len);

/** Write all `len` bytes of `buf`. Returns `len`, or -errno when not all of
 *  it could be written (the file content is then unspecified). */
int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len);

/** Flush and close. Returns 0 when everything written through `fd` is
 *  committed to the file system, or -errno. The descriptor is released in
 *  both cases. */
int32_t claw_port_close(int32_t fd);

/** Delete a file. Returns 0, or -errno (-ENOENT when it does not exist). */
int32_t claw_port_remove(const char *path);

/** Rename `from` to `to`, atomically replacing `to` when it exists
 *  (littlefs and POSIX do this). Returns 0, or -errno. */
int32_t claw_port_rename(const char *from, const char *to);

#ifdef __cplusplus
}
#endif

#endif /* CLAW_PORT_H */
