/*
 * modboard.c — the `board` module of the MPS2_AN505 qemu board.
 *
 *   board.ramdisk()      bytearray over the RAM-disk region of the linker
 *                        script (outside the GC heap and .bss: zero at
 *                        power-on, kept across soft resets). A Python block
 *                        device on it holds a LittleFS that survives
 *                        machine.soft_reset() / Ctrl-D.
 *   board.FLASH_BLOCK_SIZE, FLASH_PROG_SIZE, FLASH_READ_SIZE
 *                        the geometry of the BENTO board's QSPI flash as
 *                        its firmware mounts it at "/" (VENDOR-SDK.md §5):
 *                        256 KiB erase blocks,
 *                        VfsLfs2(bdev, progsize=0x200, readsize=0x200)
 *   board.stack_size(), stack_limit(), stack_depth(), stack_paint(),
 *   stack_used()         the stack of the MicroPython task and its
 *                        painting (../common/board_stack.c)
 *
 * TACP is on the console (board_tacp.c), not a function of this module.
 *
 * The serial bridge's test harness (docs/EMULATOR.md):
 *   board.link_call(type, payload, timeout_ms, answer_max)
 *                        send one frame of `type` to the bridge and return
 *                        the payload of its answer as bytes, or None when no
 *                        valid answer (at most answer_max bytes) came in
 *                        time; answer_max=0 sends without waiting (b"")
 */
#include <stdint.h>
#include <string.h>

#include "py/obj.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "board_stack.h"

#include "board.h"
#include "serial_link.h"

extern uint32_t _ramdisk_start, _ramdisk_end;

static mp_obj_t board_ramdisk(void) {
    size_t len = (size_t)((uintptr_t)&_ramdisk_end - (uintptr_t)&_ramdisk_start);
    return mp_obj_new_bytearray_by_ref(len, &_ramdisk_start);
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_ramdisk_obj, board_ramdisk);

/* --- the serial bridge's harness requests ------------------------------------ */

static mp_obj_t board_link_call(size_t n_args, const mp_obj_t *args) {
    mp_int_t type = mp_obj_get_int(args[0]);
    mp_buffer_info_t payload;
    mp_get_buffer_raise(args[1], &payload, MP_BUFFER_READ);
    mp_int_t timeout = mp_obj_get_int(args[2]);
    mp_int_t answer_max = mp_obj_get_int(args[3]);
    if (type < LINK_HOST_HTTP || type >= LINK_ANSWER || timeout < 0 || answer_max < 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("bad link_call argument"));
    }
    uint32_t deadline = board_ms() + (uint32_t)timeout;
    uint16_t id = link_new_id();
    link_part_t part = { payload.buf, payload.len };
    link_drain();
    if (!link_send((uint8_t)type, id, &part, 1, deadline)) {
        return mp_const_none;
    }
    if (answer_max == 0) {
        return mp_const_empty_bytes;
    }
    // Sized by the answer's header; a MemoryError here leaves the rest of
    // the frame on the line, which the next exchange skips (another id).
    link_rx_t rx;
    int32_t n = link_rx_begin(&rx, (uint8_t)(type | LINK_ANSWER), id, deadline);
    if (n < 0 || n > answer_max) {
        return mp_const_none;
    }
    vstr_t ans;
    vstr_init_len(&ans, (size_t)n);
    if (!link_rx_read(&rx, (uint8_t *)ans.buf, (size_t)n) || !link_rx_end(&rx)) {
        vstr_clear(&ans);
        return mp_const_none;
    }
    return mp_obj_new_bytes_from_vstr(&ans);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(board_link_call_obj, 4, 4, board_link_call);

static const mp_rom_map_elem_t board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_board) },
    { MP_ROM_QSTR(MP_QSTR_ramdisk), MP_ROM_PTR(&board_ramdisk_obj) },
    { MP_ROM_QSTR(MP_QSTR_FLASH_BLOCK_SIZE), MP_ROM_INT(256 * 1024) },
    { MP_ROM_QSTR(MP_QSTR_FLASH_PROG_SIZE), MP_ROM_INT(512) },
    { MP_ROM_QSTR(MP_QSTR_FLASH_READ_SIZE), MP_ROM_INT(512) },
    BOARD_STACK_MODULE_ENTRIES,
    { MP_ROM_QSTR(MP_QSTR_link_call), MP_ROM_PTR(&board_link_call_obj) },
};
static MP_DEFINE_CONST_DICT(board_module_globals, board_module_globals_table);

const mp_obj_module_t board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_board, board_module);
