/*
 * image.c — a no-OS Cortex-M55 image that links every claw_* function of
 * libbentoclaw.a, for the panic-reachability and size checks of
 * scripts/size_report.sh. It is linked, never run: the claw_port_* stubs
 * below only return errors.
 *
 * bentoclaw_panic_is_reachable is deliberately NOT defined anywhere: the
 * library's panic handler (cargo feature panic-check) calls it, so this image
 * links only when --gc-sections removed every path to a panic.
 */
#include "claw_port.h"
#include "claw_safety.h"
#include "claw_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STUB_EIO (-5)

/* ---- port stubs ---------------------------------------------------------- */

static volatile uint32_t s_ticks;

uint32_t claw_port_ticks_ms(void) { return s_ticks; }

static volatile bool s_on_task = true;

bool claw_port_on_vm_task(void) { return s_on_task; }

int32_t claw_port_open(const char *path, uint8_t mode)
{
    (void)path;
    (void)mode;
    return STUB_EIO;
}

int32_t claw_port_read(int32_t fd, uint8_t *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    return STUB_EIO;
}

int32_t claw_port_write(int32_t fd, const uint8_t *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    return STUB_EIO;
}

int32_t claw_port_close(int32_t fd)
{
    (void)fd;
    return STUB_EIO;
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

/* ---- every claw_* function, reached from the reset handler ---------------- */

/* volatile inputs/outputs: nothing can be constant-folded away. */
static volatile uint8_t v_u8;
static volatile uint16_t v_u16;
static volatile size_t v_size;
static volatile uint32_t v_sink;
static char s_buf[512];
static const char *volatile v_text = "hello";

void Reset_Handler(void);
void Default_Handler(void);

static void use_all(void)
{
    claw_rate_init();
    claw_cb_init();
    claw_session_init();
    claw_rate_set(v_text, v_u16);
    v_sink += claw_session_add(v_u8, v_text);
    v_sink += claw_session_count();
    v_sink += claw_session_dirty();
    v_sink += claw_session_flush();
    v_sink += (uint32_t)claw_session_build_context(s_buf, v_size);
    v_sink += claw_memory_set(v_text, v_text);
    v_sink += claw_memory_get(v_text, s_buf, v_size);
    claw_session_clear();
    v_sink += claw_cb_allow();
    claw_cb_success();
    claw_cb_failure();
    v_sink += claw_cb_state();
    v_sink += claw_cb_cooldown_remaining();
    v_sink += claw_rate_check(v_text);
    claw_rate_record(v_text);
    claw_trust_set(v_u8);
    v_sink += claw_trust_get();
    v_sink += claw_trust_allows(v_u8);
}

/* The same 22 functions as a table, so that taking their addresses (as a
 * binding's dispatch table might) is covered too. */
__attribute__((used)) static const void *const s_claw_table[22] = {
    (const void *)claw_session_init,       (const void *)claw_session_add,
    (const void *)claw_session_count,      (const void *)claw_session_clear,
    (const void *)claw_session_build_context, (const void *)claw_memory_set,
    (const void *)claw_memory_get,         (const void *)claw_session_dirty,
    (const void *)claw_session_flush,      (const void *)claw_cb_init,
    (const void *)claw_cb_allow,           (const void *)claw_cb_success,
    (const void *)claw_cb_failure,         (const void *)claw_cb_state,
    (const void *)claw_cb_cooldown_remaining, (const void *)claw_rate_init,
    (const void *)claw_rate_check,         (const void *)claw_rate_record,
    (const void *)claw_rate_set,           (const void *)claw_trust_set,
    (const void *)claw_trust_get,          (const void *)claw_trust_allows,
};

#ifdef BENTOCLAW_EXT
/* Built with the `recall` feature: its four additions (claw_ext.h) too. */
#include "claw_ext.h"
__attribute__((used)) static const void *const s_claw_ext_table[4] = {
    (const void *)claw_memory_forget, (const void *)claw_memory_pin,
    (const void *)claw_memory_search, (const void *)claw_memory_at,
};
#endif

extern uint32_t __stack_top;

__attribute__((section(".isr_vector"), used)) const void *const g_vectors[16] = {
    &__stack_top,     Reset_Handler,    Default_Handler, Default_Handler,
    Default_Handler,  Default_Handler,  Default_Handler, 0,
    0,                0,                0,               Default_Handler,
    Default_Handler,  0,                Default_Handler, Default_Handler,
};

void Default_Handler(void)
{
    for (;;) {
    }
}

void Reset_Handler(void)
{
    use_all();
    v_sink += (uint32_t)(uintptr_t)s_claw_table[v_u8 % 22];
    for (;;) {
    }
}
