/*
 * board_stack.h — the MicroPython stack of both emulated boards, laid out as
 * the BENTO board's (../shared/spec/VENDOR-SDK.md §5; docs/EMULATOR.md): the
 * MicroPython task has an 8 KiB FreeRTOS stack and MicroPython's stack
 * limit is 8 KiB - 512.
 *
 * The linker scripts give, from the top of SRAM down:
 *   _estack            the top of the 8 KiB region (initial SP)
 *   _sstack            _estack - 8 KiB: its bottom, where MSPLIM sits (the
 *                      FreeRTOS CM33 port puts PSPLIM at a task's stack
 *                      bottom: an overflow faults, it does not overwrite)
 *   _sstack_reserve    _sstack - 1 KiB: the fault handler's reserve, outside
 *                      the region (the handler lifts MSPLIM and runs there)
 *
 * board_stack_boot()     from uart_init(), first thing after reset: MSPLIM,
 *                        then the whole region below the caller painted
 * board_stack_vm_init()  from board_vm_init(), once per mp_init(): the top
 *                        of MicroPython's stack is _estack and its limit
 *                        8 KiB - BOARD_STACK_LIMIT_GAP
 * BOARD_STACK_MODULE_ENTRIES
 *                        the stack functions of the `board` module
 *                        (modboard.c of each board)
 */
#ifndef BOARD_STACK_H
#define BOARD_STACK_H

#include "py/obj.h"

// Bytes between MicroPython's limit and the bottom of the region: 512 as
// the BENTO firmware sets it. A build with a negative gap puts the limit
// beyond the region (the check of the fault report: docs/EMULATOR.md).
#ifndef BOARD_STACK_LIMIT_GAP
#define BOARD_STACK_LIMIT_GAP (512)
#endif

void board_stack_boot(void);
void board_stack_vm_init(void);

MP_DECLARE_CONST_FUN_OBJ_0(board_stack_size_obj);
MP_DECLARE_CONST_FUN_OBJ_0(board_stack_limit_obj);
MP_DECLARE_CONST_FUN_OBJ_0(board_stack_depth_obj);
MP_DECLARE_CONST_FUN_OBJ_0(board_stack_paint_obj);
MP_DECLARE_CONST_FUN_OBJ_0(board_stack_used_obj);

#define BOARD_STACK_MODULE_ENTRIES \
    { MP_ROM_QSTR(MP_QSTR_stack_size), MP_ROM_PTR(&board_stack_size_obj) }, \
    { MP_ROM_QSTR(MP_QSTR_stack_limit), MP_ROM_PTR(&board_stack_limit_obj) }, \
    { MP_ROM_QSTR(MP_QSTR_stack_depth), MP_ROM_PTR(&board_stack_depth_obj) }, \
    { MP_ROM_QSTR(MP_QSTR_stack_paint), MP_ROM_PTR(&board_stack_paint_obj) }, \
    { MP_ROM_QSTR(MP_QSTR_stack_used), MP_ROM_PTR(&board_stack_used_obj) }

#endif // BOARD_STACK_H
