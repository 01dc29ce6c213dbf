/*
 * claw_port_agent.c — the agent's ports of include/claw_port.h over
 * MicroPython: running a registered Python tool, the backend transport and
 * the UI panel (claw_transport.h), and the wall clock. Like the file port
 * (claw_port_vfs.c) each returns normally: a MicroPython exception is caught
 * here (nlr_push) and becomes a code, never a longjmp through a Rust frame.
 * A tool may call back into the module: the core holds no state borrowed
 * across the call.
 */
#include <string.h>

#include "py/mphal.h"
#include "py/runtime.h"
#include "shared/timeutils/timeutils.h"

#include "claw_port.h"
#include "claw_safety.h"
#include "claw_transport.h"
#include "bentoclaw.h"

/* --- Running a Python tool --- */

// A print sink that keeps the first `max` bytes (the core cuts them on a
// character boundary), so the text of a large result never takes heap.
typedef struct _capped_t {
    uint8_t *out;
    size_t max, len;
} capped_t;

static void capped_print(void *data, const char *str, size_t len) {
    capped_t *c = data;
    len = len < c->max - c->len ? len : c->max - c->len;
    memcpy(c->out + c->len, str, len);
    c->len += len;
}

// The text of `obj` (str as it is, anything else its repr), or of its type
// when that raises: the tool ran, so a result is always reported.
static size_t text_of(mp_obj_t obj, bool as_str, uint8_t *out, size_t max) {
    capped_t c = { out, max, 0 };
    mp_print_t print = { &c, capped_print };
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_print_helper(&print, obj, as_str || mp_obj_is_str(obj) ? PRINT_STR : PRINT_REPR);
        nlr_pop();
    } else {
        // A KeyboardInterrupt or SystemExit is not swallowed: everything
        // stops (claw_port_aborted) and it is raised once the core returned.
        (void)claw_port_vfs_keep(MP_OBJ_FROM_PTR(nlr.ret_val));
        c.len = 0;
        mp_printf(&print, "<%q object>", (qstr)mp_obj_get_type(obj)->name);
    }
    if (c.len == 0 && !mp_obj_is_str(obj) && as_str) {
        // An exception with no message: its type's name.
        mp_printf(&print, "%q", (qstr)mp_obj_get_type(obj)->name);
    }
    return c.len;
}

uint8_t claw_port_tool(void *ctx_in, uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t arg_len,
    uint8_t *out, size_t out_max, size_t *out_len) {
    bentoclaw_ctx_t *ctx = ctx_in;
    *out_len = 0;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t handler = slot < CLAW_RATE_MAX_TOOLS ? BENTOCLAW_HANDLER(slot) : MP_OBJ_NULL;
        if (handler == MP_OBJ_NULL) {
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tool has no handler"));
        }
        mp_obj_t a = mp_const_none;
        if (arg_kind == CLAW_PORT_ARG_TEXT) {
            a = mp_obj_new_str((const char *)arg, arg_len);
        } else if (arg_kind == CLAW_PORT_ARG_CALLER && ctx != NULL) {
            a = ctx->arg;
        }
        mp_obj_t r = mp_call_function_1(handler, a);
        nlr_pop();
        if (ctx != NULL) {
            ctx->result = r;
        }
        *out_len = text_of(r, false, out, out_max);
        return CLAW_PORT_TOOL_RETURNED;
    }
    mp_obj_t exc = MP_OBJ_FROM_PTR(nlr.ret_val);
    bool failure = mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), MP_OBJ_FROM_PTR(&mp_type_Exception));
    if (ctx != NULL && (failure || ctx->exc == MP_OBJ_NULL)) {
        ctx->exc = exc;
    }
    if (!failure) {
        // KeyboardInterrupt/SystemExit: everything stops, then it is raised.
        return CLAW_PORT_TOOL_ABORT;
    }
    *out_len = text_of(exc, true, out, out_max);
    return CLAW_PORT_TOOL_RAISED;
}

bool claw_port_aborted(void) {
    return claw_port_vfs_pending();
}

/* --- Transport, UI, clock --- */

int32_t claw_port_post(const uint8_t *body, size_t body_len, uint8_t *reply, size_t reply_max) {
    // claw_https_post() NUL-terminates: it may use one byte more than it
    // reports.
    return reply_max == 0 ? -1 : claw_https_post((const char *)body, body_len, (char *)reply, reply_max - 1);
}

bool claw_port_connect(const char *host, uint16_t port, const char *api_key) {
    return claw_https_connect(host, port, api_key);
}

void claw_port_disconnect(void) {
    claw_https_disconnect();
}

bool claw_port_connected(void) {
    return claw_https_connected();
}

// The vendor transport may not report tokens: this default (weak, so the
// unix transport's definition wins) reports none.
MP_WEAK bool claw_https_last_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    *tokens_in = 0;
    *tokens_out = 0;
    return false;
}

void claw_port_tokens(uint32_t *tokens_in, uint32_t *tokens_out) {
    *tokens_in = 0;
    *tokens_out = 0;
    (void)claw_https_last_tokens(tokens_in, tokens_out);
}

void claw_port_ui_init(void) {
    claw_ipc_init();
}

void claw_port_ui(uint8_t event, const uint8_t *text, size_t len) {
    static const uint8_t types[] = {
        CLAW_UI_STATUS_TEXT, CLAW_UI_ERROR, CLAW_UI_LAST_RESULT, CLAW_UI_CLEAR,
        CLAW_UI_CHAT_USER, CLAW_UI_CHAT_ASSISTANT, CLAW_UI_TOOL, CLAW_UI_LED,
    };
    // The seed guards the panel's messages on the link being up.
    if (claw_ipc_initialized && event < MP_ARRAY_SIZE(types)) {
        claw_ipc_send_ui(types[event], (const char *)text, len);
    }
}

#if !BENTOCLAW_PORT_FIRMWARE
bool bentoclaw_clock_overridden;
uint32_t bentoclaw_clock_override;
#endif

uint32_t claw_port_time_s(void) {
    #if !BENTOCLAW_PORT_FIRMWARE
    if (bentoclaw_clock_overridden) {
        return bentoclaw_clock_override;
    }
    #endif
    #if defined(BENTOCLAW_RTC_SECONDS)
    // The firmware may name its own source: seconds since 1970, 0 if unset.
    return (uint32_t)(BENTOCLAW_RTC_SECONDS);
    #elif MICROPY_PY_TIME_TIME_TIME_NS
    // mp_hal_time_ns() counts from the port's epoch (1970 or 2000).
    uint64_t s = timeutils_nanoseconds_since_epoch_to_nanoseconds_since_1970(mp_hal_time_ns()) / 1000000000ULL;
    return s > UINT32_MAX ? 0 : (uint32_t)s;
    #else
    return 0; // no wall clock on this port
    #endif
}
