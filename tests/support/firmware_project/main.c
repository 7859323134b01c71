/* The firmware's own main(): read one input from the console, run the
 * model, write the output back, exit with the model's status. */
#include <stdint.h>

#include "aot/platform.h"
#include "net.h"

static int8_t input[NET_INPUT_X_BYTES];
static int8_t output[NET_OUTPUT_Y_BYTES];

int main(void)
{
    aot_port_init();
    for (uint32_t i = 0; i < sizeof input; ++i) {
        input[i] = (int8_t)aot_port_read_byte();
    }
    struct net_inputs in = {input};
    struct net_outputs out = {output};
    int32_t status = net_run(&in, &out);
    aot_port_write((const uint8_t *)output, sizeof output);
    return (int)status;
}
