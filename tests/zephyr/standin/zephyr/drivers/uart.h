/* Stand-in for <zephyr/drivers/uart.h> (see ../../README.md): not Zephyr. */
#ifndef AOT_STANDIN_UART_H
#define AOT_STANDIN_UART_H
#include <errno.h>
#include <zephyr/device.h>

int uart_poll_in(const struct device *dev, unsigned char *p_char);
void uart_poll_out(const struct device *dev, unsigned char out_char);
#endif
