/* The support header every generated kernel includes (aot/kernels/include/,
   copied beside the kernels with the operators' own headers from
   aot/kernels/<op>/include/): the fixed-point arithmetic and the int8
   helpers, for the core the file is built for; see docs/kernels.md. */
#ifndef AOT_KERNEL_UTIL_H
#define AOT_KERNEL_UTIL_H

#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"
#include "aot_kernel_int8.h"
#include "aot_conv2d.h"
#include "aot_dense.h"
#include "aot_kernel_blocked.h"
#include "aot_kernel_dwblock.h"

#endif /* AOT_KERNEL_UTIL_H */
