// claw_tools.h — the vendor registry's tools that MicroPython can do on any
// port (mpy/claw_tools.c): the binding registers this table with
// claw_tools_register() at init, next to the firmware's hardware tools.
#ifndef BENTOCLAW_CLAW_TOOLS_H
#define BENTOCLAW_CLAW_TOOLS_H

#include <stddef.h>

#include "claw_ext.h"

extern const claw_tool_def_t bentoclaw_c_tools[];
extern const size_t bentoclaw_c_tools_count;

// A print sink (mp_print_t's data; bentoclaw_answer_strn its function) that
// keeps the first `max` bytes printed: a tool's answer, or the text of a
// tool's result (modbentoclaw.c), never past its buffer.
typedef struct {
    char *buf;
    size_t max, len;
} answer_t;
void bentoclaw_answer_strn(void *data, const char *s, size_t n);

// A reset or safe boot a tool asked for (hard_reset, safe_boot), done by the
// binding once the call that ran it has returned and its answer is out.
void bentoclaw_c_tools_after_call(void);

// A new VM (soft reset): what the tools kept in root pointers (the rules)
// belonged to the previous heap.
void bentoclaw_c_tools_reset(void);

#if BENTOCLAW_PORT_FIRMWARE
// The LCD console's link to the CM55 (modbentoclaw.c's bentoclaw_ipc_send()),
// handed in when the link comes up; NULL before: nothing is sent.
extern bool (*bentoclaw_c_tools_ipc_send)(uint32_t cmd, int type, const char *text, size_t len);
#endif

#endif // BENTOCLAW_CLAW_TOOLS_H
