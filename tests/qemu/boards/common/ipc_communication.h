/*
 * ipc_communication.h — a stand-in, for the emulated boards, for the BENTO
 * firmware's header of the same name (bento_libs/claw/common/shared/include/
 * in the vendor's SDK): the IPC message layout and the few PDL names the
 * bentoclaw binding uses to reach the CM55 panel. The layout is the
 * vendor's; the functions are the board's (ipc_board.c), which keeps every
 * message for the tests (module `board_ipc`) instead of handing it to a
 * second core. The real firmware builds against the real header.
 */
#ifndef BENTOCLAW_STANDIN_IPC_COMMUNICATION_H
#define BENTOCLAW_STANDIN_IPC_COMMUNICATION_H

#include <stdint.h>

#define CM33_IPC_PIPE_EP_ADDR (1UL)
#define CM55_IPC_PIPE_EP_ADDR (2UL)
// CY_IPC_INTR_MASK(CY_IPC_INTR_CYPIPE_EP1): interrupt 4.
#define CY_IPC_CYPIPE_INTR_MASK_EP1 (1UL << 4)
// LCD terminal (CM33 -> CM55).
#define IPC_CMD_LCD_PRINT (0xE0)

#define IPC_DATA_MAX_LEN (128UL)

typedef struct {
    uint16_t client_id; // bits 0-7: client ID
    uint16_t intr_mask; // release mask
    uint32_t cmd;
    uint32_t value;
    char data[IPC_DATA_MAX_LEN];
} ipc_msg_t;

// The shared-memory section of the real firmware (cy_syslib.h's
// CY_SECTION_SHAREDMEM: the IPC messages live where the CM55 can read
// them, not in the CM33's RAM): a section of that name here, which the
// boards' linker scripts place with .bss and the size report counts apart.
#define CY_SECTION_SHAREDMEM __attribute__((section(".cy_sharedmem")))

typedef enum {
    CY_IPC_PIPE_SUCCESS = 0x00,
    CY_IPC_PIPE_ERROR_SEND_BUSY = 0x01,
} cy_en_ipc_pipe_status_t;

cy_en_ipc_pipe_status_t Cy_IPC_Pipe_SendMessage(uint32_t toAddr, uint32_t fromAddr, void *msgPtr,
    void (*callBackPtr)(void));
void Cy_SysLib_Delay(uint32_t milliseconds);
void Cy_SysLib_DelayUs(uint16_t microseconds);
void cm33_ipc_communication_setup(void);

// CMSIS's NVIC_SystemReset(): SYSRESETREQ through the AIRCR.
static inline void NVIC_SystemReset(void) {
    __asm volatile ("dsb 0xF" ::: "memory");
    *(volatile uint32_t *)0xE000ED0CUL = (0x5FAUL << 16) | (1UL << 2);
    __asm volatile ("dsb 0xF" ::: "memory");
    for (;;) {
    }
}

#endif
