/*
 * Register access of the hardware ports (stm32, nrf52, rp2040, esp32c3).
 *
 * Every peripheral register a port's clock, cache and UART set-up touches
 * goes through these functions instead of a volatile pointer, so that the
 * same port.c also builds for the machine running the tests with
 * -DAOT_MMIO_RECORD: there the two primitives are the test's recorder
 * (tests/runtime_c/regsim/regsim.c), which logs every read and write in
 * order and answers reads from a small model of the chip.  On the target
 * they are plain 32-bit volatile accesses and inline to the same code a
 * volatile pointer gives.
 *
 * AOT_MMIO_HOST is 1 in the recording build: a port keeps instructions the
 * host cannot execute (CSR accesses, bkpt) out of it with #if !AOT_MMIO_HOST.
 */
#ifndef AOT_MMIO_H
#define AOT_MMIO_H

#include <stdint.h>

#if defined(AOT_MMIO_RECORD)
#define AOT_MMIO_HOST 1
uint32_t aot_mmio_read(uint32_t addr);
void aot_mmio_write(uint32_t addr, uint32_t value);
/* A memory barrier (Arm: DSB then ISB) where the order of accesses to the
 * system control space matters (cache maintenance); the recorder logs it. */
void aot_mmio_sync(void);
#else
#define AOT_MMIO_HOST 0
static inline uint32_t aot_mmio_read(uint32_t addr)
{
    return *(volatile uint32_t *)(uintptr_t)addr;
}

static inline void aot_mmio_write(uint32_t addr, uint32_t value)
{
    *(volatile uint32_t *)(uintptr_t)addr = value;
}

static inline void aot_mmio_sync(void)
{
#if defined(__arm__)
    __asm__ volatile("dsb 0xF\n isb 0xF" ::: "memory");
#elif defined(__riscv)
    __asm__ volatile("fence" ::: "memory");
#else
    __asm__ volatile("" ::: "memory");
#endif
}
#endif

/* Read-modify-write: the bits in `mask` become those of `value`, every
 * other bit (reserved ones included) keeps what the register holds. */
static inline void aot_mmio_modify(uint32_t addr, uint32_t mask, uint32_t value)
{
    aot_mmio_write(addr, (aot_mmio_read(addr) & ~mask) | (value & mask));
}

static inline void aot_mmio_set(uint32_t addr, uint32_t bits)
{
    aot_mmio_write(addr, aot_mmio_read(addr) | bits);
}

static inline void aot_mmio_clear(uint32_t addr, uint32_t bits)
{
    aot_mmio_write(addr, aot_mmio_read(addr) & ~bits);
}

/* Poll until (register & mask) == value, at most `polls` reads: 1 when it
 * got there, 0 when it gave up.  Every wait of a port's set-up is bounded
 * so that a missing crystal or a clock that does not lock never hangs the
 * board silently. */
static inline int aot_mmio_wait(uint32_t addr, uint32_t mask, uint32_t value, uint32_t polls)
{
    uint32_t n;
    for (n = 0; n < polls; ++n) {
        if ((aot_mmio_read(addr) & mask) == value) {
            return 1;
        }
    }
    return 0;
}

#endif /* AOT_MMIO_H */
