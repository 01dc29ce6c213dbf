/* Stand-in for FreeRTOS.h: just what mpy/claw_vm_task.h uses, so that the
 * link test compiles its FreeRTOS branch (the BENTO firmware's). */
#ifndef STANDIN_FREERTOS_H
#define STANDIN_FREERTOS_H
#include <stddef.h>
#endif
