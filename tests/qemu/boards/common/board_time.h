/*
 * board_time.h — time.localtime() and time.gmtime() of the emulated boards
 * (MICROPY_PY_TIME_INCLUDEFILE: extmod/modtime.c includes it). The boards
 * have no RTC: the time is the board's clock, mp_hal_time_ns() (board.c),
 * the time since power-on from the port's epoch 2000-01-01, as on a board
 * whose RTC was never set. The vendor's rtc_read tool
 * (mpy/claw_tools.c) reads it through time.localtime().
 */
#include "py/mphal.h"
#include "py/obj.h"
#include "shared/timeutils/timeutils.h"

static mp_obj_t mp_time_localtime_get(void) {
    timeutils_struct_time_t tm;
    timeutils_seconds_since_epoch_to_struct_time(mp_hal_time_ns() / 1000000000ull, &tm);
    mp_obj_t tuple[8] = {
        mp_obj_new_int(tm.tm_year),
        mp_obj_new_int(tm.tm_mon),
        mp_obj_new_int(tm.tm_mday),
        mp_obj_new_int(tm.tm_hour),
        mp_obj_new_int(tm.tm_min),
        mp_obj_new_int(tm.tm_sec),
        mp_obj_new_int(tm.tm_wday),
        mp_obj_new_int(tm.tm_yday),
    };
    return mp_obj_new_tuple(8, tuple);
}
