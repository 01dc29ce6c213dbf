/* The header ABI checks of tests/c/abi_check.c, compiled for the target
 * (32-bit size_t and pointers added). */
#define ABI_TARGET_CORTEX_M 1
#include "../c/abi_check.c"
