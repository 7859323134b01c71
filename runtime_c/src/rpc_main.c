/*
 * main() of RPC firmware: serve one model over the port's UART.
 *
 * The build provides the model descriptor as the symbol `aot_rpc_model` and
 * may define AOT_BOARD_TAG and AOT_BUILD_ID (strings) on the command line.
 * Exit codes (aot_port_exit): 0 when the host closes the link (host port),
 * 100 + status when the model descriptor is rejected.
 */
#include "aot/platform.h"
#include "aot/rpc.h"

#ifndef AOT_BOARD_TAG
#define AOT_BOARD_TAG "unknown"
#endif
#ifndef AOT_BUILD_ID
#define AOT_BUILD_ID "unknown"
#endif

extern const aot_model_t aot_rpc_model;

static aot_rpc_server_t server;

int main(void)
{
    static const aot_device_info_t device = {AOT_BOARD_TAG, AOT_BUILD_ID};
    aot_status_t st;

    aot_port_init();
    st = aot_rpc_server_init(&server, &aot_rpc_model, &device);
    if (st != AOT_OK) {
        aot_port_exit(100 + (int)st);
    }
    aot_rpc_server_serve(&server);
    aot_port_exit(0);
}
