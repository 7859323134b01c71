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

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && !defined(AOT_NO_ASM)
/* Helium's load and multiply units overlap when their instructions
   alternate (a vector load after a VMLADAVA, or the reverse, gains a cycle
   of its two), so the 2x2 block's step is one asm statement in that order,
   software-pipelined: the previous step's fourth product (x1 . y1) goes
   between this step's first two loads.  GCC's own order put the four loads
   first.  VMLADAVA takes an even accumulator register ("Te"). */
#define AOT_MVE_DOT2X2_ASM 1
#endif

/* s[2*i + j] += a_i . b_j for two inputs and two weight vectors of length n:
   four loads feed four VMLADAVAs (64 multiply-accumulates). */
AOT_INLINE void aot_mve_dot2x2_s8(int32_t* s, const int8_t* a0, const int8_t* a1,
                                  const int8_t* b0, const int8_t* b1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t i = 0;
#if defined(AOT_MVE_DOT2X2_ASM)
  if (n >= 48) { /* one or two steps gain nothing from the pipelining */
    int8x16_t x0, y0, x1 = vdupq_n_s8(0), y1 = x1;
    const int8_t *p0 = a0, *p1 = a1, *q0 = b0, *q1 = b1;
    AOT_UNROLL("GCC unroll 16")
    for (; i + 16 <= n; i += 16) {
      __asm__("vldrb.8 %q[x0], [%[p0]], #16\n\t"
              "vmladava.s8 %[s11], %q[x1], %q[y1]\n\t"
              "vldrb.8 %q[y0], [%[q0]], #16\n\t"
              "vmladava.s8 %[s00], %q[x0], %q[y0]\n\t"
              "vldrb.8 %q[x1], [%[p1]], #16\n\t"
              "vmladava.s8 %[s10], %q[x1], %q[y0]\n\t"
              "vldrb.8 %q[y1], [%[q1]], #16\n\t"
              "vmladava.s8 %[s01], %q[x0], %q[y1]"
              : [x0] "=&w"(x0), [y0] "=&w"(y0), [x1] "+&w"(x1), [y1] "+&w"(y1),
                [s00] "+Te"(s00), [s01] "+Te"(s01), [s10] "+Te"(s10), [s11] "+Te"(s11),
                [p0] "+r"(p0), [p1] "+r"(p1), [q0] "+r"(q0), [q1] "+r"(q1)
              :
              : "memory");
    }
    s11 = vmladavaq_s8(s11, x1, y1);
  }
#endif
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
#if defined(AOT_MVE_DOT2X2_ASM)
  /* the same alternation as aot_mve_dot2x2_s8's step (without pipelining:
     unrolled, the next step's first load follows this step's last VMLADAVA) */
  const int8_t *p = a, *q0 = b0, *q1 = b1;
  AOT_UNROLL("GCC unroll 16")
  for (; i + 16 <= n; i += 16) {
    int8x16_t x, y0, y1;
    __asm__("vldrb.8 %q[x], [%[p]], #16\n\t"
            "vldrb.8 %q[y0], [%[q0]], #16\n\t"
            "vmladava.s8 %[s0], %q[x], %q[y0]\n\t"
            "vldrb.8 %q[y1], [%[q1]], #16\n\t"
            "vmladava.s8 %[s1], %q[x], %q[y1]"
            : [x] "=&w"(x), [y0] "=&w"(y0), [y1] "=&w"(y1), [s0] "+Te"(s0), [s1] "+Te"(s1),
              [p] "+r"(p), [q0] "+r"(q0), [q1] "+r"(q1)
            :
            : "memory");
  }
#endif
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
