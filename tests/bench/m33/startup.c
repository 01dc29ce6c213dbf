/*
 * startup.c — bare-metal start-up of the instruction-count image on
 * qemu-system-arm -M mps2-an505 (scripts/insn_m33.sh): the vector table, the
 * reset handler (FPU on, .data and .bss, main, exit), and the few system
 * calls newlib's stdio needs: _write to UART0, _sbrk from the RAM above
 * .bss, _exit through semihosting (qemu runs with -semihosting).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);
int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _lseek(int fd, int off, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t incr);
void _exit(int status);
int _kill(int pid, int sig);
int _getpid(void);

extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss, _heap_start, _sstack;

__attribute__((section(".isr_vector"), used)) const void *const g_vectors[16] = {
    &_estack,      Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, 0,             0,             0,             Fault_Handler,
    Fault_Handler, 0,             Fault_Handler, Fault_Handler,
};

/* ---- UART0 (CMSDK APB UART, Secure alias) and semihosting -------------- */

#define UART0 ((volatile uint32_t *)0x50200000u)
enum { UART_DATA = 0, UART_STATE = 1, UART_CTRL = 2, UART_BAUDDIV = 4 };

static void uart_putc(char c)
{
    while (UART0[UART_STATE] & 1u) { /* TX full */
    }
    UART0[UART_DATA] = (uint8_t)c;
}

static void uart_puts(const char *s)
{
    while (*s) {
        uart_putc(*s++);
    }
}

/* SYS_EXIT: qemu exits 0 for ADP_Stopped_ApplicationExit, 1 for any other
 * reason. */
__attribute__((noreturn)) static void semihost_exit(int status)
{
    register uint32_t r0 __asm__("r0") = 0x18u;
    register uint32_t r1 __asm__("r1") = status == 0 ? 0x20026u : 0x20023u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

void Fault_Handler(void)
{
    uart_puts("\nFAULT\n");
    semihost_exit(1);
}

/* ---- newlib's system calls ------------------------------------------- */

int _write(int fd, const char *buf, int len)
{
    (void)fd;
    for (int i = 0; i < len; i++) {
        uart_putc(buf[i]);
    }
    return len;
}

int _read(int fd, char *buf, int len)
{
    (void)fd;
    (void)buf;
    (void)len;
    return 0;
}

int _close(int fd)
{
    (void)fd;
    return -1;
}

int _lseek(int fd, int off, int whence)
{
    (void)fd;
    (void)off;
    (void)whence;
    return 0;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd) { return fd <= 2; }

void *_sbrk(ptrdiff_t incr)
{
    static char *brk = (char *)&_heap_start;
    if (incr < 0 || (char *)&_sstack - brk < incr) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *old = brk;
    brk += incr;
    return old;
}

void _exit(int status) { semihost_exit(status); }

int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void) { return 1; }

/* ---- reset ------------------------------------------------------------- */

void Reset_Handler(void)
{
    /* CP10/CP11 full access: the softfp objects may use the FPU. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;) {
        *d++ = *s++;
    }
    for (uint32_t *d = &_sbss; d < &_ebss;) {
        *d++ = 0;
    }
    UART0[UART_BAUDDIV] = 16;
    UART0[UART_CTRL] = 1; /* TX on */
    exit(main()); /* flushes stdout, then _exit */
}
