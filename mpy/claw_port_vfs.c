/*
 * claw_port_vfs.c — include/claw_port.h's file port over MicroPython's VFS.
 *
 * The Rust core calls these for every file operation (and the tick clock).
 * They run MicroPython's own open()/VFS code on whatever is mounted at "/"
 * (LittleFS on the board, a Python block device or file system in the
 * tests, the host tree on a bare unix port): everything reached from here
 * may be the user's Python code, and nothing it does is trusted.
 *
 * 1. No exception crosses a Rust frame (raising is a longjmp): each function
 *    pushes its own NLR handler before its first MicroPython call (the path
 *    string too can raise MemoryError) and turns any exception into -errno:
 *    an OSError its errno, a MemoryError -ENOMEM (and rule 4), else -EIO.
 *
 * 2. A file object is only used the way its type says: a file system's
 *    open() may return anything (a native stream, a Python class, an
 *    io.IOBase subclass, None...), and mp_stream_rw()/mp_stream_close() crash
 *    on anything but a native stream. Each operation looks its method up
 *    (port_resolve()): a native stream's protocol is called on the caller's
 *    buffer, any other callable as a Python method with a copy of the data,
 *    anything else is -EIO. A count is clamped to the buffer (a native
 *    stream's, a write()'s) or is -EIO: a readinto() that claims more, a
 *    read(n) longer than n, no non-negative int, a read() giving a str or
 *    nothing bytes-like.
 *
 * 3. Python code reached from here must not re-enter the core (its state is
 *    mid-update): claw_port_vfs_busy() is true while a callback runs, and the
 *    binding refuses calls then. Each callback restores the depth it found.
 *
 * 4. A BaseException that is not an Exception (KeyboardInterrupt,
 *    SystemExit, GeneratorExit) is no I/O error: the user wants out. The
 *    callback returns -EIO (the core stops its file work as for any failed
 *    write: nothing saved is lost) and hands it to the VM (mp_sched_exception;
 *    the first wins) to raise at its next check; with no NLR handler to raise
 *    it in (an idle-point flush) it is dropped, as Ctrl-C at the prompt is.
 *    While one is pending, port calls fail fast (-EIO, no Python code run; a
 *    file closed then is left to its finaliser, which on a Python block device
 *    needs mpy/patches/micropython/0002-littlefs-no-unwinding-from-block-device.patch).
 *
 * 5. Open files sit in a root-pointer array the GC sees (Rust holds only the
 *    slot number). The core closes every file before a call returns, so a
 *    slot still set when a call begins belongs to a previous VM (a soft reset
 *    under a binding that initialises once per hard boot) and is forgotten.
 *
 * 6. Only the MicroPython task reaches MicroPython (claw_port_on_vm_task()):
 *    from any other task a port call is -EAGAIN and touches nothing.
 *
 * 7. A file of a native VfsLfs2 mount is its slot's alone: once closed
 *    without error its object and 2 KiB cache are freed at once, not left to
 *    a collection that a stale word on the C stack can hold off for the rest
 *    of the call (tests/qemu/test_gc_heap.py, tests/mpy/test_port_lfs_free.py).
 */
#include <string.h>

#include "py/gc.h"
#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/objstr.h"
#include "py/objtype.h"
#include "py/runtime.h"
#include "py/stream.h"
#include "extmod/vfs.h"
#include "extmod/vfs_lfs.h"

#include "claw_port.h"
#include "claw_port_vfs.h"
#include "claw_vm_task.h"

#if !MICROPY_VFS
#error "bentoclaw needs MICROPY_VFS: the session and memory files go through it"
#endif

// Literal size: the generated root-pointer header cannot see claw_port.h.
#if CLAW_PORT_MAX_FILES != 3
#error "update the size of bentoclaw_port_files"
#endif
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_port_files[3]);

#define PORT_FILE(fd) (MP_STATE_VM(bentoclaw_port_files)[(fd)])
#define PORT_PENDING (MP_STATE_MAIN_THREAD(mp_pending_exception)) // rule 4

// Port callbacks running (0 or 1): PORT_RETURN(), claw_port_vfs_busy().
static uint8_t s_port_depth;
static uint8_t s_port_own; // rule 7: a bit per slot

// Rule 6: claw_vm_task.h.
#ifdef BENTOCLAW_VM_TASK_POSIX
pthread_t bentoclaw_vm_thread;
__attribute__((constructor)) static void port_vm_thread(void) { bentoclaw_vm_thread = pthread_self(); }
#endif

bool claw_port_on_vm_task(void) {
    bool on = bentoclaw_vm_task();
    // A call begins (rule 5); not while a callback runs (its Python code).
    for (size_t i = 0; on && s_port_depth == 0 && i < CLAW_PORT_MAX_FILES; i++) {
        PORT_FILE(i) = MP_OBJ_NULL;
        s_port_own = 0;
    }
    return on;
}

bool claw_port_vfs_busy(void) {
    return s_port_depth != 0;
}

// The agent's port too (include/claw_port.h): while an exception waits for
// the VM (rule 4), the core stops what it is doing and returns.
bool claw_port_aborted(void) {
    return PORT_PENDING != MP_OBJ_NULL;
}

void claw_port_vfs_raise_pending(void) {
    if (claw_port_aborted()) {
        mp_handle_pending(true);
    }
}

bool claw_port_vfs_keep(mp_obj_t exc) {
    if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        return true;
    }
    // KeyboardInterrupt, SystemExit, GeneratorExit: rule 4.
    if (PORT_PENDING == MP_OBJ_NULL && MP_STATE_THREAD(nlr_top) != NULL) {
        mp_sched_exception(exc);
    }
    return false;
}

// -errno for an error code (EIO when there is none that fits).
static int32_t port_errno(mp_int_t err) {
    return err > 0 && err < 0x8000 ? -(int32_t)err : -MP_EIO;
}

// Map a caught exception to a negative errno, like
// mp_vfs_mount_and_chdir_protected() in extmod/vfs.c does. A BaseException
// that is not an Exception goes to the VM (rule 4).
static int32_t port_errno_from_exc(void *exc_in) {
    mp_obj_base_t *exc = exc_in;
    mp_obj_t type = MP_OBJ_FROM_PTR(exc->type);
    if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        // Only a small int is read: a big one would raise outside any
        // handler (and unwind through the core). Anything else is EIO.
        mp_obj_t v = mp_obj_exception_get_value(MP_OBJ_FROM_PTR(exc));
        return port_errno(mp_obj_is_small_int(v) ? MP_OBJ_SMALL_INT_VALUE(v) : 0);
    }
    if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_MemoryError))) {
        // Out of heap: rule 4 too (the call stops, writes nothing more, and
        // raises it once the core has returned).
        if (PORT_PENDING == MP_OBJ_NULL && MP_STATE_THREAD(nlr_top) != NULL) {
            mp_sched_exception(MP_OBJ_FROM_PTR(exc));
        }
        return -MP_ENOMEM;
    }
    // Anything else (a Python block device's ValueError, say) is an I/O
    // failure from the core's point of view.
    (void)claw_port_vfs_keep(MP_OBJ_FROM_PTR(exc));
    return -MP_EIO;
}

// ENAMETOOLONG (littlefs's; mperrno.h has no name for it) from an open or
// rename is a full file system: littlefs says so when a directory is full.
#define PORT_ENAMETOOLONG 36

static bool port_fd_valid(int32_t fd) {
    return fd >= 0 && fd < CLAW_PORT_MAX_FILES && PORT_FILE(fd) != MP_OBJ_NULL;
}

/* --- How to drive a file object (rule 2) --- */

typedef enum {
    PORT_VIA_NONE,   // no usable method: -EIO
    PORT_VIA_STREAM, // a native stream: *stream, called on dest[1]
    PORT_VIA_METHOD, // a Python-level method: dest[0..1], called with copies
} port_via_t;

// Look `name` up on `file`; `generic` is MicroPython's stream method of that
// name. PORT_VIA_STREAM: *stream is the native type's protocol (not NULL;
// the caller checks the function it needs). PORT_VIA_METHOD covers io.IOBase
// subclasses and Python subclasses of native streams (whose inherited slot
// would be called with the wrong object).
static port_via_t port_resolve(mp_obj_t file, qstr name, const void *generic,
    mp_obj_t dest[2], const mp_stream_p_t **stream) {
    dest[0] = dest[1] = MP_OBJ_NULL;
    mp_load_method_maybe(file, name, dest);
    if (dest[0] == MP_OBJ_NULL) {
        return PORT_VIA_NONE;
    }
    if (dest[0] != MP_OBJ_FROM_PTR(generic)) {
        return PORT_VIA_METHOD;
    }
    // The generic method calls its self's protocol slot: use the slot, but
    // only for a native type (a Python class's is the native base's).
    mp_obj_t self = dest[1];
    const mp_obj_type_t *type = self != MP_OBJ_NULL && mp_obj_is_obj(self) ? mp_obj_get_type(self) : NULL;
    if (type == NULL || !mp_obj_is_native_type(type) || !MP_OBJ_TYPE_HAS_SLOT(type, protocol)) {
        return PORT_VIA_NONE;
    }
    *stream = MP_OBJ_TYPE_GET_SLOT(type, protocol);
    return *stream != NULL ? PORT_VIA_STREAM : PORT_VIA_NONE;
}

// A count returned by a Python method: an int clamped to 0..max, or -1 for
// anything else (an int too big for mp_int_t raises: -EIO from the handler).
static mp_int_t port_count(mp_obj_t ret, size_t max) {
    mp_int_t n;
    if (!mp_obj_is_int(ret) || !mp_obj_get_int_maybe(ret, &n) || n < 0) {
        return -1;
    }
    return (size_t)n > max ? (mp_int_t)max : n;
}

// mp_stream_rw(), but a count above what was asked is clamped (it would go
// on with a wrapped-around size and write past the buffer).
static int32_t port_stream_read(const mp_stream_p_t *stream, mp_obj_t self, uint8_t *buf, size_t len) {
    if (stream->read == NULL) {
        return -MP_EIO;
    }
    size_t done = 0;
    while (done < len) {
        int err = 0;
        mp_uint_t n = stream->read(self, buf + done, len - done, &err);
        if (n == MP_STREAM_ERROR) {
            return done > 0 ? (int32_t)done : port_errno(err);
        }
        if (n == 0) {
            break;
        }
        done += n > len - done ? len - done : n;
    }
    return (int32_t)done;
}

static int32_t port_do_read(mp_obj_t file, uint8_t *buf, size_t len) {
    mp_obj_t dest[3];
    const mp_stream_p_t *stream = NULL;
    bool into = true;
    port_via_t via = port_resolve(file, MP_QSTR_readinto, &mp_stream_readinto_obj, dest, &stream);
    if (via == PORT_VIA_NONE) {
        into = false; // no readinto: read(len)
        via = port_resolve(file, MP_QSTR_read, &mp_stream_read_obj, dest, &stream);
    }
    if (via != PORT_VIA_METHOD) {
        return via == PORT_VIA_STREAM ? port_stream_read(stream, dest[1], buf, len) : -MP_EIO;
    }
    // readinto(bytearray(len)) or read(len): one call, a short count is fine
    // (the core reads again). -EIO for a readinto() count above len (bytes
    // the file never supplied), a read(len) of more (the rest would be lost)
    // or no bytes-like data, or a str.
    mp_obj_t ba = MP_OBJ_NULL;
    dest[2] = mp_obj_new_int_from_uint(len);
    if (into) {
        ba = dest[2] = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_bytearray), dest[2]);
    }
    mp_obj_t got = mp_call_method_n_kw(1, 0, dest);
    mp_int_t n = into ? port_count(got, SIZE_MAX) : 0;
    got = into ? ba : got; // the method may have resized the bytearray
    mp_buffer_info_t bi;
    if (got == mp_const_none
        || mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(got)), MP_OBJ_FROM_PTR(&mp_type_str))
        || !mp_get_buffer(got, &bi, MP_BUFFER_READ)) {
        return -MP_EIO;
    }
    n = into ? n : (mp_int_t)bi.len;
    if (n < 0 || (size_t)n > len || (size_t)n > bi.len) {
        return -MP_EIO;
    }
    memcpy(buf, bi.buf, (size_t)n);
    return (int32_t)n;
}

static int32_t port_do_write(mp_obj_t file, const uint8_t *buf, size_t len) {
    mp_obj_t dest[3];
    const mp_stream_p_t *stream = NULL;
    port_via_t via = port_resolve(file, MP_QSTR_write, &mp_stream_write_obj, dest, &stream);
    if (via == PORT_VIA_NONE || (via == PORT_VIA_STREAM && stream->write == NULL)) {
        return -MP_EIO;
    }
    for (size_t done = 0; done < len;) {
        mp_int_t n;
        if (via == PORT_VIA_STREAM) {
            int err = 0;
            mp_uint_t r = stream->write(dest[1], buf + done, len - done, &err);
            if (r == MP_STREAM_ERROR) {
                return port_errno(err);
            }
            n = (mp_int_t)(r > len - done ? len - done : r);
        } else {
            dest[2] = mp_obj_new_bytes(buf + done, len - done);
            n = port_count(mp_call_method_n_kw(1, 0, dest), len - done);
        }
        // No count: -EIO. No progress: a failure ("all or -errno"), ENOSPC
        // the usual cause when there is no reason.
        if (n <= 0) {
            return n < 0 ? -MP_EIO : -MP_ENOSPC;
        }
        done += (size_t)n;
    }
    return (int32_t)len;
}

static int32_t port_do_close(mp_obj_t file) {
    mp_obj_t dest[2];
    const mp_stream_p_t *stream = NULL;
    port_via_t via = port_resolve(file, MP_QSTR_close, &mp_stream_close_obj, dest, &stream);
    if (via == PORT_VIA_METHOD) {
        mp_call_method_n_kw(0, 0, dest);
        return 0;
    }
    int err = 0;
    if (via == PORT_VIA_NONE || stream->ioctl == NULL) {
        return -MP_EIO;
    }
    return stream->ioctl(dest[1], MP_STREAM_CLOSE, 0, &err) == MP_STREAM_ERROR ? port_errno(err) : 0;
}

/* --- claw_port.h --- */

// Ends a callback that runs MicroPython code as every one must: fails fast
// while an exception is pending (rule 4), holds the busy guard, restores the
// depth it found (rule 3), turns every exception into -errno under its own
// NLR handler (rule 1; with `full`, ENAMETOOLONG is ENOSPC); returns what
// `call` gives. A macro: one stack frame per callback (the path into a
// Python block device is deep enough).
#define PORT_RETURN(call, full) do { \
        if (!bentoclaw_vm_task()) { \
            return -MP_EAGAIN; \
        } \
        if (claw_port_aborted()) { \
            return -MP_EIO; \
        } \
        const uint8_t depth = s_port_depth; \
        s_port_depth = depth == UINT8_MAX ? UINT8_MAX : (uint8_t)(depth + 1); \
        int32_t ret; \
        nlr_buf_t nlr; \
        if (nlr_push(&nlr) == 0) { \
            ret = (call); \
            nlr_pop(); \
        } else { \
            ret = port_errno_from_exc(nlr.ret_val); \
            ret = (full) && ret == -PORT_ENAMETOOLONG ? -MP_ENOSPC : ret; \
        } \
        s_port_depth = depth; \
        return ret; \
} while (0)

// Rule 7: a native VfsLfs2 (no Python subclass or wrapper between).
static bool port_native_lfs2(const mp_vfs_mount_t *m) {
    return MICROPY_VFS_LFS2 && m != MP_VFS_NONE && m != MP_VFS_ROOT && mp_obj_get_type(m->obj) == &mp_type_vfs_lfs2;
}
mp_obj_t mp_vfs_lfs2_file_open(mp_obj_t self_in, mp_obj_t path_in, mp_obj_t mode_in); // in vfs_lfs.c only

static int32_t port_close(mp_obj_t file) {
    PORT_RETURN(port_do_close(file), false);
}

static mp_obj_t port_str(const char *path) {
    return mp_obj_new_str(path, strlen(path));
}

static int32_t port_open(const char *path, qstr mode) {
    int32_t fd = 0;
    while (fd < CLAW_PORT_MAX_FILES && PORT_FILE(fd) != MP_OBJ_NULL) {
        fd++;
    }
    if (fd == CLAW_PORT_MAX_FILES) {
        return -MP_EMFILE;
    }
    const char *rest;
    mp_vfs_mount_t *m = mp_vfs_lookup_path(path, &rest);
    if (port_native_lfs2(m)) {
        // Its open() as mp_vfs_open() calls it, the path a str on this stack.
        mp_obj_str_t name = { { &mp_type_str }, 0, strlen(rest), (const byte *)rest };
        PORT_FILE(fd) = mp_vfs_lfs2_file_open(m->obj, MP_OBJ_FROM_PTR(&name), MP_OBJ_NEW_QSTR(mode));
        s_port_own |= (uint8_t)(1u << fd);
        return fd;
    }
    mp_obj_t args[2] = { port_str(path), MP_OBJ_NEW_QSTR(mode) };
    PORT_FILE(fd) = mp_vfs_open(2, args, (mp_map_t *)&mp_const_empty_map);
    return fd;
}

uint32_t claw_port_ticks_ms(void) {
    return (uint32_t)mp_hal_ticks_ms();
}

int32_t claw_port_open(const char *path, uint8_t mode) {
    static const qstr modes[] = { MP_QSTR_rb, MP_QSTR_wb, MP_QSTR_ab };
    if (path == NULL || mode >= MP_ARRAY_SIZE(modes)) {
        return -MP_EINVAL;
    }
    PORT_RETURN(port_open(path, modes[mode]), true);
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0)) {
        return -MP_EBADF;
    }
    // A count above INT32_MAX could not be returned: read at most that.
    PORT_RETURN(len == 0 ? 0 : port_do_read(PORT_FILE(fd), buf, len > INT32_MAX ? INT32_MAX : len), false);
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0) || len > INT32_MAX) {
        return -MP_EBADF;
    }
    PORT_RETURN(port_do_write(PORT_FILE(fd), buf, len), false);
}

int32_t claw_port_close(int32_t fd) {
    if (!port_fd_valid(fd)) {
        return -MP_EBADF;
    }
    mp_obj_t file = PORT_FILE(fd);
    // The slot first: the descriptor is gone whatever close() says; a file
    // whose close failed (or was skipped) is its finaliser's.
    PORT_FILE(fd) = MP_OBJ_NULL;
    const bool own = s_port_own & (1u << fd);
    s_port_own &= (uint8_t)~(1u << fd);
    int32_t r = port_close(file);
    if (r == 0 && own) {
        gc_free(MP_OBJ_TO_PTR(file)); // rule 7
    }
    return r;
}

int32_t claw_port_remove(const char *path) {
    if (path == NULL) {
        return -MP_EINVAL;
    }
    PORT_RETURN((mp_vfs_remove(port_str(path)), 0), false);
}

int32_t claw_port_rename(const char *from, const char *to) {
    if (from == NULL || to == NULL) {
        return -MP_EINVAL;
    }
    PORT_RETURN((mp_vfs_rename(port_str(from), port_str(to)), 0), true);
}

uint8_t claw_port_atomic_write(const char *path) {
    // littlefs writes a file copy-on-write and switches to it in the commit
    // at close; FAT and file systems written in Python truncate at open.
    const char *rest;
    mp_vfs_mount_t *m = path == NULL || !bentoclaw_vm_task() ? MP_VFS_NONE : mp_vfs_lookup_path(path, &rest);
    return port_native_lfs2(m) || (MICROPY_VFS_LFS1 && m != MP_VFS_NONE && m != MP_VFS_ROOT
        && mp_obj_get_type(m->obj) == &mp_type_vfs_lfs1);
}
