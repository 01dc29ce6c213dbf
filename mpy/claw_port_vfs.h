// claw_port_vfs.h — the binding's controls of the VFS bridge (claw_port_vfs.c,
// its rules 3 and 4).
#ifndef BENTOCLAW_CLAW_PORT_VFS_H
#define BENTOCLAW_CLAW_PORT_VFS_H

#include "py/obj.h"

// True while a port callback runs: Python code reached from there (a block
// device written in Python) must not call back into the core.
bool claw_port_vfs_busy(void);
// True when `exc` is an Exception; otherwise hands it to the VM to raise at
// its next check (the first wins) and returns false.
bool claw_port_vfs_keep(mp_obj_t exc);
// Raise the pending exception now, if any (else the VM does at its next
// check). The binding calls this right after every core call returns.
void claw_port_vfs_raise_pending(void);

#endif // BENTOCLAW_CLAW_PORT_VFS_H
