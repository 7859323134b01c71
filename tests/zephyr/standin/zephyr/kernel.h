/* Stand-in for <zephyr/kernel.h> (see ../README.md): not Zephyr. */
#ifndef AOT_STANDIN_KERNEL_H
#define AOT_STANDIN_KERNEL_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t ticks;
} k_timeout_t;
#define K_FOREVER ((k_timeout_t){-1})
#define ARG_UNUSED(x) (void)(x)

uint32_t k_cycle_get_32(void);
uint64_t k_cycle_get_64(void);
int sys_clock_hw_cycles_per_sec(void);
void k_yield(void);
int32_t k_sleep(k_timeout_t timeout);

typedef void (*k_thread_entry_t)(void *p1, void *p2, void *p3);
/* The stand-in "kernel" starts the one defined thread from its main(). */
#define K_THREAD_DEFINE(name, stack_size, entry, p1, p2, p3, prio, options, delay) \
    const k_thread_entry_t aot_standin_thread_entry = (entry);                      \
    const int aot_standin_thread_facts[3] = {(stack_size), (prio), (options) + (delay)}
#endif
