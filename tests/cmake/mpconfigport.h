// Host "port" for the CMake build test: a script runner with a GC heap,
// LittleFS v2, the host's files (VfsPosix) and the time module, at the feature level of the unix port's
// standard variant (tests/cmake/CMakeLists.txt).
#include <stdint.h>
#include <alloca.h>

#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

#define MICROPY_ENABLE_GC (1)
#define MICROPY_HEAP_SIZE (1024 * 1024)
#define MICROPY_HELPER_REPL (0)
#define MICROPY_ENABLE_EXTERNAL_IMPORT (1)
#define MICROPY_READER_VFS (1)
#define MICROPY_VFS (1)
#define MICROPY_VFS_LFS2 (1)
#define MICROPY_VFS_POSIX (1)
#define MICROPY_FLOAT_IMPL (MICROPY_FLOAT_IMPL_DOUBLE)
#define MICROPY_LONGINT_IMPL (MICROPY_LONGINT_IMPL_MPZ)
#define MICROPY_MODULE_BUILTIN_INIT (1)
#define MICROPY_PY_SYS_EXIT (1)
#define MICROPY_PY_SYS_STDFILES (0)
#define MICROPY_PY_BUILTINS_INPUT (0)
#define MICROPY_PY_TIME (1)
#define MICROPY_PY_TIME_TIME_TIME_NS (0)
#define MICROPY_PY_TIME_GMTIME_LOCALTIME_MKTIME (0)
#define MICROPY_PY_MACHINE (0)
#define MICROPY_PY_SELECT (0)
#define MICROPY_PY_OS_DUPTERM (0)
#define MICROPY_PY_OS_UNAME (0)
#define MICROPY_PY_RANDOM_SEED_INIT_FUNC (0x6a09e667)
#define MICROPY_EPOCH_IS_1970 (1)
#define MICROPY_ALLOC_PATH_MAX (256)
#define MICROPY_PY_SYS_PLATFORM "bentoclaw-cmake"
#define MICROPY_HW_BOARD_NAME "host"
#define MICROPY_HW_MCU_NAME "x86_64"

#define MP_SSIZE_MAX (0x7fffffffffffffff)
typedef intptr_t mp_int_t;
typedef uintptr_t mp_uint_t;
typedef long mp_off_t;

#define MP_STATE_PORT MP_STATE_VM
