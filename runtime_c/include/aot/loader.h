/*
 * The RAM loader of tuning images: code sent by the host, checked, then run as
 * a kernel (AOT_RPC_LOADED_KERNEL).  Present only when AOT_RPC_LOADER_BYTES > 0
 * (config.h); the RPC server calls it for LOAD_CODE and COMMIT_CODE.
 *
 * The region is one static array in the section .bss.aot_ram_code, which the
 * Cortex-M linker script places on its own, 32-byte aligned, before .bss.
 * Nothing the host sends is trusted: every write lies inside the region,
 * and code becomes callable only after COMMIT_CODE has checked its length,
 * its entry point and the CRC-32 of the whole image.  Any later write makes
 * it uncallable again until the next commit.
 */
#ifndef AOT_LOADER_H
#define AOT_LOADER_H

#include <stdint.h>

#include "aot/config.h"
#include "aot/model.h"
#include "aot/status.h"

/* Address and size of the region (for INFO). */
uint32_t aot_loader_origin(void);
uint32_t aot_loader_size(void);

/* Copy len bytes to region[offset..): AOT_ERR_OUT_OF_RANGE if that leaves it. */
aot_status_t aot_loader_write(uint32_t offset, const uint8_t *data, uint32_t len);

/* Check region[0..length) against crc (CRC-32, as frames use) and return the
 * function at region + entry in *fn.  On Thumb-only cores entry must have bit
 * 0 set.  Makes the new code visible to instruction fetches (barriers, cache
 * maintenance) before returning.  Errors: AOT_ERR_OUT_OF_RANGE (length 0 or
 * beyond the region, entry not inside the image), AOT_ERR_BAD_ARGUMENT (a
 * Thumb entry without bit 0), AOT_ERR_BAD_CHECKSUM. */
aot_status_t aot_loader_commit(uint32_t length, uint32_t crc, uint32_t entry, aot_run_fn *fn);

#endif /* AOT_LOADER_H */
