/*
 * bentoclaw.h — what the files of the binding share. modbentoclaw.c is the
 * module; claw_port_agent.c and claw_port_vfs.c implement the core's ports
 * (include/claw_port.h). Calls go one way: modbentoclaw.c ->
 * claw_port_agent.c -> claw_port_vfs.c.
 */
#ifndef BENTOCLAW_H
#define BENTOCLAW_H

#include "py/obj.h"

// What a call into the core hands to claw_port_tool() (as `ctx`): the
// caller's argument for a REPL tool() call, and what the tool left (its
// result, or an exception to raise once the core has returned). It lives on
// the C stack of the binding function, where the GC sees it.
typedef struct _bentoclaw_ctx_t {
    mp_obj_t arg, result, exc;
} bentoclaw_ctx_t;

// The registry of Python callables: the handler of tool slot `i` (below
// CLAW_RATE_MAX_TOOLS), or MP_OBJ_NULL. A root pointer of modbentoclaw.c.
#define BENTOCLAW_HANDLER(i) (MP_STATE_VM(bentoclaw_tool_handlers)[(i)])

#if !BENTOCLAW_PORT_FIRMWARE
// Unix test hook (bentoclaw._clock()): the RTC seconds claw_port_time_s()
// reports while overridden.
extern bool bentoclaw_clock_overridden;
extern uint32_t bentoclaw_clock_override;
#endif

/* --- the VFS bridge (claw_port_vfs.c; its rules 3 and 4) --- */

// Forget the open files and the pending exception of a previous VM (on the
// first import after a soft reset). Refuses (false) while a port callback
// runs: then this is the same VM, its files live (Python code reached from
// the callback re-imported the module after removing its marker).
bool claw_port_vfs_reset(void);
// True while a port callback runs: Python code reached from there (a block
// device written in Python) must not call back into the core.
bool claw_port_vfs_busy(void);
// True while a KeyboardInterrupt, SystemExit or GeneratorExit caught by a
// callback waits to be raised: every port call fails fast with -EIO.
bool claw_port_vfs_pending(void);
// True when `exc` is an Exception; otherwise keeps it as the pending one
// (the first wins) and returns false.
bool claw_port_vfs_keep(mp_obj_t exc);
// Raise the pending exception, if any, and clear it. The binding calls this
// right after every core call returns (never while the core runs).
void claw_port_vfs_raise_pending(void);

#endif // BENTOCLAW_H
