/* Stand-in for mpy/claw_port_vfs.c, bentoclaw's file port (include/
 * claw_port.h), which the firmware compiles into libmicropython.a beside the
 * vendor's binding (flags: -msoft-float). Linked by scripts/test_link.sh,
 * never run. */
#include "claw_port.h"

#include "standin.h"

#define STUB_EIO (-5)

uint32_t claw_port_ticks_ms(void) { return mp_hal_ticks_ms(); }

int32_t claw_port_open(const char *path, uint8_t mode)
{
    return mp_vfs_open(mode, path, NULL) != NULL ? 3 : STUB_EIO;
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len)
{
    int err = 0;
    (void)fd;
    return mp_stream_rw(NULL, buf, len, &err, 0);
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len)
{
    int err = 0;
    (void)fd;
    return mp_stream_rw(NULL, (void *)buf, len, &err, 1);
}

int32_t claw_port_close(int32_t fd)
{
    (void)fd;
    return mp_stream_close(NULL) == NULL ? 0 : STUB_EIO;
}

int32_t claw_port_remove(const char *path)
{
    (void)path;
    return STUB_EIO;
}

int32_t claw_port_rename(const char *from, const char *to)
{
    (void)from;
    (void)to;
    return STUB_EIO;
}

uint8_t claw_port_atomic_write(const char *path)
{
    (void)path;
    return 0;
}

/* The firmware's answer, as mpy/claw_port_vfs.c gives it: the FreeRTOS
 * branch of mpy/claw_vm_task.h (the task named "MicroPython", in thread
 * mode), compiled here against the stand-in headers of freertos/. */
#include "claw_vm_task.h"

bool claw_port_on_vm_task(void) { return bentoclaw_vm_task(); }
