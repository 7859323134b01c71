/*
 * The work queues and the barrier of include/aot/cores.h (the protocol is
 * described there).  Linked only into firmware that hands work to further
 * cores (tests/cores/fixture; the generated entry functions, issue 36).
 */
#include "aot/cores.h"

#include "aot/status.h"

#if defined(__arm__)
#define AOT_DMB() __asm__ volatile("dmb" ::: "memory")
#define AOT_WAKE() __asm__ volatile("dsb\n sev" ::: "memory")
#define AOT_SLEEP() __asm__ volatile("wfe" ::: "memory")
#else
/* Elsewhere (the host, RISC-V): GCC's full barrier (a fence on RISC-V), and
   waiting spins, as no event instruction is assumed. */
#define AOT_DMB() __sync_synchronize()
#define AOT_WAKE() __sync_synchronize()
#define AOT_SLEEP() __sync_synchronize()
#endif

/* Queue i - 1 feeds core i.  In .bss of `ram`, which every core reaches. */
static aot_core_queue_t queues[AOT_BOARD_CORES > 1 ? AOT_BOARD_CORES - 1 : 1];
static uint32_t running = 1; /* cores started, core 0 included; core 0 only */

uint32_t aot_cores_start(void)
{
#if AOT_BOARD_CORES > 1
    if (running == 1) {
        running = aot_port_start_cores(aot_core_worker);
    }
#endif
    return running;
}

int32_t aot_core_submit(uint32_t core, aot_core_fn fn, const void *arg)
{
    aot_core_queue_t *q;
    uint32_t head;
    if (core == 0 || core >= running || fn == 0) {
        return AOT_ERR_BAD_ARGUMENT;
    }
    q = &queues[core - 1];
    head = q->head;
    while (head - q->tail >= AOT_CORE_QUEUE_SLOTS) {
        AOT_SLEEP(); /* full: the worker's SEV after a task wakes us */
    }
    AOT_DMB(); /* the worker has read the slot before we overwrite it */
    q->slots[head % AOT_CORE_QUEUE_SLOTS].fn = fn;
    q->slots[head % AOT_CORE_QUEUE_SLOTS].arg = arg;
    AOT_DMB(); /* the slot (and the task's inputs) before the index */
    q->head = head + 1u;
    AOT_WAKE();
    return AOT_OK;
}

void aot_core_join(uint32_t core)
{
    aot_core_queue_t *q;
    if (core == 0 || core >= running) {
        return;
    }
    q = &queues[core - 1];
    while (q->tail != q->head) {
        AOT_SLEEP();
    }
    AOT_DMB(); /* the tasks' results after the index that says they are done */
}

void aot_core_worker(uint32_t core)
{
    aot_core_queue_t *q = &queues[core - 1];
    uint32_t tail = q->tail;
    for (;;) {
        aot_core_task_t task;
        while (q->head == tail) {
            AOT_SLEEP();
        }
        AOT_DMB(); /* the slot after the index that published it */
        task = q->slots[tail % AOT_CORE_QUEUE_SLOTS];
        task.fn(task.arg);
        AOT_DMB(); /* the task's results before the index */
        tail += 1u;
        q->tail = tail;
        AOT_WAKE();
    }
}
