/*
 * bentoclaw.h — what the two files of the binding share.
 *
 * modbentoclaw.c is the module: argument conversion, exceptions, the module
 * table and the registry of Python callables. claw_port_agent.c implements
 * the agent's ports of include/claw_port.h (running a Python tool, the
 * transport, the UI, the clock). claw_port_vfs.c implements the file port.
 * Every behaviour is the Rust core's (include/claw_ext.h); nothing here
 * decides what the agent does.
 */
#ifndef BENTOCLAW_H
#define BENTOCLAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"

// What a call into the core hands to claw_port_tool() (as `ctx`): the
// caller's own argument for a REPL tool() call, and what the tool left —
// its result, or an exception to raise once the core has returned. It lives
// on the C stack of the binding function, where the GC sees it.
typedef struct _bentoclaw_ctx_t {
    mp_obj_t arg;
    mp_obj_t result;
    mp_obj_t exc;
} bentoclaw_ctx_t;

// The handler registered in registry slot `slot` (0..15), or MP_OBJ_NULL.
mp_obj_t bentoclaw_handler(uint8_t slot);

#if !BENTOCLAW_PORT_FIRMWARE
// Test hook of the unix port: the RTC seconds claw_port_time_s() reports
// while overridden (bentoclaw._clock()).
extern bool bentoclaw_clock_overridden;
extern uint32_t bentoclaw_clock_override;
#endif

#endif // BENTOCLAW_H
