# MPS3_AN547 — out-of-tree board for MicroPython's qemu port:
# qemu-system-arm -M mps3-an547 (Arm Corstone SSE-300 FPGA image, Cortex-M55).
#
#   make -C <micropython>/ports/qemu BOARD_DIR=<repo>/tests/qemu/boards/MPS3_AN547 ...
#
# scripts/build_qemu.sh passes everything else (USER_C_MODULES, BENTOCLAW_*,
# FROZEN_MANIFEST=). No file of MicroPython is changed: this file, the
# linker script and the board sources are all the board there is.

QEMU_ARCH = arm
QEMU_MACHINE = mps3-an547

# Cortex-M55 with the FPU in hard-float ABI, the example of a hard-float
# firmware: the Rust staticlib for thumbv8m.main-none-eabihf is hard-float
# too (soft and hard do not link).
CFLAGS += -mthumb -mcpu=cortex-m55 -mfloat-abi=hard -mfpu=fpv5-d16
BENTOCLAW_RUST_TARGET ?= thumbv8m.main-none-eabihf
# No QEMU_SOC_*: the port's uart.c then compiles to nothing and board.c
# supplies the UART of this machine.
CFLAGS += -DMP_CONFIGFILE='"$(BOARD_DIR)/mpconfigboard.h"'
CFLAGS += -I$(BOARD_DIR)

LDSCRIPT = $(BOARD_DIR)/mps3_an547.ld

# gchelper_thumb2.s is assembled for v7-M and refuses to link with v8.1-M
# objects ("conflicting CPU architectures"); the C version works.
SRC_BOARD_O = shared/runtime/gchelper_generic.o

# time.localtime() (../common/board_time.h) converts with timeutils.
SRC_C += shared/timeutils/timeutils.c

SRC_C += \
	$(BOARD_DIR)/board.c \
	$(BOARD_DIR)/modboard.c \

# The transport of the bentoclaw module: no network on this board.
BENTOCLAW_PORT_FIRMWARE = 1
ifneq ($(wildcard $(BOARD_DIR)/../../../../mpy/claw_transport.h),)
SRC_C += $(BOARD_DIR)/claw_transport_board.c
CFLAGS += -I$(abspath $(BOARD_DIR)/../../../../mpy)
endif

# The board's stand-in for the BENTO IPC pipe to the CM55 panel (the
# binding's firmware build sends its UI messages there).
SRC_C += $(BOARD_DIR)/../common/ipc_board.c
# The MicroPython stack as the BENTO board has it: 8 KiB, limit 8 KiB - 512,
# painted at boot (common/board_stack.c).
SRC_C += $(BOARD_DIR)/../common/board_stack.c
CFLAGS += -I$(abspath $(BOARD_DIR)/../common)

MICROPY_VFS_LFS2 = 1
MICROPY_HEAP_SIZE = 393216

# Debian's source package has no micropython-lib to freeze from.
FROZEN_MANIFEST =

# The port's Makefile sets LIBS (libgcc) after the user modules were read,
# which drops the archive mpy/micropython.mk appended. A target-specific
# append is evaluated when the link runs, after all assignments: the Rust
# staticlib (BENTOCLAW_LIB; mpy/micropython.mk's default is
# target/$(BENTOCLAW_RUST_TARGET)/release/libbentoclaw.a), newlib's libc for
# the few C library functions the port's string0.c lacks (strnlen), and
# libgcc once more for both.
BOARD_LIBC_A = $(shell $(CC) $(CFLAGS) -print-file-name=libc.a)
BOARD_LIBGCC_A = $(shell $(CC) $(CFLAGS) -print-libgcc-file-name)
$(BUILD)/firmware.elf: LIBS += $(BENTOCLAW_LIB) $(BOARD_LIBC_A) $(BOARD_LIBGCC_A)

# newlib's strnlen.o lacks a .note.GNU-stack section; the image has no
# executable stack either way (there is no MMU), so say so and keep ld quiet.
LDFLAGS += -Wl,-z,noexecstack

# TACP on the console: the answering half of the vendor tacp.c's stand-in
# (common/tacp_link.c).
SRC_C += $(BOARD_DIR)/../common/tacp_link.c
