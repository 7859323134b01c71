/*
 * Cortex-M startup shared by the mps2, mps3-an547 and stm32 ports: vector table and reset
 * handler.  The reset handler copies .data from flash to RAM and every section
 * listed in .aot_copy_table (word triples: load address, start, end; the
 * constants a model copies to a faster memory, docs/memory.md), zeroes .bss,
 * turns the FPU on when the build uses it, paints the free stack when
 * AOT_STACK_PAINT is 1 (aot/config.h), and calls main().  Faults end the
 * program through aot_port_exit() so a crash under QEMU is an exit status
 * (AOT_EXIT_FAULT), never a hang.
 */
#include <stdint.h>

#include "aot/config.h"
#include "aot/platform.h"

#define AOT_EXIT_FAULT 120

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack, __aot_stack_limit;
extern const uint32_t __aot_copy_table_start[], __aot_copy_table_end[];
extern int main(void);
void aot_systick_handler(void);

void aot_reset_handler(void);
static void fault_handler(void);

void aot_reset_handler(void)
{
    uint32_t *src = &_sidata;
    uint32_t *dst;
    for (dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (const uint32_t *entry = __aot_copy_table_start; entry < __aot_copy_table_end;
         entry += 3) {
        src = (uint32_t *)(uintptr_t)entry[0];
        for (dst = (uint32_t *)(uintptr_t)entry[1]; dst < (uint32_t *)(uintptr_t)entry[2];) {
            *dst++ = *src++;
        }
    }
    for (dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* Full access to coprocessors 10 and 11 (FPU, and MVE on v8.1-M). */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n isb" ::: "memory");
#endif
#if AOT_STACK_PAINT
    {
        /* Everything below the stack pointer is free: nothing else lives
         * between the stack's bottom (the end of .bss, or the start of the
         * stack's section in another memory) and the stack pointer, and no
         * interrupt is enabled yet.  The
         * stores are volatile so that GCC does not make the loop a memset call,
         * whose own frame would lie in the region it paints. */
        volatile uint32_t *word;
        uint32_t *sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        for (word = &__aot_stack_limit; word < sp;) {
            *word++ = AOT_STACK_PAINT_WORD;
        }
    }
#endif
    aot_port_exit(main());
}

static void fault_handler(void)
{
    aot_port_exit(AOT_EXIT_FAULT);
}

typedef void (*vector_t)(void);

/* Entries 0..15 of the ARMv7-M/v8-M vector table; external interrupts are not
 * used (the UART is polled). */
__attribute__((section(".isr_vector"), used)) const vector_t aot_vectors[16] = {
    (vector_t)(uintptr_t)&_estack,
    aot_reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    fault_handler, /* SecureFault (v8-M) */
    0,
    0,
    0,
    fault_handler,        /* SVCall */
    fault_handler,        /* DebugMonitor */
    0,
    fault_handler,        /* PendSV */
    aot_systick_handler,  /* SysTick */
};
