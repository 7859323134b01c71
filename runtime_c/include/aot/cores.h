/*
 * Work on further cores of a multi-core microcontroller (docs/targets.md
 * "Virtual devices"): core 0 boots, runs the RPC and the timer, and hands
 * tasks to the other cores; no OS, no malloc, no C11 atomics.
 *
 * Each further core has one single-producer single-consumer ring of
 * AOT_CORE_QUEUE_SLOTS tasks in RAM both cores reach.  Only core 0 writes
 * `head`, only the worker writes `tail`; each index only grows (mod 2^32),
 * so `head - tail` is the number of queued or running tasks.  A slot is
 * written before `head` moves past it and read before `tail` does, with a
 * DMB between the data and the index; the side that moves an index then
 * executes DSB and SEV so that a core waiting in WFE wakes and looks again.
 * WFE cannot miss that wake-up: an SEV between a core's check and its WFE
 * sets the core's event register and the WFE returns at once.
 *
 * The barrier, aot_core_join(), returns when `tail` has caught up with
 * `head`: every task handed to that core has finished and its stores are
 * visible to core 0.
 */
#ifndef AOT_CORES_H
#define AOT_CORES_H

#include <stdint.h>

#include "aot/config.h"

/* A task: fn(arg) on the worker core.  arg points to data both cores reach. */
typedef void (*aot_core_fn)(const void *arg);

typedef struct {
    aot_core_fn fn;
    const void *arg;
} aot_core_task_t;

typedef struct {
    volatile uint32_t head; /* written by core 0 only: tasks handed over */
    volatile uint32_t tail; /* written by the worker only: tasks finished */
    aot_core_task_t slots[AOT_CORE_QUEUE_SLOTS];
} aot_core_queue_t;

/* Cores of the board (the record's cores.count, -DAOT_BOARD_CORES). */
#ifndef AOT_BOARD_CORES
#define AOT_BOARD_CORES 1
#endif

/* Core 0: start the further cores through the port (once; later calls do
 * nothing) and return how many cores run, core 0 included. */
uint32_t aot_cores_start(void);

/* Core 0: queue fn(arg) on `core` (1 .. AOT_BOARD_CORES - 1), waiting for a
 * free slot when the queue is full.  AOT_ERR_BAD_ARGUMENT for a core the
 * board lacks or that aot_cores_start() has not started, or a NULL fn. */
int32_t aot_core_submit(uint32_t core, aot_core_fn fn, const void *arg);

/* Core 0: wait until every task handed to `core` has finished. */
void aot_core_join(uint32_t core);

/* The loop a further core runs once started: take tasks from its queue and
 * run them, sleeping in WFE when there are none.  Never returns. */
void aot_core_worker(uint32_t core);

/* Port hook (ports of multi-core boards only): start cores 1 ..
 * AOT_BOARD_CORES - 1, each running entry(its number) on its own stack;
 * return how many cores run, core 0 included.  The port does not depend on
 * this file: firmware that hands out no work links neither src/cores.c nor
 * anything that starts a core.  Core k starts from the port's vector table
 * named core<k>_vectors (word 0 the end of the core's stack array, word 1 the
 * function it starts in, which calls entry; then its exception handlers):
 * aot reads it from the linked firmware to bound that core's stack and
 * refuses firmware whose stack is too small (aot/firmware/stack.py). */
uint32_t aot_port_start_cores(void (*entry)(uint32_t core));

#endif /* AOT_CORES_H */
