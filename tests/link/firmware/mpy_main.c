/* Stand-in for what libmicropython.a brings besides the binding (built with
 * its flags, -msoft-float): mpy_main.c's boot and REPL loop, the qstr shim's
 * module registrations (bento_archived_qstrs.c), the DEEPCraft model link,
 * the watch face's plain-HTTP fetch, and a few runtime functions the
 * archive's members call. Linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include "claw_session.h"

void bentoclaw_send_ready(void);

volatile bool g_is_safe_boot;
int mp_interrupt_char = 3;
static volatile uint32_t s_flags;
static standin_wifi_entry_t s_entries[6];
static bento_link_t s_usb = { "usb", 32 };

void mpy_request_safe_boot_once(void) { s_flags |= 1u; }

void mpy_request_delete_main_py(void) { s_flags |= 2u; }

void wifi_creds_flush_if_dirty(void)
{
    if (lfs_wifi_creds_needs_resave()) {
        (void)lfs_wifi_creds_write(s_entries, 1);
    }
}

/* bento_archived_qstrs.c: MP_REGISTER_MODULE of optiga and edge_ai. */
__attribute__((used)) const standin_module_t *const g_standin_builtin_modules[] = {
    &mp_module_optiga,
    &mp_module_edge_ai,
};

static void model_link(void)
{
    uint32_t value = 0;
    if (bento_link_ipc_init() && bento_link_register(&s_usb) && bento_link_ipc_query(1, &value)) {
        s_flags += (bento_link_at(0) != NULL) + (bento_link_get("ipc") != NULL);
    }
}

static void weather(void)
{
    char body[64];
    if (claw_http_connect_insecure("weather.invalid", 80)) {
        (void)claw_https_get("/now", body, sizeof body);
    }
}

void mp_task(void)
{
    for (int boot = 0; boot < 2; boot++) {
        tacp_init();
        lfs_wifi_creds_init();
        if (lfs_wifi_creds_ready()) {
            (void)lfs_wifi_creds_read(s_entries, 6);
        }
        model_link();
        weather();
        bentoclaw_send_ready();
        while (!(s_flags & 3u)) {
            if (tacp_poll_uart()) {
                continue;
            }
            while (tacp_ring_buf_readable()) {
                s_flags += (uint32_t)tacp_ring_buf_read();
            }
            /* The REPL's idle point: the credentials' flush, and beside it
             * the session's (the vendor's binding never flushes). */
            wifi_creds_flush_if_dirty();
            (void)claw_session_flush();
        }
        lfs_wifi_creds_deinit();
    }
}

/* ---- the runtime functions the stand-in's members call ------------------ */

uint32_t mp_hal_ticks_ms(void) { return s_flags; }

void mp_sched_keyboard_interrupt(void) { s_flags |= 4u; }

void gc_collect(void) {}

void *m_malloc(size_t n) { return n ? (void *)&s_entries[0] : NULL; }

void m_free(void *p) { (void)p; }

void *mp_vfs_open(size_t n_args, const void *args, void *kw_args)
{
    (void)args;
    (void)kw_args;
    return n_args ? (void *)&s_entries[1] : NULL;
}

int mp_stream_rw(void *stream, void *buf, size_t size, int *errcode, uint8_t flags)
{
    (void)stream;
    (void)buf;
    (void)flags;
    *errcode = 0;
    return (int)size;
}

void *mp_stream_close(void *stream) { return stream; }

void *mp_obj_new_int(intptr_t value) { return (void *)value; }

/* Needed only by the vendor's claw_session.o (its flush runs MicroPython
 * source): provided as the real runtime does, so that a link that extracts
 * that member succeeds and only the checks of scripts/test_link.sh tell. */
void *mp_compile(void *parse_tree, uint16_t source_file, bool is_repl)
{
    (void)source_file;
    return is_repl ? NULL : parse_tree;
}
