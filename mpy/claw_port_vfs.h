// claw_port_vfs.h — the binding's controls of the VFS bridge (claw_port_vfs.c,
// its rules 3 and 4).
#ifndef BENTOCLAW_CLAW_PORT_VFS_H
#define BENTOCLAW_CLAW_PORT_VFS_H

#include "py/obj.h"

// Forget the open files and the pending exception of a previous VM (on the
// first import after a soft reset). Refuses (false) while a port callback
// runs: the same VM then, whose Python code re-imported the module.
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

#endif // BENTOCLAW_CLAW_PORT_VFS_H
