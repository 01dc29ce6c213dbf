/*
 * modboard.c — the `board` module of the MPS3_AN547 qemu board.
 *
 *   board.ramdisk()      bytearray over the RAM-disk region of the linker
 *                        script (outside the GC heap and .bss: zero at
 *                        power-on, kept across soft resets). A Python block
 *                        device on it holds a LittleFS that survives
 *                        machine.soft_reset() / Ctrl-D.
 *   board.stack_size()   bytes of the stack region (_estack - _sstack)
 *   board.stack_depth()  bytes of stack in use right now (_estack - SP)
 *   board.stack_paint()  fill the unused stack below the caller with a
 *                        pattern; returns the depth at the call
 *   board.stack_used()   deepest stack use since the last paint, in bytes
 *                        from _estack (the painted word nearest the top
 *                        that was overwritten marks it)
 *
 * Measuring one call:  d = board.stack_paint(); f(); peak = board.stack_used()
 * then peak - d is what f (with the interpreter frames it needs) used.
 */
#include <stdint.h>

#include "py/obj.h"
#include "py/runtime.h"

extern uint32_t _ramdisk_start, _ramdisk_end, _sstack, _estack;

#define BOARD_STACK_PATTERN (0x5aa5c33cu)
// Left alone below the current SP while painting: this function's own frame
// and whatever an interrupt might push.
#define BOARD_PAINT_GUARD (256u)

static mp_obj_t board_ramdisk(void) {
    size_t len = (size_t)((uintptr_t)&_ramdisk_end - (uintptr_t)&_ramdisk_start);
    return mp_obj_new_bytearray_by_ref(len, &_ramdisk_start);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ramdisk_obj, board_ramdisk);

static inline uintptr_t board_sp(void) {
    uintptr_t sp;
    __asm volatile ("mov %0, sp" : "=r" (sp));
    return sp;
}

static mp_obj_t board_stack_size(void) {
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - (uintptr_t)&_sstack);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_stack_size_obj, board_stack_size);

static mp_obj_t board_stack_depth(void) {
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - board_sp());
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_stack_depth_obj, board_stack_depth);

static mp_obj_t board_stack_paint(void) {
    uintptr_t sp = board_sp();
    volatile uint32_t *p = &_sstack;
    volatile uint32_t *end = (volatile uint32_t *)((sp - BOARD_PAINT_GUARD) & ~(uintptr_t)3);
    while (p < end) {
        *p++ = BOARD_STACK_PATTERN;
    }
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - sp);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_stack_paint_obj, board_stack_paint);

static mp_obj_t board_stack_used(void) {
    const volatile uint32_t *p = &_sstack;
    const volatile uint32_t *top = &_estack;
    while (p < top && *p == BOARD_STACK_PATTERN) {
        p++;
    }
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - (uintptr_t)p);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_stack_used_obj, board_stack_used);

static const mp_rom_map_elem_t board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_board) },
    { MP_ROM_QSTR(MP_QSTR_ramdisk), MP_ROM_PTR(&board_ramdisk_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_size), MP_ROM_PTR(&board_stack_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_depth), MP_ROM_PTR(&board_stack_depth_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_paint), MP_ROM_PTR(&board_stack_paint_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_used), MP_ROM_PTR(&board_stack_used_obj) },
};
static MP_DEFINE_CONST_DICT(board_module_globals, board_module_globals_table);

const mp_obj_module_t board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_board, board_module);
