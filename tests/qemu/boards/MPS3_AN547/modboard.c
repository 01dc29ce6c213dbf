/*
 * modboard.c — the `board` module of the MPS3_AN547 qemu board.
 *
 *   board.ramdisk()      bytearray over the RAM-disk region of the linker
 *                        script (outside the GC heap and .bss: zero at
 *                        power-on, kept across soft resets). A Python block
 *                        device on it holds a LittleFS that survives
 *                        machine.soft_reset() / Ctrl-D.
 *   board.stack_size(), stack_limit(), stack_depth(), stack_paint(),
 *   stack_used()         the stack of the MicroPython task and its
 *                        painting (../common/board_stack.c)
 */
#include <stdint.h>

#include "py/obj.h"
#include "py/runtime.h"

#include "board_stack.h"

extern uint32_t _ramdisk_start, _ramdisk_end;

static mp_obj_t board_ramdisk(void) {
    size_t len = (size_t)((uintptr_t)&_ramdisk_end - (uintptr_t)&_ramdisk_start);
    return mp_obj_new_bytearray_by_ref(len, &_ramdisk_start);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ramdisk_obj, board_ramdisk);

static const mp_rom_map_elem_t board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_board) },
    { MP_ROM_QSTR(MP_QSTR_ramdisk), MP_ROM_PTR(&board_ramdisk_obj) },
    BOARD_STACK_MODULE_ENTRIES,
};
static MP_DEFINE_CONST_DICT(board_module_globals, board_module_globals_table);

const mp_obj_module_t board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_board, board_module);
