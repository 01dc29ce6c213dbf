/*
 * board.c — what the qemu port lacks for mps2-an505 (Cortex-M33, IoT Kit).
 *
 *  - uart_init/uart_rx_chr/uart_tx_strn for the console, CMSDK APB UART0 at
 *    0x50200000 (the port's uart.c only knows the AN385 address; this board
 *    defines no QEMU_SOC_* so uart.c compiles to nothing), plus UART1 for
 *    the serial bridge (UART2 is set up but unused: board.h). uart_init
 *    runs first thing after reset (startup.c's _start), so it also enables
 *    the FPU, installs this board's vector table and starts the clock.
 *  - the clock: the IoT Kit's CMSDK TIMER0 counts down from 0xffffffff at
 *    the 20 MHz main clock, free running; its wrap interrupt (every 214.7 s)
 *    counts the high word. Together: a 64-bit count of 50 ns ticks that is
 *    read, not counted by interrupts, so it cannot lose time when the host
 *    is busy, and is monotonic. It gives mp_hal_ticks_ms/us/cpu and
 *    mp_hal_time_ns. Under qemu's -icount it follows the instruction count.
 *    SysTick is used only to wake the core from WFI while it waits
 *    (sleep_ms, an idle REPL), so qemu does not spin a host core.
 *  - the stack (../common/board_stack.c): the BENTO board's 8 KiB with
 *    MicroPython's limit at 8 KiB - 512, painted at boot.
 *  - faults: MSPLIM guards the bottom of the stack; every fault prints a
 *    report ("FATAL: ...") and ends qemu through semihosting.
 *  - board_vm_init (MICROPY_PORT_INIT_FUNC, once per mp_init): MicroPython's
 *    stack top and limit for the board's stack (board_stack_vm_init).
 *  - board_idle_point (MICROPY_BOARD_AFTER_PYTHON_EXEC, after every REPL
 *    command and so before a soft reset): the firmware's idle-point flush
 *    of the session ring (docs/BUILD.md).
 *  - board_run_in_irq: a call made from an interrupt handler (IRQ 2, pended
 *    by software), the context other than the MicroPython one that a
 *    bare-metal board has (tests/vendor_binding).
 *
 * The image runs in the Secure state (the state the M33 leaves reset in)
 * and addresses every device through its Secure alias (0x5xxxxxxx).
 */
#include <stdint.h>
#include <stdlib.h>

#include "py/mphal.h"
#include "py/runtime.h"
#include "shared/runtime/interrupt_char.h"
#include "uart.h"

#include "board_stack.h"

#include "board.h"
#include "claw_session.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))

/* --- core registers ------------------------------------------------------ */
#define SCB_VTOR   REG32(0xE000ED08)
#define SCB_CPACR  REG32(0xE000ED88)
#define SCB_SHCSR  REG32(0xE000ED24)
#define SCB_CFSR   REG32(0xE000ED28)
#define SCB_HFSR   REG32(0xE000ED2C)
#define SCB_BFAR   REG32(0xE000ED38)
#define NVIC_ISER0 REG32(0xE000E100)
#define NVIC_ICER0 REG32(0xE000E180)
#define NVIC_ISPR0 REG32(0xE000E200)
#define SYST_CSR   REG32(0xE000E010)
#define SYST_RVR   REG32(0xE000E014)
#define SYST_CVR   REG32(0xE000E018)
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2)
#define CFSR_STKOF (1u << 20)

/* --- the clock: IoT Kit TIMER0 (CMSDK APB timer), IRQ 3 ------------------- */
typedef struct {
    volatile uint32_t CTRL;
    volatile uint32_t VALUE;
    volatile uint32_t RELOAD;
    volatile uint32_t INTSTATUS; // write 1: INTCLEAR
} cmsdk_timer_t;

#define TIMER0 ((cmsdk_timer_t *)0x50000000)
#define TIMER0_IRQ (3u)
#define TIMER_CTRL_EN    (1u << 0)
#define TIMER_CTRL_IRQEN (1u << 3)
#define BOARD_CLK_HZ     (20000000u) // MAINCLK of the AN505 image (qemu: SYSCLK_FRQ)

/* --- CMSDK APB UARTs ------------------------------------------------------- */
typedef struct {
    volatile uint32_t DATA;
    volatile uint32_t STATE;
    volatile uint32_t CTRL;
    volatile uint32_t INTSTATUS;
    volatile uint32_t BAUDDIV;
} cmsdk_uart_t;

// UART0..2 of the AN505 FPGA image (qemu -serial #1..#3), Secure alias.
static cmsdk_uart_t *const board_uarts[BOARD_UART_COUNT] = {
    (cmsdk_uart_t *)0x50200000,
    (cmsdk_uart_t *)0x50201000,
    (cmsdk_uart_t *)0x50202000,
};
#define UART0 (board_uarts[BOARD_UART_CONSOLE])
#define UART_STATE_TXFULL (1u << 0)
#define UART_STATE_RXFULL (1u << 1)
#define UART_CTRL_TX_EN   (1u << 0)
#define UART_CTRL_RX_EN   (1u << 1)

static inline void board_dsb_isb(void) {
    __asm volatile ("dsb\n isb" ::: "memory");
}

/* --- vector table ---------------------------------------------------------
 * The port's startup.c table routes SysTick to a fault handler and has no
 * external interrupts, so the board installs its own table (VTOR): its own
 * fault handler (below), the port's SVC/DebugMon/PendSV handlers, a SysTick
 * handler that does nothing (the interrupt only ends a WFI) and TIMER0's
 * wrap handler. */
extern uint32_t _estack;
void Reset_Handler(void);
void SVC_Handler(void);
void DebugMon_Handler(void);
void PendSV_Handler(void);

static void board_systick_handler(void) {
}

// The clock's high word: TIMER0 wraps (2^32 ticks of 50 ns each).
static volatile uint32_t s_timer_wraps;

static void board_timer0_handler(void) {
    TIMER0->INTSTATUS = 1; // INTCLEAR
    s_timer_wraps++;
}

// board_run_in_irq()'s call, run by the handler of IRQ 2 (the S32K timer's,
// which the board never starts).
#define BOARD_CALL_IRQ (2u)
static void (*volatile s_irq_fn)(void *);
static void *volatile s_irq_arg;

static void board_call_handler(void) {
    void (*fn)(void *) = s_irq_fn;
    s_irq_fn = NULL;
    if (fn != NULL) {
        fn(s_irq_arg);
    }
}

/* --- faults ------------------------------------------------------------------
 * The stack limit register MSPLIM (at _sstack, the bottom of the 8 KiB
 * region: board_stack_boot) turns a stack overflow into a UsageFault (STKOF)
 * instead of silent damage to what lies below. The handler runs in the
 * 1 KiB reserve under the region (_sstack_reserve.._sstack, the linker
 * script): it clears MSPLIM, prints what happened and makes qemu exit with
 * status 3 (semihosting), so a test runner sees it at once. */
extern uint32_t _sstack_reserve;

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
    static const char *const names[] = { "?", "?", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault", "SecureFault" };
    uint32_t cfsr = SCB_CFSR;
    board_puts("\r\nFATAL: ");
    board_puts(ipsr < 8 ? names[ipsr] : "exception");
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

// 16 system exceptions and external IRQ 0..3 (only TIMER0's is enabled).
// VTOR needs the table aligned to its size rounded up to a power of two
// (at least 128 bytes).
__attribute__((aligned(128), used))
static const uint32_t board_vectors[16 + 4] = {
    (uint32_t)&_estack,
    (uint32_t)&Reset_Handler,
    (uint32_t)&board_fault_entry, // NMI
    (uint32_t)&board_fault_entry, // HardFault
    (uint32_t)&board_fault_entry, // MemManage
    (uint32_t)&board_fault_entry, // BusFault
    (uint32_t)&board_fault_entry, // UsageFault
    (uint32_t)&board_fault_entry, // SecureFault
    0, 0, 0,
    (uint32_t)&SVC_Handler,
    (uint32_t)&DebugMon_Handler,
    0,
    (uint32_t)&PendSV_Handler,
    (uint32_t)&board_systick_handler,
    (uint32_t)&board_fault_entry, // IRQ 0: non-secure watchdog
    (uint32_t)&board_fault_entry, // IRQ 1: S32K watchdog
    (uint32_t)&board_call_handler, // IRQ 2: S32K timer (never started): board_run_in_irq
    (uint32_t)&board_timer0_handler, // IRQ 3: TIMER0
};

/* --- clock ------------------------------------------------------------------ */

// Ticks of 50 ns since power-on. A wrap that happened but whose interrupt
// has not run yet (interrupts masked here) is seen in INTSTATUS.
static uint64_t board_counter(void) {
    uint32_t primask;
    __asm volatile ("mrs %0, primask\n cpsid i" : "=r" (primask) :: "memory");
    uint32_t v = TIMER0->VALUE;
    uint32_t wraps = s_timer_wraps;
    if (TIMER0->INTSTATUS & 1u) {
        v = TIMER0->VALUE; // read again: certainly after that wrap
        wraps++;
    }
    __asm volatile ("msr primask, %0" :: "r" (primask) : "memory");
    return ((uint64_t)wraps << 32) | (uint32_t)(0xffffffffu - v);
}

mp_uint_t mp_hal_ticks_ms(void) {
    return (mp_uint_t)(board_counter() / (BOARD_CLK_HZ / 1000u));
}

mp_uint_t mp_hal_ticks_us(void) {
    return (mp_uint_t)(board_counter() / (BOARD_CLK_HZ / 1000000u));
}

mp_uint_t mp_hal_ticks_cpu(void) {
    return (mp_uint_t)board_counter();
}

uint32_t board_ms(void) {
    return (uint32_t)mp_hal_ticks_ms();
}

// No RTC on this board: the time since power-on (the epoch is 2000-01-01).
// LittleFS stamps files with it.
uint64_t mp_hal_time_ns(void) {
    uint64_t c = board_counter();
    return c / BOARD_CLK_HZ * 1000000000ull + (c % BOARD_CLK_HZ) * 1000000000ull / BOARD_CLK_HZ;
}

/* --- UARTs -------------------------------------------------------------------- */

int board_uart_getc(unsigned uart) {
    cmsdk_uart_t *u = board_uarts[uart];
    if (u->STATE & UART_STATE_RXFULL) {
        return (int)(u->DATA & 0xff);
    }
    return -1;
}

bool board_uart_putc(unsigned uart, uint8_t c, uint32_t deadline_ms) {
    cmsdk_uart_t *u = board_uarts[uart];
    while (u->STATE & UART_STATE_TXFULL) {
        if (board_ms_reached(deadline_ms)) {
            return false;
        }
    }
    u->DATA = c;
    return true;
}

/* The console, with a one-character look-ahead: while Python waits in
 * sleep_ms the board looks at the UART for Ctrl-C; a character that is not
 * Ctrl-C is kept here for the next uart_rx_chr(). */
static int s_rx_stash = -1;
static uint32_t s_rx_last_ms;

static int board_console_take(void) {
    if (s_rx_stash >= 0) {
        int c = s_rx_stash;
        s_rx_stash = -1;
        return c;
    }
    // Through the TACP receiver (board_tacp.c): the REPL waits here.
    int c = board_tacp_getc(true);
    return c >= 0 ? c : UART_RX_NO_CHAR;
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
    // UsageFault, BusFault, MemManage and SecureFault as their own
    // exceptions (else they escalate to HardFault).
    SCB_SHCSR |= (1u << 19) | (1u << 18) | (1u << 17) | (1u << 16);
    board_dsb_isb();
    // MSPLIM at the bottom of the stack region, and the region painted.
    board_stack_boot();
    // The clock: TIMER0 free running from the top, its wrap interrupt on.
    TIMER0->CTRL = 0;
    TIMER0->RELOAD = 0xffffffffu;
    TIMER0->VALUE = 0xffffffffu;
    TIMER0->INTSTATUS = 1;
    TIMER0->CTRL = TIMER_CTRL_EN | TIMER_CTRL_IRQEN;
    NVIC_ISER0 = 1u << TIMER0_IRQ;
    // SysTick: ~1 ms period on the CPU clock, interrupt off until a wait.
    SYST_RVR = BOARD_CLK_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE;

    for (unsigned i = 0; i < BOARD_UART_COUNT; i++) {
        board_uarts[i]->BAUDDIV = 16;
        board_uarts[i]->CTRL = UART_CTRL_TX_EN | UART_CTRL_RX_EN;
    }
}

int uart_rx_chr(void) {
    int c = board_console_take();
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
    if (s_rx_stash < 0) {
        int c = board_tacp_getc(false); // code runs (board_tacp.c)
        // (mp_interrupt_char is -1 outside running code: "no byte" is
        // never an interrupt.)
        if (c >= 0 && c == mp_interrupt_char) {
            mp_sched_keyboard_interrupt();
        } else if (c >= 0) {
            s_rx_stash = c;
        }
    }
    #endif
}

void mp_hal_delay_ms(mp_uint_t ms) {
    uint64_t start = board_counter();
    uint64_t span = (uint64_t)ms * (BOARD_CLK_HZ / 1000u);
    while (board_counter() - start < span) {
        board_poll_interrupt_char();
        // Process pending events (Ctrl-C, scheduled callbacks); may raise.
        mp_event_handle_nowait();
        if (span - (board_counter() - start) > BOARD_CLK_HZ / 1000u) {
            board_wait_tick();
        }
    }
}

void mp_hal_delay_us(mp_uint_t us) {
    uint64_t start = board_counter();
    uint64_t span = (uint64_t)us * (BOARD_CLK_HZ / 1000000u);
    while (board_counter() - start < span) {
    }
}

/* --- once per VM ---------------------------------------------------------------- */

// Runs fn(arg) in the handler of IRQ 2, pended by software: taken at once
// in thread mode (all priorities 0, interrupts enabled). True when it ran.
bool board_run_in_irq(void (*fn)(void *), void *arg) {
    s_irq_arg = arg;
    s_irq_fn = fn;
    NVIC_ISER0 = 1u << BOARD_CALL_IRQ;
    NVIC_ISPR0 = 1u << BOARD_CALL_IRQ;
    board_dsb_isb();
    NVIC_ICER0 = 1u << BOARD_CALL_IRQ;
    board_dsb_isb();
    bool ran = s_irq_fn == NULL;
    s_irq_fn = NULL;
    return ran;
}

// After every REPL command: the ring to flash when it is dirty. The flush
// catches every exception of its own (a KeyboardInterrupt met here has no
// handler to go to and is dropped, as Ctrl-C at the prompt is).
void board_idle_point(void) {
    (void)claw_session_flush();
}

void board_tools_register(void); // board_tools.c

void board_vm_init(void) {
    // The board's hardware tools, as a firmware registers them before
    // anything of bentoclaw runs (again after a soft reset: the same table
    // changes nothing).
    board_tools_register();
    // main.c limits the stack to 10 KiB; the board has the BENTO board's:
    // 8 KiB, limit 8 KiB - 512, counted from the top of the region.
    board_stack_vm_init();
    // TACP on the console, and its READY frame (board_tacp.c).
    board_tacp_vm_init();
}
