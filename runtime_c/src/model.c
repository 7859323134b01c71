/* Model descriptor checks: see aot/model.h for the contract. */
#include "aot/model.h"

#include <stddef.h>

uint32_t aot_dtype_size(uint8_t dtype)
{
    switch (dtype) {
    case AOT_DTYPE_INT8:
    case AOT_DTYPE_UINT8:
        return 1;
    case AOT_DTYPE_INT16:
    case AOT_DTYPE_UINT16:
        return 2;
    case AOT_DTYPE_INT32:
    case AOT_DTYPE_UINT32:
    case AOT_DTYPE_FLOAT32:
        return 4;
    case AOT_DTYPE_INT64:
        return 8;
    default:
        return 0;
    }
}

static int tensor_ok(const aot_tensor_t *t)
{
    uint64_t bytes;
    uint8_t d;

    if (t->name == NULL || t->data == NULL || t->ndim > AOT_MAX_DIMS) {
        return 0;
    }
    if (t->role < AOT_ROLE_INPUT || t->role > AOT_ROLE_CONSTANT) {
        return 0;
    }
    bytes = aot_dtype_size(t->dtype);
    for (d = 0; d < t->ndim && bytes != 0; ++d) {
        bytes *= t->shape[d];
        if (bytes > 0xFFFFFFFFu) {
            return 0;
        }
    }
    return bytes != 0 && bytes == t->size_bytes;
}

aot_status_t aot_model_check(const aot_model_t *model)
{
    uint16_t i;

    if (model == NULL) {
        return AOT_ERR_BAD_ARGUMENT;
    }
    if (model->abi_version != AOT_MODEL_ABI_VERSION || model->name == NULL ||
        model->run == NULL || model->num_tensors > AOT_MAX_TENSORS ||
        model->num_kernels > AOT_MAX_KERNELS ||
        (model->num_tensors > 0 && model->tensors == NULL) ||
        (model->num_kernels > 0 && model->kernels == NULL)) {
        return AOT_ERR_BAD_MODEL;
    }
    for (i = 0; i < model->num_tensors; ++i) {
        if (!tensor_ok(&model->tensors[i])) {
            return AOT_ERR_BAD_MODEL;
        }
    }
    for (i = 0; i < model->num_kernels; ++i) {
        if (model->kernels[i].name == NULL || model->kernels[i].run == NULL) {
            return AOT_ERR_BAD_MODEL;
        }
    }
    return AOT_OK;
}
