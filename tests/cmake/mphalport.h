// HAL of the CMake build test's host port (tests/cmake/mphalport.c).
static inline void mp_hal_set_interrupt_char(char c) {
    (void)c;
}
static inline mp_uint_t mp_hal_ticks_cpu(void) {
    return 0;
}

// PEP 475: retry a system call interrupted by a signal (ports/unix/mphalport.h).
#include <errno.h>
#define MP_HAL_RETRY_SYSCALL(ret, syscall, raise) { \
        for (;;) { \
            ret = syscall; \
            if (ret == -1) { \
                int err = errno; \
                if (err == EINTR) { \
                    mp_handle_pending(true); \
                    continue; \
                } \
                raise; \
            } \
            break; \
        } \
}
