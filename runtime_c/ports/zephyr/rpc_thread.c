/*
 * The RPC server in a thread of its own (CONFIG_AOT_RPC_THREAD), so that the
 * application keeps its main().  zephyr/CMakeLists.txt compiles the runtime's
 * rpc_main.c with main renamed to aot_rpc_main: the server loop has one home.
 *
 * NEVER BUILT AGAINST ZEPHYR (see port.c).
 */
#include <zephyr/kernel.h>

int aot_rpc_main(void);

static void aot_rpc_thread(void *p1, void *p2, void *p3)
{
    ARG_UNUSED(p1);
    ARG_UNUSED(p2);
    ARG_UNUSED(p3);
    (void)aot_rpc_main(); /* returns never: it ends in aot_port_exit() */
}

K_THREAD_DEFINE(aot_rpc_tid, CONFIG_AOT_RPC_THREAD_STACK_SIZE, aot_rpc_thread, NULL, NULL, NULL,
                CONFIG_AOT_RPC_THREAD_PRIORITY, 0, 0);
