/*
 * agent_ports.c — the agent's claw_port_* callbacks as stubs, for the
 * minimal image built with the `agent` feature (scripts/size_report.sh): it
 * references every export of claw_ext.h, so the no-panic link check covers
 * the feature set the MicroPython module ships.
 */
#include "claw_port.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static volatile uint32_t v_port;

uint8_t claw_port_tool(void *ctx, uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t arg_len,
                       uint8_t *out, size_t out_max, size_t *out_len)
{
    (void)ctx;
    (void)slot;
    (void)arg_kind;
    (void)arg;
    (void)arg_len;
    (void)out;
    (void)out_max;
    *out_len = 0;
    return (uint8_t)v_port;
}

bool claw_port_confirm_hold(uint8_t slot, uint8_t arg_kind, const uint8_t *arg, size_t len)
{
    (void)slot;
    (void)arg_kind;
    (void)arg;
    (void)len;
    return v_port != 0;
}

size_t claw_port_tool_desc(uint8_t slot, uint8_t *out, size_t out_max)
{
    (void)slot;
    (void)out;
    (void)out_max;
    return 0;
}

int32_t claw_port_post(const uint8_t *body, size_t body_len, uint8_t *reply, size_t reply_max)
{
    (void)body;
    (void)body_len;
    (void)reply;
    (void)reply_max;
    return -(int32_t)v_port;
}

bool claw_port_connect(const char *host, uint16_t port, const char *api_key)
{
    (void)host;
    (void)port;
    (void)api_key;
    return v_port != 0;
}

void claw_port_disconnect(void) {}

bool claw_port_connected(void) { return v_port != 0; }

void claw_port_tokens(uint32_t *tokens_in, uint32_t *tokens_out)
{
    *tokens_in = v_port;
    *tokens_out = v_port;
}

uint32_t claw_port_time_s(void) { return v_port; }

void claw_port_ui_init(void) {}

void claw_port_ui(uint8_t event, const uint8_t *text, size_t len)
{
    (void)event;
    (void)text;
    (void)len;
}

void claw_port_tacp_respond(uint8_t sub, const uint8_t *payload, size_t len)
{
    (void)sub;
    (void)payload;
    (void)len;
}

bool claw_port_aborted(void) { return v_port != 0; }
