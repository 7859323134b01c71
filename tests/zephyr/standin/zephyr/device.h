/* Stand-in for <zephyr/device.h> (see ../README.md): not Zephyr. */
#ifndef AOT_STANDIN_DEVICE_H
#define AOT_STANDIN_DEVICE_H
#include <stdbool.h>

struct device {
    const char *name;
};
/* The devicetree's chosen nodes (devicetree.h) are these devices. */
extern const struct device aot_standin_chosen_zephyr_console;
extern const struct device aot_standin_chosen_aot_rpc_uart;
#define DEVICE_DT_GET(node) (&(node))
bool device_is_ready(const struct device *dev);
#endif
