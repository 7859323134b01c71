/* Helium (MVE) version of dense's row intrinsic (aot_dense.h includes it
   when the core has integer MVE). */
#ifndef AOT_DENSE_MVE_H
#define AOT_DENSE_MVE_H

#include "aot_kernel_mve.h"

/* acc[u] = x . w[u*depth ...] for all units of a dense layer: four units
   share each loaded input vector. */
AOT_INLINE int32_t aot_mve_dense_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                    int32_t units, int32_t depth) {
  int32_t u;
  for (u = 0; u + 4 <= units; u += 4) {
    const int8_t* w0 = w + u * depth;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32_t i = 0;
    for (; i + 16 <= depth; i += 16) {
      const int8x16_t xv = vld1q_s8(x + i);
      s0 = vmladavaq_s8(s0, xv, vld1q_s8(w0 + i));
      s1 = vmladavaq_s8(s1, xv, vld1q_s8(w0 + depth + i));
      s2 = vmladavaq_s8(s2, xv, vld1q_s8(w0 + 2 * depth + i));
      s3 = vmladavaq_s8(s3, xv, vld1q_s8(w0 + 3 * depth + i));
    }
    if (i < depth) {
      const mve_pred16_t p = vctp8q((uint32_t)(depth - i));
      const int8x16_t xv = vld1q_z_s8(x + i, p);
      s0 = vmladavaq_p_s8(s0, xv, vld1q_z_s8(w0 + i, p), p);
      s1 = vmladavaq_p_s8(s1, xv, vld1q_z_s8(w0 + depth + i, p), p);
      s2 = vmladavaq_p_s8(s2, xv, vld1q_z_s8(w0 + 2 * depth + i, p), p);
      s3 = vmladavaq_p_s8(s3, xv, vld1q_z_s8(w0 + 3 * depth + i, p), p);
    }
    acc[u] = s0;
    acc[u + 1] = s1;
    acc[u + 2] = s2;
    acc[u + 3] = s3;
  }
  for (u = units - units % 4; u < units; ++u) {
    acc[u] = aot_mve_dot1_s8(0, x, w + u * depth, depth);
  }
  return 0;
}

#endif /* AOT_DENSE_MVE_H */
