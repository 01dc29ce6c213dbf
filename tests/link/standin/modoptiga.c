/* Stand-in for the vendor's modoptiga.o (the `optiga` module).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

static uint8_t s_digest[32];

static int optiga_hash(const void *data)
{
    optiga_manager_lock();
    int rc = optiga_crypt_hash(NULL, 0xe2, 1, data, s_digest);
    optiga_manager_unlock();
    return rc;
}

const standin_module_t mp_module_optiga = { (const void *)optiga_hash, (const void *)s_digest };

/* overridable.txt: weak, the firmware's own definition wins. */
__attribute__((weak)) bool optiga_verify_staged_model(const uint8_t *model, size_t len)
{
    (void)len;
    if (tesaiot_config_get("pu") == NULL) {
        return tesaiot_run_protected_update_isolated_test() == 0;
    }
    return optiga_hash(model) == 0;
}
