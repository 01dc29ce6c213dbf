/*
 * claw_port_vfs.c — include/claw_port.h implemented over MicroPython's VFS.
 *
 * The Rust core calls these functions for every file operation and for the
 * clock. They run MicroPython's own open()/VFS code, so the session and
 * memory files live on whatever is mounted at "/" (LittleFS on the board,
 * a Python block device in the tests, the host directory tree on a bare unix
 * port).
 *
 * Why every function looks the same: raising a MicroPython exception is a
 * longjmp, and a longjmp must never cross a Rust frame. So each function
 * pushes its own NLR handler before its first MicroPython call — including
 * building the path string, which allocates and can raise MemoryError — and
 * turns any exception into -errno before returning to Rust. With LittleFS on
 * a block device written in Python even a stream write runs Python code, so
 * nothing here is assumed not to raise.
 *
 * Open files are kept in a root-pointer array so the GC sees them (the Rust
 * side only ever holds the slot number, never an mp_obj_t).
 */
#include <errno.h>
#include <string.h>

#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/nlr.h"
#include "py/obj.h"
#include "py/runtime.h"
#include "py/stream.h"
#include "extmod/vfs.h"

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

#define PORT_FILE(fd) (MP_STATE_VM(bentoclaw_port_files)[(fd)])

// How many port callbacks are running (0 or 1: the core makes one call at a
// time). See claw_port_vfs_busy().
static uint8_t s_port_depth;

bool claw_port_vfs_busy(void) {
    return s_port_depth != 0;
}

void claw_port_vfs_reset(void) {
    // The objects belonged to the previous VM's heap, which is gone: forget
    // them without closing (closing would touch freed memory).
    for (size_t i = 0; i < CLAW_PORT_MAX_FILES; i++) {
        PORT_FILE(i) = MP_OBJ_NULL;
    }
    // The count belongs to the old VM too (it is 0 unless that VM died
    // inside a callback).
    s_port_depth = 0;
}

// Map a caught exception to a negative errno, like
// mp_vfs_mount_and_chdir_protected() in extmod/vfs.c does.
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
    #if MICROPY_KBD_EXCEPTION
    if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_KeyboardInterrupt))) {
        // Ctrl-C landed inside a file operation. The core sees a failed
        // write (and keeps its RAM state for a retry); re-arm the interrupt
        // so the VM raises it as soon as control is back in Python.
        mp_sched_keyboard_interrupt();
    }
    #endif
    // Anything else (a block device written in Python raising ValueError,
    // say) is an I/O failure from the core's point of view.
    return -MP_EIO;
}

static bool port_fd_valid(int32_t fd) {
    return fd >= 0 && fd < CLAW_PORT_MAX_FILES && PORT_FILE(fd) != MP_OBJ_NULL;
}

uint32_t claw_port_ticks_ms(void) {
    return (uint32_t)mp_hal_ticks_ms();
}

int32_t claw_port_open(const char *path, uint8_t mode) {
    static const qstr mode_qstr[] = { MP_QSTR_rb, MP_QSTR_wb, MP_QSTR_ab };
    if (path == NULL || mode >= MP_ARRAY_SIZE(mode_qstr)) {
        return -MP_EINVAL;
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
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t args[2] = {
            mp_obj_new_str(path, strlen(path)),
            MP_OBJ_NEW_QSTR(mode_qstr[mode]),
        };
        PORT_FILE(fd) = mp_vfs_open(2, args, (mp_map_t *)&mp_const_empty_map);
        nlr_pop();
        ret = fd;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0)) {
        return -MP_EBADF;
    }
    if (len > INT32_MAX) {
        len = INT32_MAX; // the return value must be able to carry the count
    }
    int32_t ret;
    nlr_buf_t nlr;
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        int err = 0;
        mp_uint_t n = mp_stream_rw(PORT_FILE(fd), buf, len, &err, MP_STREAM_RW_READ);
        nlr_pop();
        ret = (err != 0 && n == 0) ? -(int32_t)err : (int32_t)n;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len) {
    if (!port_fd_valid(fd) || (buf == NULL && len > 0) || len > INT32_MAX) {
        return -MP_EBADF;
    }
    int32_t ret;
    nlr_buf_t nlr;
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        int err = 0;
        mp_uint_t n = mp_stream_rw(PORT_FILE(fd), (void *)buf, len, &err, MP_STREAM_RW_WRITE);
        nlr_pop();
        // A short write is a failure (the contract is "all or -errno");
        // ENOSPC is the usual cause when the stream gives no reason.
        ret = n == len ? (int32_t)n : err != 0 ? -(int32_t)err : -MP_ENOSPC;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}

int32_t claw_port_close(int32_t fd) {
    if (!port_fd_valid(fd)) {
        return -MP_EBADF;
    }
    mp_obj_t file = PORT_FILE(fd);
    // Release the slot first: the descriptor is gone whatever close() says.
    // A file whose close failed is left to its finaliser.
    PORT_FILE(fd) = MP_OBJ_NULL;
    int32_t ret;
    nlr_buf_t nlr;
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        mp_stream_close(file);
        nlr_pop();
        ret = 0;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}

int32_t claw_port_remove(const char *path) {
    if (path == NULL) {
        return -MP_EINVAL;
    }
    int32_t ret;
    nlr_buf_t nlr;
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        mp_vfs_remove(mp_obj_new_str(path, strlen(path)));
        nlr_pop();
        ret = 0;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}

int32_t claw_port_rename(const char *from, const char *to) {
    if (from == NULL || to == NULL) {
        return -MP_EINVAL;
    }
    int32_t ret;
    nlr_buf_t nlr;
    s_port_depth++;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t from_obj = mp_obj_new_str(from, strlen(from));
        mp_obj_t to_obj = mp_obj_new_str(to, strlen(to));
        mp_vfs_rename(from_obj, to_obj);
        nlr_pop();
        ret = 0;
    } else {
        ret = port_errno_from_exc(nlr.ret_val);
    }
    s_port_depth--;
    return ret;
}
