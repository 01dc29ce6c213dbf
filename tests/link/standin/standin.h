/*
 * standin.h — declarations shared by the stand-in of the vendor's
 * libbento_mpy.a (tests/link/standin/) and the stand-in firmware
 * (tests/link/firmware/) of scripts/test_link.sh.
 *
 * Names and signatures follow the SDK's headers and docs (VENDOR-SDK.md §6);
 * the bodies in these folders are our own stubs: the test links, it never
 * runs. Where the SDK publishes no signature (bento_link_ipc_query, the two
 * module objects) the one here is a guess; a C link does not check it.
 */
#ifndef BENTOCLAW_LINK_STANDIN_H
#define BENTOCLAW_LINK_STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- exported by the archive (26 besides the 22 claw_* functions) ------- */

/* claw_transport.o */
bool claw_https_connect(const char *host, uint16_t port, const char *api_key);
bool claw_http_connect_insecure(const char *host, uint16_t port);
bool claw_https_connected(void);
void claw_https_disconnect(void);
int claw_https_get(const char *path, char *resp, size_t resp_max);
int claw_https_post(const char *path, const char *json, size_t json_len, char *resp, size_t resp_max);

/* tacp.o */
void tacp_init(void);
bool tacp_poll_uart(void);
int tacp_ring_buf_read(void);
bool tacp_ring_buf_readable(void);
void tacp_request_delete_main_from_isr(void);
void tacp_claw_respond(uint8_t sub_cmd, const char *payload, uint16_t payload_len);

/* lfs_wifi_creds.o (entries: wifi_creds_types.h's qspi_wifi_entry_t) */
typedef struct {
    uint8_t bytes[100];
} standin_wifi_entry_t;
void lfs_wifi_creds_init(void);
void lfs_wifi_creds_deinit(void);
bool lfs_wifi_creds_ready(void);
int lfs_wifi_creds_read(standin_wifi_entry_t *entries, int max_entries);
bool lfs_wifi_creds_write(const standin_wifi_entry_t *entries, int count);
bool lfs_wifi_creds_needs_resave(void);

/* bento_link.o, bento_link_ipc.o */
typedef struct bento_link_s bento_link_t;
struct bento_link_s {
    const char *name;
    uint16_t mtu;
};
bool bento_link_register(bento_link_t *link);
bento_link_t *bento_link_get(const char *name);
bento_link_t *bento_link_at(uint32_t index);
bool bento_link_ipc_init(void);
bool bento_link_ipc_query(uint8_t cmd, uint32_t *value);

/* modoptiga.o, modedgeai.o: MicroPython module objects (mp_obj_module_t) */
typedef struct {
    const void *base_type;
    const void *globals;
} standin_module_t;
extern const standin_module_t mp_module_optiga;
extern const standin_module_t mp_module_edge_ai;
bool optiga_verify_staged_model(const uint8_t *model, size_t len); /* weak */

/* ---- provided by the consumer (consumer_must_provide.txt) --------------- */

/* the binding (modbentoclaw.c) */
void bentoclaw_tacp_dispatch(uint8_t sub_cmd, const char *payload, uint16_t payload_len);
/* mpy_main.c */
extern volatile bool g_is_safe_boot;
void mpy_request_safe_boot_once(void);
void mpy_request_delete_main_py(void);
/* the rest of the firmware */
void ui_show_deploy_screen(void);
void ui_notify_ide_connected(void);
bool sensor_auto_is_delete_pending(void);
bool sensor_auto_is_restart_pending(void);
void wifi_creds_flush_if_dirty(void);
const char *tesaiot_config_get(const char *key);
int tesaiot_run_protected_update_isolated_test(void);
int cy_http_client_init(void);
int cy_http_client_create(void *socket, void *server, void *send_cb, void *event_cb, void **handle);
int cy_http_client_connect(void *handle, uint32_t send_timeout, uint32_t recv_timeout);
int cy_http_client_write_header(void *handle, void *request, void *header, uint32_t count);
int cy_http_client_send(void *handle, void *request, const uint8_t *payload, uint32_t len, void *response);
int cy_http_client_disconnect(void *handle);
int cy_http_client_delete(void *handle);
int optiga_crypt_hash(void *me, uint8_t hash_algorithm, uint8_t source_of_data_to_hash, const void *data,
                      uint8_t *hash_output);
void optiga_manager_lock(void);
void optiga_manager_unlock(void);
int Cy_IPC_Pipe_SendMessage(uint32_t to, uint32_t from, void *msg, void *cb);
int Cy_IPC_Pipe_RegisterCallback(uint32_t ep, void *cb, uint32_t client);
bool mtb_hal_uart_readable(void *uart);
extern uint8_t DEBUG_UART_hal_obj[];
uint32_t xTaskGetTickCount(void);
void vTaskDelay(uint32_t ticks);
/* the MicroPython runtime (a few of the ~60 it needs) */
uint32_t mp_hal_ticks_ms(void);
void mp_sched_keyboard_interrupt(void);
void gc_collect(void);
void *m_malloc(size_t n);
void m_free(void *p);
void *mp_vfs_open(size_t n_args, const void *args, void *kw_args);
int mp_stream_rw(void *stream, void *buf, size_t size, int *errcode, uint8_t flags);
void *mp_stream_close(void *stream);
void *mp_compile(void *parse_tree, uint16_t source_file, bool is_repl);
void *mp_obj_new_int(intptr_t value);
extern int mp_interrupt_char;

#endif
