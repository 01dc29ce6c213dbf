/*
 * MPS3_AN547 — MicroPython configuration for the out-of-tree qemu board.
 *
 * The qemu port's mpconfigport.h does not include a board header, so this
 * file is passed as MP_CONFIGFILE (py/mpconfig.h includes it instead of
 * mpconfigport.h): it takes the port's settings and changes a few.
 * No file of MicroPython is modified.
 */
#include "mpconfigport.h"

// time.ticks_ms/ticks_us/ticks_diff/sleep_ms: the board provides
// mp_hal_ticks_ms/us/cpu, mp_hal_delay_ms/us and mp_hal_time_ns (board.c).
#undef MICROPY_PY_TIME
// Bare metal: the MicroPython task is thread mode (mpy/claw_vm_task.h).
#define BENTOCLAW_VM_TASK_BARE_METAL (1)
#define MICROPY_PY_TIME             (1)
// time.localtime()/gmtime()/mktime(): the board's clock from 2000-01-01, no
// RTC (../common/board_time.h); the rtc_read tool reads it.
#define MICROPY_PY_TIME_GMTIME_LOCALTIME_MKTIME (1)
#define MICROPY_PY_TIME_INCLUDEFILE "board_time.h"

// LittleFS v2 (MICROPY_VFS_LFS2 is also set from mpconfigboard.mk, which is
// what adds the littlefs sources to the build).
#ifndef MICROPY_VFS_LFS2
#define MICROPY_VFS_LFS2            (1)
#endif

// bentoclaw re-initialises its core once per soft reset from the module's
// __init__ (SPEC §3). The ROM level already enables it; make it explicit.
#undef MICROPY_MODULE_BUILTIN_INIT
#define MICROPY_MODULE_BUILTIN_INIT (1)

// Run once per mp_init(), i.e. at boot and after every soft reset:
// the stack limit for the board's real stack (main.c sets 10 KiB).
void board_vm_init(void);
#define MICROPY_PORT_INIT_FUNC board_vm_init()

// The firmware's idle point, as on the M33 board (docs/BUILD.md): after
// every REPL command, so also before a soft reset, the session ring is
// flushed (board.c).
void board_idle_point(void);
#define MICROPY_BOARD_AFTER_PYTHON_EXEC(input_kind, exec_flags, ret_val, ret) board_idle_point()

#define MICROPY_HW_MCU_NAME "Cortex-M55"
