/* Minimal no-OS image for the JSON code-size benchmark (linked, never run). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec {
    uint8_t role;
    uint16_t len;
    uint8_t content[256];
};

bool bench_parse(const uint8_t *line, size_t len, struct rec *out);
size_t bench_write(const struct rec *rec, uint8_t *out, size_t out_max);

volatile uint8_t g_line[320];
static struct rec g_rec;
static uint8_t g_out[600];
volatile size_t g_sink;

void Reset_Handler(void);

__attribute__((section(".isr_vector"), used)) const void *const g_vectors[2] = {
    (const void *)0x20002000u,
    (const void *)Reset_Handler,
};

void Reset_Handler(void)
{
#ifndef BASELINE
    g_sink = bench_parse((const uint8_t *)g_line, sizeof g_line, &g_rec);
#ifdef WITH_WRITE
    g_sink += bench_write(&g_rec, g_out, sizeof g_out);
#endif
#endif
    (void)g_out;
    (void)g_rec;
    for (;;) {
    }
}
