// HAL of the CMake build test's host port: stdio on file descriptors 0/1
// (newlines as they are, as on the unix port), the clock from CLOCK_MONOTONIC
// (ticks) and CLOCK_REALTIME (file times).
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "py/mphal.h"

mp_uint_t mp_hal_stdout_tx_strn(const char *str, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(STDOUT_FILENO, str + done, len - done);
        if (n <= 0) {
            break;
        }
        done += (size_t)n;
    }
    return done;
}

void mp_hal_stdout_tx_strn_cooked(const char *str, size_t len) {
    mp_hal_stdout_tx_strn(str, len);
}

void mp_hal_stdout_tx_str(const char *str) {
    mp_hal_stdout_tx_strn(str, strlen(str));
}

int mp_hal_stdin_rx_chr(void) {
    unsigned char c;
    return read(STDIN_FILENO, &c, 1) == 1 ? c : 4; // EOF reads as Ctrl-D
}

static uint64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

mp_uint_t mp_hal_ticks_ms(void) {
    return (mp_uint_t)(monotonic_us() / 1000u);
}

mp_uint_t mp_hal_ticks_us(void) {
    return (mp_uint_t)monotonic_us();
}

void mp_hal_delay_ms(mp_uint_t ms) {
    usleep((useconds_t)ms * 1000u);
}

void mp_hal_delay_us(mp_uint_t us) {
    usleep((useconds_t)us);
}

uint64_t mp_hal_time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
