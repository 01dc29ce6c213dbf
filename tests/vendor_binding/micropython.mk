# vclaw — the test binding that calls the archive as the vendor's binding
# does (modvclaw.c). Built with USER_C_MODULES=<repo>/tests (this is the only
# */micropython.mk there), in one of two ways:
#
#   VCLAW_ALONE=1 VCLAW_LIB=<archive>
#       the vendor's pattern alone: this module, the VFS port
#       (mpy/claw_port_vfs.c) and the archive of the 22 functions (default
#       features), no bentoclaw module (scripts/test_vendor_binding.sh, unix)
#   otherwise
#       beside the bentoclaw module: mpy/micropython.mk is included as if
#       USER_C_MODULES named the repo root, and brings the archive and the
#       port (the emulated boards, scripts/build_qemu.sh)

VCLAW_DIR := $(USERMOD_DIR)
VCLAW_ROOT := $(abspath $(VCLAW_DIR)/../..)
VCLAW_ALONE ?= 0

SRC_USERMOD_C += $(VCLAW_DIR)/modvclaw.c
CFLAGS_USERMOD += -I$(VCLAW_ROOT)/include

ifeq ($(VCLAW_ALONE),1)
SRC_USERMOD_C += $(VCLAW_ROOT)/mpy/claw_port_vfs.c
CFLAGS_USERMOD += -I$(VCLAW_ROOT)/mpy
# As mpy/micropython.mk links its archive: LIBS, and a prerequisite of the
# image for ports that link "$^".
LIBS += $(VCLAW_LIB)
ifneq ($(PROG),)
$(BUILD)/$(PROG): $(VCLAW_LIB)
else
$(BUILD)/firmware.elf: $(VCLAW_LIB)
endif
else
USERMOD_DIR := $(VCLAW_ROOT)/mpy
include $(VCLAW_ROOT)/mpy/micropython.mk
endif
