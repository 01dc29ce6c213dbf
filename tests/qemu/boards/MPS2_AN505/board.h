/*
 * board.h — what the MPS2_AN505 board sources share: the CMSDK APB UARTs
 * and the clock of board.c.
 *
 *   UART0  console: MicroPython's REPL and TACP, as on the BENTO board
 *          (board_tacp.c; qemu -serial #1)
 *   UART1  the link to the host-side serial bridge: claw_https_* and the
 *          test harness's requests (serial_link.c; qemu -serial #2)
 *   UART2  not used (TACP is on the console; tests/qemu/run.py attaches
 *          nothing to it)
 */
#ifndef BENTOCLAW_BOARD_H
#define BENTOCLAW_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BOARD_UART_CONSOLE (0u)
#define BOARD_UART_LINK    (1u)
#define BOARD_UART_COUNT   (3u)

// One received byte (0..255), or -1 when none is waiting. Never waits.
int board_uart_getc(unsigned uart);

// Send one byte, waiting while the transmitter is full, at most until the
// board's millisecond tick reaches `deadline_ms`. False when it did not go.
bool board_uart_putc(unsigned uart, uint8_t c, uint32_t deadline_ms);
// Runs fn(arg) in an interrupt handler; true when it ran (board.c).
bool board_run_in_irq(void (*fn)(void *), void *arg);

// The board's millisecond tick (mp_hal_ticks_ms) and a wrap-safe test
// "the tick has reached deadline_ms".
uint32_t board_ms(void);
static inline bool board_ms_reached(uint32_t deadline_ms) {
    return (int32_t)(board_ms() - deadline_ms) >= 0;
}

// The console's next byte for the REPL, through the TACP receiver
// (board_tacp.c), or -1; `idle`: the REPL waits for input (a whole frame is
// dispatched now), else code runs (Ctrl-C polling). Its state afresh, and
// the READY frame, once per VM: board_tacp_vm_init().
int board_tacp_getc(bool idle);
void board_tacp_vm_init(void);

#endif // BENTOCLAW_BOARD_H
