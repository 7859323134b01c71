/*
 * The model descriptor: how firmware tells the runtime what a model is.
 *
 * The AOT executor generates one `aot_model_t` (a const object, placed in
 * flash) per compiled model; hand-written firmware may write one too.  The RPC
 * server uses it as its only view of memory: the host can read and write the
 * declared tensors (within their sizes, and only writable ones for writes) and
 * run the model or one of its named kernels.  Nothing else is reachable from
 * the wire.
 *
 * Contract (checked by aot_model_check()):
 *   - `tensors[0..num_tensors)` have a non-NULL name and data pointer, a known
 *     dtype, 0 <= ndim <= AOT_MAX_DIMS, and
 *     size_bytes == dtype size * product(shape[0..ndim)).
 *   - Only tensors whose storage really is writable RAM may carry
 *     AOT_TENSOR_WRITABLE; the server writes through `data` only then.
 *   - `run` is not NULL; `kernels[i].run` are not NULL.
 *   - Buffers do not move and stay valid for the life of the firmware.
 * Functions return 0 on success; any other value is reported to the host as
 * AOT_ERR_RUN_FAILED together with that value.
 */
#ifndef AOT_MODEL_H
#define AOT_MODEL_H

#include <stdint.h>

#include "aot/config.h"
#include "aot/status.h"

/* Version of this struct layout; bumped on any incompatible change. */
#define AOT_MODEL_ABI_VERSION 1u

/* Element types; the numbers are part of the wire protocol. */
typedef enum {
    AOT_DTYPE_INT8 = 1,
    AOT_DTYPE_UINT8 = 2,
    AOT_DTYPE_INT16 = 3,
    AOT_DTYPE_UINT16 = 4,
    AOT_DTYPE_INT32 = 5,
    AOT_DTYPE_UINT32 = 6,
    AOT_DTYPE_FLOAT32 = 7,
    AOT_DTYPE_INT64 = 8
} aot_dtype_t;

/* What a buffer is for; also part of the wire protocol. */
typedef enum {
    AOT_ROLE_INPUT = 1,     /* the host writes it before a run */
    AOT_ROLE_OUTPUT = 2,    /* the host reads it after a run */
    AOT_ROLE_WORKSPACE = 3, /* scratch memory of the model (readable for debugging) */
    AOT_ROLE_CONSTANT = 4   /* weights and other constants */
} aot_role_t;

/* Bits of aot_tensor_t.flags. */
#define AOT_TENSOR_WRITABLE 0x01u

typedef struct {
    const char *name;             /* unique within the model */
    uint8_t dtype;                /* aot_dtype_t */
    uint8_t role;                 /* aot_role_t */
    uint8_t flags;                /* AOT_TENSOR_* bits */
    uint8_t ndim;                 /* number of used entries of shape */
    uint32_t shape[AOT_MAX_DIMS]; /* row-major (C order) */
    uint32_t size_bytes;          /* bytes at data */
    const void *data;             /* writable through a cast only if AOT_TENSOR_WRITABLE */
} aot_tensor_t;

/* One inference (or one kernel) over the model's own buffers. `ctx` is the
 * descriptor's `ctx` field, passed through unchanged. */
typedef int32_t (*aot_run_fn)(void *ctx);

typedef struct {
    const char *name; /* e.g. "fused_conv2d_add_0", unique within the model */
    aot_run_fn run;
} aot_kernel_t;

typedef struct {
    uint32_t abi_version;         /* AOT_MODEL_ABI_VERSION */
    const char *name;             /* the model's name prefix, e.g. "kws" */
    const char *target_hash;      /* hash of the compile target, or "" */
    uint16_t num_tensors;
    const aot_tensor_t *tensors;
    uint16_t num_kernels;         /* may be 0 */
    const aot_kernel_t *kernels;  /* may be NULL when num_kernels == 0 */
    aot_run_fn run;               /* one whole inference */
    void *ctx;                    /* passed to run and to every kernel */
} aot_model_t;

/* Bytes per element of a dtype, or 0 for an unknown code. */
uint32_t aot_dtype_size(uint8_t dtype);

/* Check a descriptor against the contract above: AOT_OK or AOT_ERR_BAD_MODEL. */
aot_status_t aot_model_check(const aot_model_t *model);

#endif /* AOT_MODEL_H */
