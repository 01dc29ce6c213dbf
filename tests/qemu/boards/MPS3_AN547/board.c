/*
 * board.c — what the qemu port lacks for mps3-an547 (Cortex-M55, SSE-300).
 *
 *  - uart_init/uart_rx_chr/uart_tx_strn for the CMSDK APB UART0 at
 *    0x49303000 (the port's uart.c only knows the MPS2 address; this board
 *    defines no QEMU_SOC_* so uart.c compiles to nothing). uart_init runs
 *    first thing after reset (startup.c's _start), so it also enables the
 *    FPU, installs this board's vector table and starts the clock.
 *  - the clock: the SSE-300 system counter (64 bits, 32 MHz) gives
 *    mp_hal_ticks_ms/us/cpu and mp_hal_time_ns. It is read, not counted by
 *    interrupts, so it cannot lose time when the host is busy, and it is
 *    monotonic. SysTick is used only to wake the core from WFI while it
 *    waits (sleep_ms, an idle REPL), so qemu does not spin a host core.
 *  - the stack (../common/board_stack.c): the BENTO board's 8 KiB with
 *    MicroPython's limit at 8 KiB - 512, painted at boot.
 *  - faults: MSPLIM guards the bottom of the stack; every fault prints a
 *    report ("FATAL: ...") and ends qemu through semihosting.
 *  - board_vm_init (MICROPY_PORT_INIT_FUNC, once per mp_init): MicroPython's
 *    stack top and limit for the board's stack (board_stack_vm_init).
 *  - board_idle_point (MICROPY_BOARD_AFTER_PYTHON_EXEC, after every REPL
 *    command and so before a soft reset): the idle-point flush of the
 *    session ring (docs/BUILD.md).
 */
#include <stdint.h>
#include <stdlib.h>

#include "py/mphal.h"
#include "py/runtime.h"
#include "shared/runtime/interrupt_char.h"
#include "uart.h"

#include "board_stack.h"

#include "claw_session.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))

/* --- core registers ------------------------------------------------------ */
#define SCB_VTOR   REG32(0xE000ED08)
#define SCB_CPACR  REG32(0xE000ED88)
#define SYST_CSR   REG32(0xE000E010)
#define SYST_RVR   REG32(0xE000E014)
#define SYST_CVR   REG32(0xE000E018)
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2)

/* --- SSE-300 system counter ---------------------------------------------- */
// Control frame (Secure) and read-only status frame. CNTCR.EN starts it.
#define CNT_CONTROL_CNTCR REG32(0x58100000)
#define CNT_STATUS_CV_LO  REG32(0x58101000)
#define CNT_STATUS_CV_HI  REG32(0x58101004)
#define BOARD_CNT_HZ      (32000000u) // MAINCLK of the AN547 image (qemu: 32 MHz)

/* --- CMSDK APB UART ------------------------------------------------------ */
typedef struct {
    volatile uint32_t DATA;
    volatile uint32_t STATE;
    volatile uint32_t CTRL;
    volatile uint32_t INTSTATUS;
    volatile uint32_t BAUDDIV;
} cmsdk_uart_t;

#define UART0 ((cmsdk_uart_t *)0x49303000)
#define UART_STATE_TXFULL (1u << 0)
#define UART_STATE_RXFULL (1u << 1)
#define UART_CTRL_TX_EN   (1u << 0)
#define UART_CTRL_RX_EN   (1u << 1)

static inline void board_dsb_isb(void) {
    __asm volatile ("dsb\n isb" ::: "memory");
}

/* --- vector table ---------------------------------------------------------
 * The port's startup.c table routes SysTick to a fault handler (and every
 * handler there is a strong symbol), so the board installs its own table
 * (VTOR): its own fault handler (below), the port's SVC/DebugMon/PendSV
 * handlers, and a SysTick handler that does nothing: the interrupt only
 * ends a WFI. */
extern uint32_t _estack;
void Reset_Handler(void);
void SVC_Handler(void);
void DebugMon_Handler(void);
void PendSV_Handler(void);

static void board_systick_handler(void) {
}

/* --- faults ------------------------------------------------------------------
 * The stack limit register MSPLIM (at _sstack, the bottom of the 8 KiB
 * region: board_stack_boot) turns a stack overflow into a UsageFault (STKOF)
 * instead of silent damage to what lies below. The handler runs in the
 * 1 KiB reserve under the region (_sstack_reserve.._sstack, the linker
 * script): it clears MSPLIM, prints what happened and makes qemu exit with
 * status 3 (semihosting), so a test runner sees it at once. */
extern uint32_t _sstack_reserve;
#define SCB_CFSR  REG32(0xE000ED28)
#define SCB_HFSR  REG32(0xE000ED2C)
#define SCB_BFAR  REG32(0xE000ED38)
#define SCB_SHCSR REG32(0xE000ED24)
#define CFSR_STKOF (1u << 20)

static void board_puts(const char *s) {
    size_t n = 0;
    while (s[n]) {
        n++;
    }
    uart_tx_strn(s, n);
}

static void board_puthex(const char *label, uint32_t v) {
    char buf[9];
    for (int i = 0; i < 8; i++) {
        buf[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xf];
    }
    buf[8] = '\0';
    board_puts(label);
    board_puts(buf);
}

__attribute__((noreturn, used)) void board_fault(uint32_t ipsr, const uint32_t *frame) {
    static const char *const names[] = { "?", "?", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault" };
    uint32_t cfsr = SCB_CFSR;
    board_puts("\r\nFATAL: ");
    board_puts(ipsr < 7 ? names[ipsr] : "exception");
    if (cfsr & CFSR_STKOF) {
        board_puts(" (stack overflow: SP reached MSPLIM)");
    }
    board_puthex("\r\n  CFSR=", cfsr);
    board_puthex(" HFSR=", SCB_HFSR);
    board_puthex(" BFAR=", SCB_BFAR);
    uintptr_t f = (uintptr_t)frame;
    if (!(cfsr & CFSR_STKOF) && f >= (uintptr_t)&_sstack_reserve && f + 32 <= (uintptr_t)&_estack) {
        board_puthex("\r\n  PC=", frame[6]);
        board_puthex(" LR=", frame[5]);
    }
    board_puthex(" SP=", (uint32_t)f);
    board_puts("\r\n");
    exit(3);
}

// Entry of all fault vectors: lift the stack limit (the handler runs in the
// reserve below it), then report.
__attribute__((naked)) static void board_fault_entry(void) {
    __asm volatile (
        "movs r0, #0        \n"
        "msr  msplim, r0    \n"
        "mrs  r0, ipsr      \n"
        "mov  r1, sp        \n"
        "b    board_fault   \n"
        );
}

// 16 system exceptions; no external interrupt is enabled. VTOR needs the
// table aligned to its size rounded up to a power of two (at least 128).
__attribute__((aligned(128), used))
static const uint32_t board_vectors[16] = {
    (uint32_t)&_estack,
    (uint32_t)&Reset_Handler,
    (uint32_t)&board_fault_entry, // NMI
    (uint32_t)&board_fault_entry, // HardFault
    (uint32_t)&board_fault_entry, // MemManage
    (uint32_t)&board_fault_entry, // BusFault
    (uint32_t)&board_fault_entry, // UsageFault
    0, 0, 0, 0,
    (uint32_t)&SVC_Handler,
    (uint32_t)&DebugMon_Handler,
    0,
    (uint32_t)&PendSV_Handler,
    (uint32_t)&board_systick_handler,
};

/* --- clock ------------------------------------------------------------------ */

static uint64_t board_counter(void) {
    uint32_t hi, lo;
    do {
        hi = CNT_STATUS_CV_HI;
        lo = CNT_STATUS_CV_LO;
    } while (hi != CNT_STATUS_CV_HI);
    return ((uint64_t)hi << 32) | lo;
}

mp_uint_t mp_hal_ticks_ms(void) {
    return (mp_uint_t)(board_counter() / (BOARD_CNT_HZ / 1000u));
}

mp_uint_t mp_hal_ticks_us(void) {
    return (mp_uint_t)(board_counter() / (BOARD_CNT_HZ / 1000000u));
}

mp_uint_t mp_hal_ticks_cpu(void) {
    return (mp_uint_t)board_counter();
}

// No RTC on this board: the time since power-on (the epoch is 2000-01-01).
// LittleFS stamps files with it.
uint64_t mp_hal_time_ns(void) {
    uint64_t c = board_counter();
    return c / BOARD_CNT_HZ * 1000000000ull + (c % BOARD_CNT_HZ) * 1000000000ull / BOARD_CNT_HZ;
}

/* --- UART with a one-character look-ahead ------------------------------------
 * While Python waits in sleep_ms the board looks at the UART for Ctrl-C; a
 * character that is not Ctrl-C is kept here for the next uart_rx_chr(). */
static int s_rx_stash = -1;
static uint32_t s_rx_last_ms;

static int board_uart_take(void) {
    if (s_rx_stash >= 0) {
        int c = s_rx_stash;
        s_rx_stash = -1;
        return c;
    }
    if (UART0->STATE & UART_STATE_RXFULL) {
        return (int)(UART0->DATA & 0xff);
    }
    return UART_RX_NO_CHAR;
}

// Sleep until the next SysTick (about 1 ms). The tick interrupt is enabled
// only around the WFI, so running code is never interrupted by it.
static void board_wait_tick(void) {
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
    __asm volatile ("wfi" ::: "memory");
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE;
}

void uart_init(void) {
    // FPU (CP10/CP11 full access) before any floating-point instruction.
    SCB_CPACR |= 0xfu << 20;
    board_dsb_isb();
    SCB_VTOR = (uint32_t)board_vectors;
    // UsageFault, BusFault and MemManage as their own exceptions (else they
    // escalate to HardFault).
    SCB_SHCSR |= (1u << 18) | (1u << 17) | (1u << 16);
    board_dsb_isb();
    // MSPLIM at the bottom of the stack region, and the region painted.
    board_stack_boot();
    // The system counter: the clock of mp_hal_ticks_*.
    CNT_CONTROL_CNTCR = 1;
    // SysTick: ~1 ms period on the CPU clock, interrupt off until a wait.
    SYST_RVR = BOARD_CNT_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE;

    UART0->BAUDDIV = 16;
    UART0->CTRL = UART_CTRL_TX_EN | UART_CTRL_RX_EN;
}

int uart_rx_chr(void) {
    int c = board_uart_take();
    uint32_t now = mp_hal_ticks_ms();
    if (c >= 0) {
        s_rx_last_ms = now;
    } else if (now - s_rx_last_ms > 20) {
        // Idle for a while (an idle REPL): sleep until the next tick instead
        // of spinning. While characters stream in (a pasted script) the
        // loop polls without sleeping.
        board_wait_tick();
    }
    return c;
}

void uart_tx_strn(const char *buf, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        while (UART0->STATE & UART_STATE_TXFULL) {
        }
        UART0->DATA = (uint8_t)buf[i];
    }
}

/* --- delays ------------------------------------------------------------------ */

static void board_poll_interrupt_char(void) {
    #if MICROPY_KBD_EXCEPTION
    if (s_rx_stash < 0 && (UART0->STATE & UART_STATE_RXFULL)) {
        int c = (int)(UART0->DATA & 0xff);
        if (c == mp_interrupt_char) {
            mp_sched_keyboard_interrupt();
        } else {
            s_rx_stash = c;
        }
    }
    #endif
}

void mp_hal_delay_ms(mp_uint_t ms) {
    uint64_t start = board_counter();
    uint64_t span = (uint64_t)ms * (BOARD_CNT_HZ / 1000u);
    while (board_counter() - start < span) {
        board_poll_interrupt_char();
        // Process pending events (Ctrl-C, scheduled callbacks); may raise.
        mp_event_handle_nowait();
        if (span - (board_counter() - start) > BOARD_CNT_HZ / 1000u) {
            board_wait_tick();
        }
    }
}

void mp_hal_delay_us(mp_uint_t us) {
    uint64_t start = board_counter();
    uint64_t span = (uint64_t)us * (BOARD_CNT_HZ / 1000000u);
    while (board_counter() - start < span) {
    }
}

/* --- once per VM ---------------------------------------------------------------- */

// After every REPL command: the ring to flash when it is dirty (the flush
// catches every exception of its own).
void board_idle_point(void) {
    (void)claw_session_flush();
}

void board_vm_init(void) {
    // main.c limits the stack to 10 KiB; the board has the BENTO board's:
    // 8 KiB, limit 8 KiB - 512, counted from the top of the region.
    board_stack_vm_init();
}
