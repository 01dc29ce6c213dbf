/* Stand-in for the vendor's lfs_wifi_creds.o (/.wifi_creds through the VFS).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include <string.h>

static bool s_ready;
static uint8_t s_file[6 * 100];

void lfs_wifi_creds_init(void)
{
    s_ready = mp_vfs_open(0, NULL, NULL) != NULL;
}

void lfs_wifi_creds_deinit(void) { s_ready = false; }

bool lfs_wifi_creds_ready(void) { return s_ready; }

int lfs_wifi_creds_read(standin_wifi_entry_t *entries, int max_entries)
{
    int err = 0;
    if (!s_ready || max_entries < 1) {
        return 0;
    }
    if (mp_stream_rw(NULL, s_file, sizeof s_file, &err, 0) < 0) {
        return 0;
    }
    memcpy(entries[0].bytes, s_file, sizeof entries[0].bytes);
    return 1;
}

bool lfs_wifi_creds_write(const standin_wifi_entry_t *entries, int count)
{
    int err = 0;
    if (!s_ready || count < 1) {
        return false;
    }
    memcpy(s_file, entries[0].bytes, sizeof entries[0].bytes);
    bool ok = mp_stream_rw(NULL, s_file, sizeof s_file, &err, 1) >= 0;
    (void)mp_stream_close(NULL);
    return ok;
}

bool lfs_wifi_creds_needs_resave(void) { return s_file[0] == 0; }
