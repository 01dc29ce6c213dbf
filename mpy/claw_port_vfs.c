/*
 * claw_port_vfs.c — include/claw_port.h implemented over MicroPython's VFS.
 *
 * The Rust core calls these functions for every file operation and for the
 * clock. They run MicroPython's own open()/VFS code, so the session and
 * memory files live on whatever is mounted at "/" (LittleFS on the board,
 * a Python block device in the tests, a file system written in Python, the
 * host directory tree on a bare unix port). Everything reached from here may
 * be Python code written by the user, so nothing it does is trusted.
 *
 * The rules of this port:
 *
 * 1. No exception crosses a Rust frame. Raising a MicroPython exception is a
 *    longjmp, and a longjmp must never cross a Rust frame. So each function
 *    pushes its own NLR handler before its first MicroPython call (building
 *    the path string included: it allocates and can raise MemoryError) and
 *    turns any exception into -errno: an OSError gives its errno, a
 *    MemoryError -ENOMEM, anything else -EIO.
 *
 * 2. A file object is only used the way its type says. mp_vfs_open()
 *    returns whatever the mounted file system's open() returns: a native
 *    stream (LittleFS, FAT, the unix VFS), a Python class with
 *    read/readinto/write/close, an io.IOBase subclass, None, an int...
 *    MicroPython's own mp_stream_rw()/mp_stream_close() assume a native
 *    stream and crash on anything else. Here each operation looks the method
 *    up (readinto, else read; write; close) with mp_load_method_maybe():
 *     - when it is MicroPython's generic stream method (mp_stream_readinto_obj
 *       ...) bound to an object of a native type whose protocol slot is set,
 *       the type declared itself a stream: its mp_stream_p_t is called
 *       directly on the caller's buffer;
 *     - any other callable is called as a Python method, with a copy of the
 *       data (a fresh bytes for write(), a fresh bytearray for readinto()),
 *       so Python code never holds a reference to the core's memory. This
 *       covers io.IOBase subclasses (their protocol slot only calls these
 *       same Python methods back) and Python subclasses of native streams
 *       (whose inherited protocol slot would be called with the wrong object);
 *     - no such method, or a generic stream method bound to anything else:
 *       -EIO.
 *    Every count a callee reports is checked against the buffer it was
 *    given: a native stream's count and a write() count are clamped to it
 *    (a write() that claims more than it was given took all of it); a
 *    readinto() that claims more than the buffer, or a read(n) that returns
 *    more than n bytes, is -EIO (the core must never get bytes the file did
 *    not supply). A count that is not an int, is negative, or None is -EIO;
 *    read() must return a bytes-like object that is not a str.
 *
 * 3. Python code reached from here must not re-enter the core (its state is
 *    in the middle of an update): claw_port_vfs_busy() is true while a
 *    callback runs, and the binding refuses calls then. Each callback saves
 *    the busy depth it found and restores exactly that value on the way out,
 *    so nothing the Python code does (claw_port_vfs_reset() included, which
 *    refuses to run while a callback is active) can leave the guard set
 *    after the operation.
 *
 * 4. A BaseException that is not an Exception (KeyboardInterrupt,
 *    SystemExit, GeneratorExit) is not an I/O error: the user wants out. The
 *    callback still returns -EIO (the core then ends its file work the way
 *    it does for any failed write: nothing saved is lost), keeps the
 *    exception (the first one wins) and every later port call fails fast
 *    with -EIO without running Python code, until the binding calls
 *    claw_port_vfs_raise_pending() right after the core call returns. A
 *    file closed while an exception is pending is released without calling
 *    its close(): it is left to its finaliser, as Python leaves a file an
 *    exception unwinds past. (A LittleFS file closed by its finaliser on a
 *    Python block device is only safe with
 *    mpy/patches/micropython/0002-littlefs-no-unwinding-from-block-device.patch;
 *    so is a close() that raised.)
 *
 * 5. Open files are kept in a root-pointer array so the GC sees them (the
 *    Rust side only ever holds the slot number, never an mp_obj_t); the
 *    pending exception is a root pointer too.
 */
#include <errno.h>
#include <string.h>

#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/nlr.h"
#include "py/obj.h"
#include "py/objtype.h"
#include "py/runtime.h"
#include "py/stream.h"
#include "extmod/vfs.h"
#if MICROPY_VFS_LFS1 || MICROPY_VFS_LFS2
#include "extmod/vfs_lfs.h"
#endif

#include "claw_port.h"
#include "claw_port_vfs.h"

#if !MICROPY_VFS
#error "bentoclaw needs MICROPY_VFS: the session and memory files go through it"
#endif

// The root pointer below is declared with a literal size because the
// generated root-pointer header cannot see claw_port.h.
#if CLAW_PORT_MAX_FILES != 3
#error "update the size of bentoclaw_port_files"
#endif
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_port_files[3]);
// A KeyboardInterrupt/SystemExit/GeneratorExit caught by a port callback,
// raised by claw_port_vfs_raise_pending() (MP_OBJ_NULL: none).
MP_REGISTER_ROOT_POINTER(mp_obj_t bentoclaw_pending_exc);

#define PORT_FILE(fd) (MP_STATE_VM(bentoclaw_port_files)[(fd)])
#define PORT_PENDING (MP_STATE_VM(bentoclaw_pending_exc))

// How many port callbacks are running (0 or 1: the core makes one call at a
// time). Each callback saves the value it finds and restores exactly that
// value when it returns (PORT_ENTER/PORT_LEAVE). See claw_port_vfs_busy().
static uint8_t s_port_depth;

#define PORT_ENTER() \
    const uint8_t port_saved_depth = s_port_depth; \
    s_port_depth = port_saved_depth == UINT8_MAX ? UINT8_MAX : (uint8_t)(port_saved_depth + 1)
#define PORT_LEAVE() (s_port_depth = port_saved_depth)

bool claw_port_vfs_busy(void) {
    return s_port_depth != 0;
}

bool claw_port_vfs_pending(void) {
    return PORT_PENDING != MP_OBJ_NULL;
}

void claw_port_vfs_raise_pending(void) {
    mp_obj_t exc = PORT_PENDING;
    if (exc != MP_OBJ_NULL) {
        PORT_PENDING = MP_OBJ_NULL;
        nlr_raise(exc);
    }
}

bool claw_port_vfs_reset(void) {
    if (s_port_depth != 0) {
        // A port callback is running in this VM (Python code it reached
        // re-imported the module after removing its marker): its open
        // files and its guard are live. Nothing to reset.
        return false;
    }
    // The objects belonged to the previous VM's heap, which is gone: forget
    // them without closing (closing would touch freed memory).
    for (size_t i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        PORT_FILE(i) = MP_OBJ_NULL;
    }
    PORT_PENDING = MP_OBJ_NULL;
    return true;
}

// Map a caught exception to a negative errno, like
// mp_vfs_mount_and_chdir_protected() in extmod/vfs.c does. A BaseException
// that is not an Exception is kept for claw_port_vfs_raise_pending().
static int32_t port_errno_from_exc(void *exc_in) {
    mp_obj_base_t *exc = exc_in;
    mp_obj_t type = MP_OBJ_FROM_PTR(exc->type);
    if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        mp_int_t err = 0;
        if (mp_obj_get_int_maybe(mp_obj_exception_get_value(MP_OBJ_FROM_PTR(exc)), &err)
            && err > 0 && err < 0x8000) {
            return -(int32_t)err;
        }
        return -MP_EIO;
    }
    if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_MemoryError))) {
        return -MP_ENOMEM;
    }
    if (!mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        // KeyboardInterrupt, SystemExit, GeneratorExit: raised again once
        // the core has returned. The first one wins.
        if (PORT_PENDING == MP_OBJ_NULL) {
            PORT_PENDING = MP_OBJ_FROM_PTR(exc);
        }
    }
    // Anything else (a block device written in Python raising ValueError,
    // say) is an I/O failure from the core's point of view.
    return -MP_EIO;
}

// The core's paths are under 32 bytes, far below any file system's name
// limit: littlefs says ENAMETOOLONG when its directory has no room left for
// the entry. That is a full file system.
// (littlefs's LFS_ERR_NAMETOOLONG; mperrno.h has no name for it.)
#define PORT_ENAMETOOLONG 36
static int32_t port_space_errno(int32_t ret) {
    return ret == -PORT_ENAMETOOLONG ? -MP_ENOSPC : ret;
}

// -errno for a stream's error code (EIO when it gives none that fits).
static int32_t port_errno(int err) {
    return err > 0 && err < 0x8000 ? -(int32_t)err : -MP_EIO;
}

static bool port_fd_valid(int32_t fd) {
    return fd >= 0 && fd < CLAW_PORT_MAX_FILES && PORT_FILE(fd) != MP_OBJ_NULL;
}

/* ---------------------------------------------------------------------------
 * How to drive a file object (rule 2)
 */

typedef enum {
    PORT_VIA_NONE,   // no usable method: -EIO
    PORT_VIA_STREAM, // a native stream: *stream, called on dest[1]
    PORT_VIA_METHOD, // a Python-level method: dest[0..1], called with copies
} port_via_t;

// Look `name` up on `file`. `generic` is MicroPython's stream method of that
// name (mp_stream_readinto_obj, ...). On PORT_VIA_STREAM *stream is the
// native type's protocol (not NULL); the caller checks the function it needs.
static port_via_t port_resolve(mp_obj_t file, qstr name, const void *generic,
    mp_obj_t dest[2], const mp_stream_p_t **stream) {
    dest[0] = MP_OBJ_NULL;
    dest[1] = MP_OBJ_NULL;
    mp_load_method_maybe(file, name, dest);
    if (dest[0] == MP_OBJ_NULL) {
        return PORT_VIA_NONE;
    }
    if (dest[0] != MP_OBJ_FROM_PTR(generic)) {
        return PORT_VIA_METHOD;
    }
    // The generic stream method calls the protocol slot of its self: use
    // the slot directly, but only when self is of a native type (the slot
    // of a Python class is inherited and expects the native base's object).
    mp_obj_t self = dest[1];
    if (self == MP_OBJ_NULL || !mp_obj_is_obj(self)) {
        return PORT_VIA_NONE;
    }
    const mp_obj_type_t *type = ((mp_obj_base_t *)MP_OBJ_TO_PTR(self))->type;
    if (!mp_obj_is_native_type(type) || !MP_OBJ_TYPE_HAS_SLOT(type, protocol)) {
        return PORT_VIA_NONE;
    }
    *stream = MP_OBJ_TYPE_GET_SLOT(type, protocol);
    return *stream != NULL ? PORT_VIA_STREAM : PORT_VIA_NONE;
}

// A count returned by a Python method: an int clamped to 0..max, or -1 for
// anything else (None, a negative number, not an int; an int too big for
// mp_int_t raises OverflowError, which the caller's handler turns into
// -EIO).
static mp_int_t port_count(mp_obj_t ret, size_t max) {
    mp_int_t n;
    if (!mp_obj_is_int(ret) || !mp_obj_get_int_maybe(ret, &n) || n < 0) {
        return -1;
    }
    return (size_t)n > max ? (mp_int_t)max : n;
}

// Like mp_stream_rw(), but a count above what was asked is clamped
// (mp_stream_rw() would go on with a wrapped-around size and write past the
// buffer).
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
    port_via_t via = port_resolve(file, MP_QSTR_readinto, &mp_stream_readinto_obj, dest, &stream);
    if (via == PORT_VIA_STREAM) {
        return port_stream_read(stream, dest[1], buf, len);
    }
    if (via == PORT_VIA_METHOD) {
        // readinto(bytearray(len)): one call, a short count is fine (the
        // core reads again). A count above len is a lie about what is in
        // the buffer (clamping it would hand the core bytes the file never
        // supplied): -EIO.
        mp_obj_t ba = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_bytearray), mp_obj_new_int_from_uint(len));
        dest[2] = ba;
        mp_int_t n = port_count(mp_call_method_n_kw(1, 0, dest), SIZE_MAX);
        // The method may have resized the bytearray.
        mp_buffer_info_t bi;
        mp_get_buffer_raise(ba, &bi, MP_BUFFER_READ);
        if (n < 0 || (size_t)n > len || (size_t)n > bi.len) {
            return -MP_EIO;
        }
        memcpy(buf, bi.buf, (size_t)n);
        return (int32_t)n;
    }
    // No readinto: read(len).
    via = port_resolve(file, MP_QSTR_read, &mp_stream_read_obj, dest, &stream);
    if (via == PORT_VIA_STREAM) {
        return port_stream_read(stream, dest[1], buf, len);
    }
    if (via == PORT_VIA_NONE) {
        return -MP_EIO;
    }
    // read(len) must give bytes-like data (not str) of at most len bytes:
    // what it returns beyond len would be lost from the stream.
    dest[2] = mp_obj_new_int_from_uint(len);
    mp_obj_t got = mp_call_method_n_kw(1, 0, dest);
    mp_buffer_info_t bi;
    if (got == mp_const_none
        || mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(got)), MP_OBJ_FROM_PTR(&mp_type_str))
        || !mp_get_buffer(got, &bi, MP_BUFFER_READ)
        || bi.len > len) {
        return -MP_EIO;
    }
    memcpy(buf, bi.buf, bi.len);
    return (int32_t)bi.len;
}

static int32_t port_do_write(mp_obj_t file, const uint8_t *buf, size_t len) {
    mp_obj_t dest[3];
    const mp_stream_p_t *stream = NULL;
    port_via_t via = port_resolve(file, MP_QSTR_write, &mp_stream_write_obj, dest, &stream);
    if (via == PORT_VIA_NONE || (via == PORT_VIA_STREAM && stream->write == NULL)) {
        return -MP_EIO;
    }
    size_t done = 0;
    while (done < len) {
        size_t n;
        if (via == PORT_VIA_STREAM) {
            int err = 0;
            mp_uint_t r = stream->write(dest[1], buf + done, len - done, &err);
            if (r == MP_STREAM_ERROR) {
                return port_errno(err);
            }
            n = r > len - done ? len - done : r;
        } else {
            dest[2] = mp_obj_new_bytes(buf + done, len - done);
            mp_int_t r = port_count(mp_call_method_n_kw(1, 0, dest), len - done);
            if (r < 0) {
                return -MP_EIO;
            }
            n = (size_t)r;
        }
        if (n == 0) {
            // No progress: a short write is a failure (the contract is "all
            // or -errno"); ENOSPC is the usual cause when there is no reason.
            return -MP_ENOSPC;
        }
        done += n;
    }
    return (int32_t)len;
}

static int32_t port_do_close(mp_obj_t file) {
    mp_obj_t dest[2];
    const mp_stream_p_t *stream = NULL;
    port_via_t via = port_resolve(file, MP_QSTR_close, &mp_stream_close_obj, dest, &stream);
    if (via == PORT_VIA_STREAM) {
        if (stream->ioctl == NULL) {
            return -MP_EIO;
        }
        int err = 0;
        mp_uint_t r = stream->ioctl(dest[1], MP_STREAM_CLOSE, 0, &err);
        return r == MP_STREAM_ERROR ? port_errno(err) : 0;
    }
    if (via == PORT_VIA_METHOD) {
        mp_call_method_n_kw(0, 0, dest);
        return 0;
    }
    return -MP_EIO;
}

/* ---------------------------------------------------------------------------
 * claw_port.h
 */

uint32_t claw_port_ticks_ms(void) {
    return (uint32_t)mp_hal_ticks_ms();
}

int32_t claw_port_open(const char *path, uint8_t mode) {
    static const qstr mode_qstr[] = { MP_QSTR_rb, MP_QSTR_wb, MP_QSTR_ab };
    if (path == NULL || mode >= MP_ARRAY_SIZE(mode_qstr)) {
        return -MP_EINVAL;
    }
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    int32_t fd = 0;
    while (fd < CLAW_PORT_MAX_FILES && PORT_FILE(fd) != MP_OBJ_NULL) {
        fd++;
    }
    if (fd == CLAW_PORT_MAX_FILES) {
        return -MP_EMFILE;
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        mp_obj_t args[2] = {
            mp_obj_new_str(path, strlen(path)),
            MP_OBJ_NEW_QSTR(mode_qstr[mode]),
        };
        PORT_FILE(fd) = mp_vfs_open(2, args, (mp_map_t *)&mp_const_empty_map);
        nlr_pop();
        ret = fd;
    } else {
        ret = port_space_errno(port_errno_from_exc(nlr.ret_val));
    }
    PORT_LEAVE();
    return ret;
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0)) {
        return -MP_EBADF;
    }
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    if (len > INT32_MAX) {
        len = INT32_MAX; // the return value must be able to carry the count
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        ret = len == 0 ? 0 : port_do_read(PORT_FILE(fd), buf, len);
        nlr_pop();
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    PORT_LEAVE();
    return ret;
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0) || len > INT32_MAX) {
        return -MP_EBADF;
    }
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        ret = port_do_write(PORT_FILE(fd), buf, len);
        nlr_pop();
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    PORT_LEAVE();
    return ret;
}

int32_t claw_port_close(int32_t fd) {
    if (!port_fd_valid(fd)) {
        return -MP_EBADF;
    }
    mp_obj_t file = PORT_FILE(fd);
    // Release the slot first: the descriptor is gone whatever close() says.
    // A file whose close failed (or was skipped) is left to its finaliser.
    PORT_FILE(fd) = MP_OBJ_NULL;
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        ret = port_do_close(file);
        nlr_pop();
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    PORT_LEAVE();
    return ret;
}

int32_t claw_port_remove(const char *path) {
    if (path == NULL) {
        return -MP_EINVAL;
    }
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        mp_vfs_remove(mp_obj_new_str(path, strlen(path)));
        nlr_pop();
        ret = 0;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    PORT_LEAVE();
    return ret;
}

uint8_t claw_port_atomic_write(const char *path) {
    // littlefs writes a file copy-on-write and switches to it in the commit
    // at close; FAT and file systems written in Python truncate at open.
    #if MICROPY_VFS_LFS1 || MICROPY_VFS_LFS2
    const char *rest;
    mp_vfs_mount_t *m = path == NULL ? MP_VFS_NONE : mp_vfs_lookup_path(path, &rest);
    if (m != MP_VFS_NONE && m != MP_VFS_ROOT) {
        const mp_obj_type_t *t = mp_obj_get_type(m->obj);
        #if MICROPY_VFS_LFS2
        if (t == &mp_type_vfs_lfs2) {
            return 1;
        }
        #endif
        #if MICROPY_VFS_LFS1
        if (t == &mp_type_vfs_lfs1) {
            return 1;
        }
        #endif
    }
    #else
    (void)path;
    #endif
    return 0;
}

int32_t claw_port_rename(const char *from, const char *to) {
    if (from == NULL || to == NULL) {
        return -MP_EINVAL;
    }
    if (claw_port_vfs_pending()) {
        return -MP_EIO;
    }
    int32_t ret;
    nlr_buf_t nlr;
    PORT_ENTER();
    if (nlr_push(&nlr) == 0) {
        mp_obj_t from_obj = mp_obj_new_str(from, strlen(from));
        mp_obj_t to_obj = mp_obj_new_str(to, strlen(to));
        mp_vfs_rename(from_obj, to_obj);
        nlr_pop();
        ret = 0;
    } else {
        ret = port_space_errno(port_errno_from_exc(nlr.ret_val));
    }
    PORT_LEAVE();
    return ret;
}
