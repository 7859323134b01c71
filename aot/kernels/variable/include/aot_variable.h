/* Resource variables: READ_VARIABLE copies the state into its output,
   ASSIGN_VARIABLE its value into the state and into its own output.  One
   helper for both, called by a kernel whose loop IR is that call, so the C
   and the LLVM paths run this same code (aot/codegen/llvm_helpers.py). */
#ifndef AOT_VARIABLE_H
#define AOT_VARIABLE_H

#include <string.h>
#include "aot_kernel_target.h"

/* Copy bytes bytes of src to dst and, when second is not dst, to second too.
   No restrict on dst: ASSIGN_VARIABLE may pass one buffer as dst and second,
   which GCC's -Wrestrict (an error under -Werror) rightly refuses. */
AOT_INLINE int32_t aot_variable_copy(const void* src, void* dst, void* second,
                                     int32_t bytes) {
  memcpy(dst, src, (size_t)bytes);
  if (second != dst) {
    memcpy(second, src, (size_t)bytes);
  }
  return 0;
}

#endif /* AOT_VARIABLE_H */
