/* Stand-in for FreeRTOS's task.h (the two calls mpy/claw_vm_task.h makes);
 * tests/link/firmware/main.c defines them. */
#ifndef STANDIN_TASK_H
#define STANDIN_TASK_H
typedef struct tskTaskControlBlock *TaskHandle_t;
TaskHandle_t xTaskGetCurrentTaskHandle(void);
char *pcTaskGetName(TaskHandle_t xTaskToQuery);
#endif
