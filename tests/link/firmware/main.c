/* Stand-in for the MTB-compiled part of proj_cm33_ns (main.c, the drivers,
 * the UI and sensor tasks; ModusToolbox compiles them softfp:
 * -mcpu=cortex-m33 -mthumb -mfloat-abi=softfp -mfpu=fpv5-sp-d16): the reset
 * path into the MicroPython task, the CM55 button's ISR, the protected
 * update's model check, and the C symbols the archive's members need.
 * Linked by scripts/test_link.sh, never run. */
#include "standin.h"

void mp_task(void);
void Reset_Handler(void);
void Default_Handler(void);
void IPC_IRQHandler(void);

uint8_t DEBUG_UART_hal_obj[64];
static volatile uint32_t s_tick;
static volatile float s_temperature = 21.5f; /* the FPU in use: softfp */

void ui_show_deploy_screen(void) { s_tick++; }

void ui_notify_ide_connected(void) { s_tick++; }

bool sensor_auto_is_delete_pending(void) { return (s_tick & 1u) != 0; }

bool sensor_auto_is_restart_pending(void) { return (s_tick & 2u) != 0; }

const char *tesaiot_config_get(const char *key) { return s_tick ? key : NULL; }

int tesaiot_run_protected_update_isolated_test(void) { return (int)(s_temperature * 2.0f); }

int cy_http_client_init(void) { return 0; }

int cy_http_client_create(void *socket, void *server, void *send_cb, void *event_cb, void **handle)
{
    (void)socket;
    (void)server;
    (void)send_cb;
    (void)event_cb;
    *handle = DEBUG_UART_hal_obj;
    return 0;
}

int cy_http_client_connect(void *handle, uint32_t send_timeout, uint32_t recv_timeout)
{
    (void)handle;
    return (int)(send_timeout - recv_timeout);
}

int cy_http_client_write_header(void *handle, void *request, void *header, uint32_t count)
{
    (void)handle;
    (void)request;
    (void)header;
    return (int)count;
}

int cy_http_client_send(void *handle, void *request, const uint8_t *payload, uint32_t len, void *response)
{
    (void)handle;
    (void)request;
    (void)payload;
    ((char *)response)[0] = '\0';
    return (int)len;
}

int cy_http_client_disconnect(void *handle) { return handle == NULL; }

int cy_http_client_delete(void *handle) { return handle == NULL; }

int optiga_crypt_hash(void *me, uint8_t hash_algorithm, uint8_t source_of_data_to_hash, const void *data,
                      uint8_t *hash_output)
{
    (void)me;
    (void)data;
    hash_output[0] = (uint8_t)(hash_algorithm + source_of_data_to_hash);
    return 0;
}

void optiga_manager_lock(void) { s_tick++; }

void optiga_manager_unlock(void) { s_tick--; }

int Cy_IPC_Pipe_SendMessage(uint32_t to, uint32_t from, void *msg, void *cb)
{
    (void)msg;
    (void)cb;
    return (int)(to - from);
}

int Cy_IPC_Pipe_RegisterCallback(uint32_t ep, void *cb, uint32_t client)
{
    (void)cb;
    return (int)(ep + client);
}

bool mtb_hal_uart_readable(void *uart) { return ((volatile uint8_t *)uart)[0] != 0; }

uint32_t xTaskGetTickCount(void) { return s_tick; }

void vTaskDelay(uint32_t ticks) { s_tick += ticks; }

/* FreeRTOS: the running task (one here: main.c's "MicroPython"). */
#include "task.h"
static struct tskTaskControlBlock {
    char name[16];
} s_tcb = { "MicroPython" };
TaskHandle_t xTaskGetCurrentTaskHandle(void) { return &s_tcb; }
char *pcTaskGetName(TaskHandle_t t) { return t->name; }

/* tesaiot_pu_ingest.c: a staged model is checked before it is applied. */
static bool pu_ingest(const uint8_t *model, size_t len) { return optiga_verify_staged_model(model, len); }

/* The CM55's "Delete main.py" button arrives as an IPC interrupt. */
void IPC_IRQHandler(void) { tacp_request_delete_main_from_isr(); }

extern uint32_t __stack_top;

__attribute__((section(".isr_vector"), used)) const void *const g_vectors[20] = {
    &__stack_top,    Reset_Handler,   Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, 0,               0,               0,
    0,               Default_Handler, Default_Handler, 0,               Default_Handler,
    Default_Handler, IPC_IRQHandler,  Default_Handler, Default_Handler, Default_Handler,
};

void Default_Handler(void)
{
    for (;;) {
    }
}

void Reset_Handler(void)
{
    (void)pu_ingest(DEBUG_UART_hal_obj, sizeof DEBUG_UART_hal_obj);
    mp_task();
    for (;;) {
    }
}
