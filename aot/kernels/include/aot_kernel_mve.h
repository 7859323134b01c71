/* Helium (MVE) versions of the dot products of aot_kernel_int8.h, which
   includes this file when the core has integer MVE (the operators' own
   Helium helpers: aot_conv2d_mve.h, aot_dense_mve.h). */
#ifndef AOT_KERNEL_MVE_H
#define AOT_KERNEL_MVE_H

#include "aot_kernel_target.h"
#include <arm_mve.h>
#include <string.h>

/* sum + a . b over n int8 values: 16 products per VMLADAVA, the last n % 16
   under a tail predicate (lanes past n are not loaded). */
AOT_INLINE int32_t aot_mve_dot1_s8(int32_t sum, const int8_t* a, const int8_t* b, int32_t n) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    sum = vmladavaq_s8(sum, vld1q_s8(a + i), vld1q_s8(b + i));
  }
  if (i < n) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    sum = vmladavaq_p_s8(sum, vld1q_z_s8(a + i, p), vld1q_z_s8(b + i, p), p);
  }
  return sum;
}

/* s[2*i + j] += a_i . b_j for two inputs and two weight vectors of length n:
   four loads feed four VMLADAVAs (64 multiply-accumulates). */
AOT_INLINE void aot_mve_dot2x2_s8(int32_t* s, const int8_t* a0, const int8_t* a1,
                                  const int8_t* b0, const int8_t* b1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const int8x16_t x0 = vld1q_s8(a0 + i), x1 = vld1q_s8(a1 + i);
    const int8x16_t y0 = vld1q_s8(b0 + i), y1 = vld1q_s8(b1 + i);
    s00 = vmladavaq_s8(s00, x0, y0);
    s01 = vmladavaq_s8(s01, x0, y1);
    s10 = vmladavaq_s8(s10, x1, y0);
    s11 = vmladavaq_s8(s11, x1, y1);
  }
  if (i < n) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    const int8x16_t x0 = vld1q_z_s8(a0 + i, p), x1 = vld1q_z_s8(a1 + i, p);
    const int8x16_t y0 = vld1q_z_s8(b0 + i, p), y1 = vld1q_z_s8(b1 + i, p);
    s00 = vmladavaq_p_s8(s00, x0, y0, p);
    s01 = vmladavaq_p_s8(s01, x0, y1, p);
    s10 = vmladavaq_p_s8(s10, x1, y0, p);
    s11 = vmladavaq_p_s8(s11, x1, y1, p);
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}

/* s[j] += a . b_j: two dot products sharing the input vector. */
AOT_INLINE void aot_mve_dot1x2_s8(int32_t* s, const int8_t* a, const int8_t* b0,
                                  const int8_t* b1, int32_t n) {
  int32_t s0 = s[0], s1 = s[1];
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const int8x16_t x = vld1q_s8(a + i);
    s0 = vmladavaq_s8(s0, x, vld1q_s8(b0 + i));
    s1 = vmladavaq_s8(s1, x, vld1q_s8(b1 + i));
  }
  if (i < n) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    const int8x16_t x = vld1q_z_s8(a + i, p);
    s0 = vmladavaq_p_s8(s0, x, vld1q_z_s8(b0 + i, p), p);
    s1 = vmladavaq_p_s8(s1, x, vld1q_z_s8(b1 + i, p), p);
  }
  s[0] = s0;
  s[1] = s1;
}

#endif /* AOT_KERNEL_MVE_H */
