/*
 * The RAM loader (aot/loader.h); compiled to nothing unless
 * AOT_RPC_LOADER_BYTES > 0.
 */
#include "aot/config.h"

#if AOT_RPC_LOADER_BYTES > 0

#include "aot/loader.h"

#include <stddef.h>
#include <string.h>

#include "aot/frame.h"

#if !AOT_RPC_LOADER_DRY_RUN && !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') && \
    !defined(__riscv)
#error "the RAM loader calls code only on Cortex-M and RISC-V; AOT_RPC_LOADER_DRY_RUN=1 tests it elsewhere"
#endif

static uint8_t aot_loader_region[AOT_RPC_LOADER_BYTES]
    __attribute__((aligned(32), section(".bss.aot_ram_code")));

uint32_t aot_loader_origin(void)
{
    return (uint32_t)(uintptr_t)aot_loader_region;
}

uint32_t aot_loader_size(void)
{
    return (uint32_t)AOT_RPC_LOADER_BYTES;
}

aot_status_t aot_loader_write(uint32_t offset, const uint8_t *data, uint32_t len)
{
    /* Written so that no sum can overflow. */
    if (offset > sizeof aot_loader_region || len > sizeof aot_loader_region - offset) {
        return AOT_ERR_OUT_OF_RANGE;
    }
    memcpy(aot_loader_region + offset, data, len);
    return AOT_OK;
}

#if AOT_RPC_LOADER_DRY_RUN
static int32_t dry_run(void *ctx)
{
    (void)ctx;
    return 0;
}
#endif

/* Make region[0..length) visible to instruction fetches.  On Cortex-M7/M55
 * with caches on, written bytes may sit in the D-cache and stale code in the
 * I-cache: clean the one by address, invalidate the other.  CCR.DC/IC read 0
 * on cores without caches (M0+, M3, M4), which then need only the barriers. */
static void sync_code(uint32_t length)
{
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    volatile uint32_t *const ccr = (volatile uint32_t *)0xE000ED14u;
    volatile uint32_t *const iciallu = (volatile uint32_t *)0xE000EF50u;
    volatile uint32_t *const dccmvac = (volatile uint32_t *)0xE000EF68u;
    __asm__ volatile("dsb" ::: "memory");
    if ((*ccr & (1u << 16)) != 0) {
        uintptr_t a = (uintptr_t)aot_loader_region & ~(uintptr_t)31u;
        for (; a < (uintptr_t)aot_loader_region + length; a += 32u) {
            *dccmvac = (uint32_t)a;
        }
        __asm__ volatile("dsb" ::: "memory");
    }
    if ((*ccr & (1u << 17)) != 0) {
        *iciallu = 0;
        __asm__ volatile("dsb" ::: "memory");
    }
    __asm__ volatile("isb" ::: "memory");
#elif defined(__riscv)
    (void)length;
    __asm__ volatile(".insn i 0x0F, 1, x0, x0, 0" ::: "memory"); /* fence.i */
#else
    (void)length;
#endif
}

aot_status_t aot_loader_commit(uint32_t length, uint32_t crc, uint32_t entry, aot_run_fn *fn)
{
    uintptr_t address;
    if (length == 0 || length > sizeof aot_loader_region || (entry & ~1u) >= length) {
        return AOT_ERR_OUT_OF_RANGE;
    }
#if defined(__thumb__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    if ((entry & 1u) == 0) {
        return AOT_ERR_BAD_ARGUMENT; /* an Arm-state branch faults on M-profile */
    }
#endif
    if (aot_crc32(0, aot_loader_region, length) != crc) {
        return AOT_ERR_BAD_CHECKSUM;
    }
    sync_code(length);
#if AOT_RPC_LOADER_DRY_RUN
    (void)address;
    *fn = dry_run;
#else
    address = (uintptr_t)aot_loader_region + entry;
    *fn = (aot_run_fn)address; /* implementation-defined, and what loading code means */
#endif
    return AOT_OK;
}

#else
typedef int aot_loader_not_built; /* ISO C forbids an empty translation unit */
#endif
