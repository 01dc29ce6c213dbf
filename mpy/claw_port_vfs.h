/*
 * claw_port_vfs.h — binding-side controls of the VFS bridge (claw_port_vfs.c).
 */
#ifndef BENTOCLAW_CLAW_PORT_VFS_H
#define BENTOCLAW_CLAW_PORT_VFS_H

#include <stdbool.h>

// Forget the open-file objects and the pending exception of a previous VM
// (call on the first import after a soft reset, before the core can open
// anything). Refuses, and returns false, while a port callback is running:
// then this is the same VM (Python code reached from a callback re-imported
// the module after removing its marker) and the callback's files are live.
// Returns true when it reset.
bool claw_port_vfs_reset(void);

// True while a port callback is running, i.e. while the core is inside a
// call and has handed control to MicroPython's VFS. Python code reached from
// there (a block device written in Python) must not call back into the
// core: the binding refuses such re-entrant calls.
bool claw_port_vfs_busy(void);

// True when a port callback caught a KeyboardInterrupt, SystemExit or
// GeneratorExit (a BaseException that is not an Exception). Until it is
// raised, every port call fails fast with -EIO without running Python code.
bool claw_port_vfs_pending(void);

// Raise the pending exception, if any, and clear it; returns normally when
// there is none. The binding calls this right after every core call returns
// (never while the core is running: it longjmps).
void claw_port_vfs_raise_pending(void);

#endif // BENTOCLAW_CLAW_PORT_VFS_H
