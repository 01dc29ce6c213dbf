# bentoclaw user C module (make-based ports: unix, stm32, alif, qemu, ...).
# Build with USER_C_MODULES=<repo root>: MicroPython includes every
# <USER_C_MODULES>/*/micropython.mk, and this one lives in <repo root>/mpy.
# Variables (override on the make command line):
#   BENTOCLAW_LIB          the Rust staticlib to link (default: cargo's, below)
#   BENTOCLAW_RUST_TARGET  rustc target triple of a cross build, e.g.
#                          thumbv8m.main-none-eabi (a softfp Cortex-M33 such
#                          as BENTO's; thumbv8m.main-none-eabihf for a
#                          hard-float firmware) (empty: host)
#   BENTOCLAW_PORT_FIRMWARE=1  the firmware's claw_https_* and IPC pipe, not
#                          the unix test transport (claw_transport.h)
#   BENTOCLAW_STORE_DIR    the files' directory, read by cargo (default /)
#   CARGO                  cargo executable (default: cargo)
#   BENTO_HAS_MPY          1 (default); 0: nothing of the module is compiled or
#                          linked, cargo does not run (also from the environment)

BENTO_HAS_MPY ?= 1
ifneq ($(BENTO_HAS_MPY),0)

BENTOCLAW_MOD_DIR := $(USERMOD_DIR)
BENTOCLAW_ROOT := $(abspath $(BENTOCLAW_MOD_DIR)/..)
BENTOCLAW_RUST_TARGET ?=
BENTOCLAW_PORT_FIRMWARE ?= 0
CARGO ?= cargo

ifeq ($(BENTOCLAW_RUST_TARGET),)
BENTOCLAW_LIB ?= $(BENTOCLAW_MOD_DIR)/../target/release/libbentoclaw.a
BENTOCLAW_CARGO_ARGS := build --release --features agent
else
BENTOCLAW_LIB ?= $(BENTOCLAW_MOD_DIR)/../target/$(BENTOCLAW_RUST_TARGET)/release/libbentoclaw.a
# Alone, the staticlib is one LTO-merged object: 2 KiB smaller (docs/SIZE.md).
BENTOCLAW_CARGO_ARGS := rustc --release --crate-type staticlib --features agent --target $(BENTOCLAW_RUST_TARGET)
endif

SRC_USERMOD_C += $(addprefix $(BENTOCLAW_MOD_DIR)/,modbentoclaw.c claw_port_vfs.c claw_tools.c)
ifneq ($(BENTOCLAW_PORT_FIRMWARE),1)
SRC_USERMOD_C += $(BENTOCLAW_MOD_DIR)/claw_transport_unix.c
endif
CFLAGS_USERMOD += -I$(BENTOCLAW_MOD_DIR) -I$(BENTOCLAW_ROOT)/include -DBENTOCLAW_PORT_FIRMWARE=$(BENTOCLAW_PORT_FIRMWARE)

# Link the Rust archive. LDFLAGS_USERMOD is not enough: stm32 puts it before
# the objects (searched too early) and alif ignores it. Ports that link
# "$(OBJ) $(LIBS)" pick it up from LIBS, ports that link "$^" (unix) from the
# prerequisite below. An archive named twice on one command line is harmless.
LIBS += $(BENTOCLAW_LIB)
# Relink when the archive changes, and build it when it is missing.
ifneq ($(PROG),)
$(BUILD)/$(PROG): $(BENTOCLAW_LIB)
else
$(BUILD)/firmware.elf: $(BENTOCLAW_LIB)
endif
$(BENTOCLAW_LIB):
	$(ECHO) "CARGO $@"
	$(Q)cd $(BENTOCLAW_ROOT) && $(CARGO) $(BENTOCLAW_CARGO_ARGS)

endif # BENTO_HAS_MPY
