/* Stand-in for the vendor's claw_transport.o (HTTPS over cy_http_client).
 * Stubs: linked by scripts/test_link.sh, never run. */
#include "standin.h"

#include <string.h>

static void *s_client;
static bool s_connected;

static bool open_client(void)
{
    if (cy_http_client_init() != 0) {
        return false;
    }
    if (cy_http_client_create(NULL, NULL, NULL, NULL, &s_client) != 0) {
        return false;
    }
    s_connected = cy_http_client_connect(s_client, 5000, 5000) == 0;
    return s_connected;
}

bool claw_https_connect(const char *host, uint16_t port, const char *api_key)
{
    (void)host;
    (void)port;
    (void)api_key;
    return open_client();
}

bool claw_http_connect_insecure(const char *host, uint16_t port)
{
    (void)host;
    (void)port;
    return open_client();
}

bool claw_https_connected(void) { return s_connected; }

void claw_https_disconnect(void)
{
    if (s_client != NULL) {
        (void)cy_http_client_disconnect(s_client);
        (void)cy_http_client_delete(s_client);
    }
    s_client = NULL;
    s_connected = false;
}

static int request(const char *path, const char *body, size_t body_len, char *resp, size_t resp_max)
{
    if (!s_connected || resp_max == 0) {
        return -1;
    }
    (void)cy_http_client_write_header(s_client, NULL, (void *)path, 1);
    if (cy_http_client_send(s_client, NULL, (const uint8_t *)body, (uint32_t)body_len, resp) != 0) {
        return -1;
    }
    return (int)strlen(resp);
}

int claw_https_get(const char *path, char *resp, size_t resp_max)
{
    return request(path, NULL, 0, resp, resp_max);
}

int claw_https_post(const char *path, const char *json, size_t json_len, char *resp, size_t resp_max)
{
    return request(path, json, json_len, resp, resp_max);
}
