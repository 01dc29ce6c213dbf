/*
 * board_stack.c — the MicroPython stack of the emulated boards: the BENTO
 * board's 8 KiB with MicroPython's limit at 8 KiB - 512 (board_stack.h),
 * the stack limit register, and stack painting for the `board` module:
 *
 *   board.stack_size()   bytes of the region (_estack - _sstack): 8192
 *   board.stack_limit()  MicroPython's stack limit, counted from _estack:
 *                        8192 - 512 = 7680
 *   board.stack_depth()  bytes of stack in use right now (_estack - SP)
 *   board.stack_paint()  fill the unused stack below the caller with a
 *                        pattern; returns the depth at the call
 *   board.stack_used()   the deepest stack use since the last paint (or
 *                        since power-on: the boot paints the whole region),
 *                        in bytes from _estack: the painted word nearest the
 *                        top that was overwritten marks it
 *
 * Measuring one call: d = board.stack_paint(); f(); peak = board.stack_used().
 * peak is the high-water mark from the top of the region, the figure to set
 * against the limit; peak - d is what f (with the interpreter frames it
 * needs) used below the caller.
 */
#include <stdint.h>

#include "py/runtime.h"
#include "py/stackctrl.h"

#include "board_stack.h"

extern uint32_t _sstack, _estack;

#define BOARD_STACK_PATTERN (0x5aa5c33cu)
// Left alone below the current SP while painting: the painter's own frame
// and whatever an interrupt might push.
#define BOARD_PAINT_GUARD (256u)

static inline uintptr_t board_sp(void) {
    uintptr_t sp;
    __asm volatile ("mov %0, sp" : "=r" (sp));
    return sp;
}

static size_t board_paint_below(uintptr_t sp) {
    volatile uint32_t *p = &_sstack;
    volatile uint32_t *end = (volatile uint32_t *)((sp - BOARD_PAINT_GUARD) & ~(uintptr_t)3);
    while (p < end) {
        *p++ = BOARD_STACK_PATTERN;
    }
    return (uintptr_t)&_estack - sp;
}

void board_stack_boot(void) {
    // The limit register at the bottom of the region: SP below it is a
    // UsageFault (STKOF), reported by the board's fault handler, which
    // runs in the reserve below _sstack.
    uint32_t limit = (uint32_t)&_sstack;
    __asm volatile ("msr msplim, %0\n isb" : : "r" (limit) : "memory");
    (void)board_paint_below(board_sp());
}

void board_stack_vm_init(void) {
    // main.c set its own top (mp_stack_ctrl_init() in main()) and a limit
    // of 10 KiB; the board counts from the top of the region, as a
    // FreeRTOS task's limit counts from its stack's top.
    size_t size = (size_t)((uintptr_t)&_estack - (uintptr_t)&_sstack);
    mp_stack_set_top(&_estack);
    mp_stack_set_limit((mp_uint_t)((mp_int_t)size - BOARD_STACK_LIMIT_GAP));
}

static mp_obj_t board_stack_size(void) {
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - (uintptr_t)&_sstack);
}
MP_DEFINE_CONST_FUN_OBJ_0(board_stack_size_obj, board_stack_size);

static mp_obj_t board_stack_limit(void) {
    return mp_obj_new_int_from_uint(MP_STATE_THREAD(stack_limit));
}
MP_DEFINE_CONST_FUN_OBJ_0(board_stack_limit_obj, board_stack_limit);

static mp_obj_t board_stack_depth(void) {
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - board_sp());
}
MP_DEFINE_CONST_FUN_OBJ_0(board_stack_depth_obj, board_stack_depth);

static mp_obj_t board_stack_paint(void) {
    return MP_OBJ_NEW_SMALL_INT(board_paint_below(board_sp()));
}
MP_DEFINE_CONST_FUN_OBJ_0(board_stack_paint_obj, board_stack_paint);

static mp_obj_t board_stack_used(void) {
    const volatile uint32_t *p = &_sstack;
    const volatile uint32_t *top = &_estack;
    while (p < top && *p == BOARD_STACK_PATTERN) {
        p++;
    }
    return MP_OBJ_NEW_SMALL_INT((uintptr_t)&_estack - (uintptr_t)p);
}
MP_DEFINE_CONST_FUN_OBJ_0(board_stack_used_obj, board_stack_used);
