/*
 * claw_port_vfs.h — binding-side controls of the VFS bridge (claw_port_vfs.c).
 */
#ifndef BENTOCLAW_CLAW_PORT_VFS_H
#define BENTOCLAW_CLAW_PORT_VFS_H

#include <stdbool.h>

// Forget the open-file objects of a previous VM (call on the first import
// after a soft reset, before the core can open anything).
void claw_port_vfs_reset(void);

// True while a port callback is running, i.e. while the core is inside a
// call and has handed control to MicroPython's VFS. Python code reached from
// there (a block device written in Python) must not call back into the
// core: the binding refuses such re-entrant calls.
bool claw_port_vfs_busy(void);

#endif // BENTOCLAW_CLAW_PORT_VFS_H
