/*
 * claw_vm_task.h — whether the caller is the MicroPython task (claw_port_vfs.c
 * rule 6). No MicroPython header: the ARM link test compiles the FreeRTOS
 * branch against stub headers (tests/link/firmware/freertos/).
 *  - FreeRTOS (BENTO; FreeRTOS.h on the include path): the task named
 *    BENTOCLAW_VM_TASK_NAME (main.c's "MicroPython"), in thread mode;
 *  - POSIX (the unix port): the process's first thread;
 *  - bare metal (the emulated boards define BENTOCLAW_VM_TASK_BARE_METAL):
 *    thread mode, not an interrupt handler.
 * Anything else is a build error: a guess would let every task in.
 */
#ifndef BENTOCLAW_CLAW_VM_TASK_H
#define BENTOCLAW_CLAW_VM_TASK_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define bentoclaw_thread_mode() __extension__ ({ uint32_t v; __asm volatile ("mrs %0, ipsr" : "=r" (v)); v == 0; })
#if defined(__has_include) && __has_include("FreeRTOS.h")
#include "FreeRTOS.h"
#include "task.h"
#ifndef BENTOCLAW_VM_TASK_NAME
#define BENTOCLAW_VM_TASK_NAME "MicroPython"
#endif
static inline bool bentoclaw_vm_task(void) {
    static TaskHandle_t vm_task; // taken when it first asks
    TaskHandle_t me = bentoclaw_thread_mode() ? xTaskGetCurrentTaskHandle() : NULL;
    if (vm_task == NULL && me != NULL && strcmp(pcTaskGetName(me), BENTOCLAW_VM_TASK_NAME) == 0) {
        vm_task = me;
    }
    return me != NULL && me == vm_task;
}
#elif defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define BENTOCLAW_VM_TASK_POSIX (1)
extern pthread_t bentoclaw_vm_thread; // set by a constructor (claw_port_vfs.c)
#define bentoclaw_vm_task() (pthread_equal(pthread_self(), bentoclaw_vm_thread) != 0)
#elif defined(BENTOCLAW_VM_TASK_BARE_METAL)
#define bentoclaw_vm_task() bentoclaw_thread_mode()
#else
#error "claw_vm_task.h: how to tell the MicroPython task? (FreeRTOS.h, POSIX, or BENTOCLAW_VM_TASK_BARE_METAL)"
#endif
#endif
