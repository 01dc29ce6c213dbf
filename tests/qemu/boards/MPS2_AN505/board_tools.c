/*
 * board_tools.c — the emulated M33 board's hardware tools, registered the
 * way a BENTO firmware registers its own: one const table handed to
 * claw_tools_register() (include/claw_ext.h) at boot. gpio_set and
 * gpio_read drive the two user LEDs of the MPS2 FPGA (FPGAIO LED register,
 * Secure alias), with the vendor's arguments and answers (VENDOR-SDK.md
 * §4.1): "led1 on" or {"pin":"led1","value":1|"on"}.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "claw_ext.h"

#define FPGAIO_LED (*(volatile uint32_t *)0x50302000UL)

static const char *const s_leds[] = { "led1", "led2" };

// The LED a name means, or -1.
static int led_index(const char *name, size_t n) {
    for (int i = 0; i < 2; i++) {
        if (strlen(s_leds[i]) == n && memcmp(s_leds[i], name, n) == 0) {
            return i;
        }
    }
    return -1;
}

// In a JSON object `args`, the start and length of the value of `key` (a
// string's contents without its quotes, or a bare word).
static bool json_field(const char *args, size_t len, const char *key, const char **v, size_t *vn) {
    char needle[16];
    int k = snprintf(needle, sizeof(needle), "\"%s\":", key);
    for (size_t i = 0; k > 0 && i + (size_t)k <= len; i++) {
        if (memcmp(args + i, needle, (size_t)k) == 0) {
            size_t j = i + (size_t)k;
            while (j < len && args[j] == ' ') {
                j++;
            }
            bool quoted = j < len && args[j] == '"';
            j += quoted;
            size_t e = j;
            while (e < len && (quoted ? args[e] != '"' : args[e] != ',' && args[e] != '}' && args[e] != ' ')) {
                e++;
            }
            *v = args + j;
            *vn = e - j;
            return true;
        }
    }
    return false;
}

static int32_t gpio_set(const char *args, size_t len, char *out, size_t out_max) {
    const char *name = NULL, *state = NULL;
    size_t nn = 0, sn = 0;
    if (len > 0 && args[0] == '{') {
        if (!json_field(args, len, "pin", &name, &nn) || !json_field(args, len, "value", &state, &sn)) {
            name = NULL;
        }
    } else {
        const char *space = memchr(args, ' ', len);
        if (space != NULL) {
            name = args;
            nn = (size_t)(space - args);
            state = space + 1;
            sn = len - nn - 1;
        }
    }
    if (name == NULL) {
        return snprintf(out, out_max, "{\"error\":\"usage: gpio_set <led_name> <on|off>\"}");
    }
    int led = led_index(name, nn);
    if (led < 0) {
        return snprintf(out, out_max, "{\"error\":\"unknown LED\",\"available\":[\"led1\",\"led2\"]}");
    }
    bool on = (sn >= 2 && memcmp(state, "on", 2) == 0) || (sn >= 1 && (state[0] == '1' || state[0] == 't'));
    FPGAIO_LED = on ? (FPGAIO_LED | (1u << led)) : (FPGAIO_LED & ~(1u << led));
    return snprintf(out, out_max, "{\"led\":\"%s\",\"state\":\"%s\"}", s_leds[led], on ? "on" : "off");
}

static int32_t gpio_read(const char *args, size_t len, char *out, size_t out_max) {
    (void)args;
    (void)len;
    uint32_t v = FPGAIO_LED;
    return snprintf(out, out_max, "{\"leds\":{\"led1\":%s,\"led2\":%s}}", (v & 1) ? "true" : "false",
        (v & 2) ? "true" : "false");
}

static const claw_tool_def_t s_board_tools[] = {
    // Names of the vendor registry: its description, risk and limit apply.
    { "gpio_set", NULL, 1, false, 30, gpio_set },
    { "gpio_read", NULL, 0, false, 60, gpio_read },
};

void board_tools_register(void) {
    (void)claw_tools_register(s_board_tools, sizeof(s_board_tools) / sizeof(s_board_tools[0]));
}
