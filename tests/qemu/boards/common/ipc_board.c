/*
 * ipc_board.c — the emulated boards' stand-in for the BENTO firmware's IPC
 * pipe to the CM55 (ipc_communication.h beside it): the messages the
 * bentoclaw binding sends to the panel are kept, newest last, for the tests,
 * which read them through the `board_ipc` module:
 *
 *   board_ipc.log()      -> [(cmd, client_id, intr_mask, data: bytes), ...]
 *                           since the last clear (at most IPC_LOG_MAX, the
 *                           oldest dropped); data is the message's whole
 *                           IPC_DATA_MAX_LEN bytes
 *   board_ipc.clear()
 *   board_ipc.busy(n)    the next n sends find the pipe busy
 *   board_ipc.setups()   how often cm33_ipc_communication_setup() ran
 *   board_ipc.safe_boot_requests()   mpy_request_safe_boot_once() calls
 *
 * The log lives outside the GC heap and survives soft resets, as the panel
 * does.
 */
#include <string.h>

#include "py/mphal.h"
#include "py/runtime.h"

#include "ipc_communication.h"

#define IPC_LOG_MAX (24)

static ipc_msg_t s_log[IPC_LOG_MAX];
static size_t s_count;
static uint32_t s_busy;
static uint32_t s_setups;
static uint32_t s_safe_boots;

cy_en_ipc_pipe_status_t Cy_IPC_Pipe_SendMessage(uint32_t toAddr, uint32_t fromAddr, void *msgPtr,
    void (*callBackPtr)(void)) {
    (void)callBackPtr;
    if (toAddr != CM55_IPC_PIPE_EP_ADDR || fromAddr != CM33_IPC_PIPE_EP_ADDR || msgPtr == NULL) {
        return CY_IPC_PIPE_ERROR_SEND_BUSY;
    }
    if (s_busy > 0) {
        s_busy--;
        return CY_IPC_PIPE_ERROR_SEND_BUSY;
    }
    if (s_count == IPC_LOG_MAX) {
        memmove(&s_log[0], &s_log[1], sizeof(s_log) - sizeof(s_log[0]));
        s_count--;
    }
    memcpy(&s_log[s_count++], msgPtr, sizeof(ipc_msg_t));
    return CY_IPC_PIPE_SUCCESS;
}

void Cy_SysLib_Delay(uint32_t milliseconds) {
    mp_hal_delay_ms(milliseconds);
}

void Cy_SysLib_DelayUs(uint16_t microseconds) {
    mp_hal_delay_us(microseconds);
}

void cm33_ipc_communication_setup(void) {
    s_setups++;
}

// mpy_main.c's, in the BENTO firmware: skip main.py at the next soft reset.
// The emulated board runs no main.py: it only counts the requests.
void mpy_request_safe_boot_once(void) {
    s_safe_boots++;
}

static mp_obj_t board_ipc_log(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < s_count; i++) {
        mp_obj_t item[4] = {
            mp_obj_new_int_from_uint(s_log[i].cmd),
            MP_OBJ_NEW_SMALL_INT(s_log[i].client_id),
            MP_OBJ_NEW_SMALL_INT(s_log[i].intr_mask),
            mp_obj_new_bytes((const byte *)s_log[i].data, sizeof(s_log[i].data)),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(4, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ipc_log_obj, board_ipc_log);

static mp_obj_t board_ipc_clear(void) {
    s_count = 0;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ipc_clear_obj, board_ipc_clear);

static mp_obj_t board_ipc_busy(mp_obj_t n) {
    s_busy = (uint32_t)mp_obj_get_int(n);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(board_ipc_busy_obj, board_ipc_busy);

static mp_obj_t board_ipc_setups(void) {
    return mp_obj_new_int_from_uint(s_setups);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ipc_setups_obj, board_ipc_setups);

static mp_obj_t board_ipc_safe_boot_requests(void) {
    return mp_obj_new_int_from_uint(s_safe_boots);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ipc_safe_boot_requests_obj, board_ipc_safe_boot_requests);

static const mp_rom_map_elem_t board_ipc_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_board_ipc) },
    { MP_ROM_QSTR(MP_QSTR_log), MP_ROM_PTR(&board_ipc_log_obj) },
    { MP_ROM_QSTR(MP_QSTR_clear), MP_ROM_PTR(&board_ipc_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_busy), MP_ROM_PTR(&board_ipc_busy_obj) },
    { MP_ROM_QSTR(MP_QSTR_setups), MP_ROM_PTR(&board_ipc_setups_obj) },
    { MP_ROM_QSTR(MP_QSTR_safe_boot_requests), MP_ROM_PTR(&board_ipc_safe_boot_requests_obj) },
};
static MP_DEFINE_CONST_DICT(board_ipc_globals, board_ipc_globals_table);

const mp_obj_module_t board_ipc_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&board_ipc_globals,
};

MP_REGISTER_MODULE(MP_QSTR_board_ipc, board_ipc_module);
