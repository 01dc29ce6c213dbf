/*
 * valgrind/callgrind.h for the emulated Cortex-M33 build of
 * tests/bench/callgrind/harness.c (scripts/insn_m33.sh): found before any
 * real one through -I tests/bench/m33, it turns the harness's two client
 * requests into what qemu's instruction-counting plugin can see.
 *
 * CALLGRIND_TOGGLE_COLLECT: one marker instruction, `mov r11, r11` (a move of
 * a register to itself: no effect, and no compiler emits one). qemu's
 * tests/plugin/insn.c, loaded with `match=mov fp, fp` (capstone's name of
 * r11), prints for every execution of it the instructions executed since
 * the previous one ("Δ+N since last match"). The harness brackets each
 * measured call with two toggles, so every second delta is one call: the
 * instructions after the opening marker up to and including the closing
 * one.
 *
 * CALLGRIND_DUMP_STATS_AT(label): nothing; the harness's READ line that
 * follows each call names it (tests/bench/m33/insn_summary.py pairs the
 * two in order).
 */
#ifndef BENTOCLAW_M33_CALLGRIND_H
#define BENTOCLAW_M33_CALLGRIND_H

#define CALLGRIND_TOGGLE_COLLECT __asm__ volatile("mov r11, r11" ::: "memory")
#define CALLGRIND_DUMP_STATS_AT(label) ((void)(label))

#endif
