/* Stand-in for <zephyr/devicetree.h> (see ../README.md): not Zephyr.  Build
 * with -DAOT_STANDIN_HAS_CHOSEN_aot_rpc_uart=1 for a devicetree that has the
 * aot,rpc-uart chosen node, -DAOT_STANDIN_HAS_CHOSEN_zephyr_console=0 for one
 * without a console. */
#ifndef AOT_STANDIN_DEVICETREE_H
#define AOT_STANDIN_DEVICETREE_H
#ifndef AOT_STANDIN_HAS_CHOSEN_zephyr_console
#define AOT_STANDIN_HAS_CHOSEN_zephyr_console 1
#endif
#define DT_CHOSEN(prop) aot_standin_chosen_##prop
#define DT_HAS_CHOSEN(prop) AOT_STANDIN_HAS_CHOSEN_##prop
#endif
