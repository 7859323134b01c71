/* dense's int8 helpers (aot/kernels/dense/include): the row intrinsic
   aot_dense_s8, built on aot_kernel_int8.h; Helium version in
   aot_dense_mve.h.  See docs/kernels.md. */
#ifndef AOT_DENSE_H
#define AOT_DENSE_H

#include "aot_kernel_int8.h"
#if defined(AOT_HAVE_MVE)
#include "aot_dense_mve.h"
#endif

/* acc[u] = x . w[u*depth ...] for all `units` rows of a dense layer's weights:
   four units at a time share each widened input word. */
AOT_INLINE int32_t aot_dense_plain_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                      int32_t units, int32_t depth) {
  int32_t u;
  for (u = 0; u + 4 <= units; u += 4) {
    const int8_t* w0 = w + u * depth;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32_t i = 0;
#if defined(AOT_HAVE_DSP)
    for (; i + 4 <= depth; i += 4) {
      const uint32_t xv = aot_load32(x + i);
      const int32_t xe = __sxtb16((int32_t)xv), xo = aot_sxtb16_ror8(xv);
      uint32_t wv = aot_load32(w0 + i);
      s0 = __smlad(xe, __sxtb16((int32_t)wv), s0);
      s0 = __smlad(xo, aot_sxtb16_ror8(wv), s0);
      wv = aot_load32(w0 + depth + i);
      s1 = __smlad(xe, __sxtb16((int32_t)wv), s1);
      s1 = __smlad(xo, aot_sxtb16_ror8(wv), s1);
      wv = aot_load32(w0 + 2 * depth + i);
      s2 = __smlad(xe, __sxtb16((int32_t)wv), s2);
      s2 = __smlad(xo, aot_sxtb16_ror8(wv), s2);
      wv = aot_load32(w0 + 3 * depth + i);
      s3 = __smlad(xe, __sxtb16((int32_t)wv), s3);
      s3 = __smlad(xo, aot_sxtb16_ror8(wv), s3);
    }
#endif
    for (; i < depth; ++i) {
      const int32_t xv = x[i];
      s0 = (int32_t)((uint32_t)s0 + (uint32_t)(xv * (int32_t)w0[i]));
      s1 = (int32_t)((uint32_t)s1 + (uint32_t)(xv * (int32_t)w0[depth + i]));
      s2 = (int32_t)((uint32_t)s2 + (uint32_t)(xv * (int32_t)w0[2 * depth + i]));
      s3 = (int32_t)((uint32_t)s3 + (uint32_t)(xv * (int32_t)w0[3 * depth + i]));
    }
    acc[u] = s0;
    acc[u + 1] = s1;
    acc[u + 2] = s2;
    acc[u + 3] = s3;
  }
  /* the last units % 4, from a start GCC folds (no spurious overflow warning) */
  for (u = units - units % 4; u < units; ++u) {
    acc[u] = aot_dot1_s8(0, x, w + u * depth, depth);
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
/* Words of the widened input segment of aot_dense_wide_s8: 128 int8 inputs,
   256 bytes of stack. */
#define AOT_DENSE_WIDE_WORDS 64

/* aot_dense_plain_s8 for a depth that is a multiple of 4: the input is widened
   one segment of 2 * AOT_DENSE_WIDE_WORDS values at a time and each segment
   is read with LDRD by every block of four units; the segments after the
   first add to the partial sums already in acc.  The buffer has the same
   size whatever the depth, so a deep layer costs no extra stack. */
AOT_INLINE int32_t aot_dense_wide_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                     int32_t units, int32_t depth) {
  int32_t wide[AOT_DENSE_WIDE_WORDS];
  int32_t d0;
  for (d0 = 0; d0 < depth; d0 += 2 * AOT_DENSE_WIDE_WORDS) {
    const int32_t seg = depth - d0 < 2 * AOT_DENSE_WIDE_WORDS ? depth - d0
                                                              : 2 * AOT_DENSE_WIDE_WORDS;
    const int8_t* src = x + d0;
    const int8_t* const end = src + seg;
    int32_t* dst = wide;
    int32_t i, u;
    for (; src != end; src += 4, dst += 2) {
      const uint32_t v = aot_load32(src);
      dst[0] = __sxtb16((int32_t)v);
      dst[1] = aot_sxtb16_ror8(v);
    }
    for (u = 0; u + 4 <= units; u += 4) {
      const int8_t* w0 = w + u * depth + d0;
      const int32_t* xa = wide;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      if (d0 > 0) {
        s0 = acc[u];
        s1 = acc[u + 1];
        s2 = acc[u + 2];
        s3 = acc[u + 3];
      }
      for (i = 0; i < seg; i += 4) {
        int32_t xe, xo;
        uint32_t wv;
        xa = aot_load_pair(xa, &xe, &xo);
        wv = aot_load32(w0 + i);
        s0 = __smlad(xe, __sxtb16((int32_t)wv), s0);
        s0 = __smlad(xo, aot_sxtb16_ror8(wv), s0);
        wv = aot_load32(w0 + depth + i);
        s1 = __smlad(xe, __sxtb16((int32_t)wv), s1);
        s1 = __smlad(xo, aot_sxtb16_ror8(wv), s1);
        /* keeps GCC from hoisting all four weight loads, which runs the loop
           out of registers (spills cost 5 instructions per iteration) */
        __asm__ volatile("" ::: "memory");
        wv = aot_load32(w0 + 2 * depth + i);
        s2 = __smlad(xe, __sxtb16((int32_t)wv), s2);
        s2 = __smlad(xo, aot_sxtb16_ror8(wv), s2);
        wv = aot_load32(w0 + 3 * depth + i);
        s3 = __smlad(xe, __sxtb16((int32_t)wv), s3);
        s3 = __smlad(xo, aot_sxtb16_ror8(wv), s3);
      }
      acc[u] = s0;
      acc[u + 1] = s1;
      acc[u + 2] = s2;
      acc[u + 3] = s3;
    }
    for (u = units - units % 4; u < units; ++u) {
      acc[u] = aot_dot1_wide_s8(d0 > 0 ? acc[u] : 0, wide, w + u * depth + d0, seg);
    }
  }
  return 0;
}
#endif

/* acc[u] = x . w[u*depth ...] for all `units` rows of a dense layer's weights
   (tensor intrinsic of the arm_cpu dense strategy). */
AOT_INLINE int32_t aot_dense_s8(int32_t* acc, const int8_t* x, const int8_t* w, int32_t units,
                                int32_t depth) {
#if defined(AOT_HAVE_MVE)
  return aot_mve_dense_s8(acc, x, w, units, depth);
#elif defined(AOT_HAVE_DSP)
  /* one block of four units or fewer reads the input once anyway */
  if (depth % 4 == 0 && units > 4) {
    return aot_dense_wide_s8(acc, x, w, units, depth);
  }
#endif
  return aot_dense_plain_s8(acc, x, w, units, depth);
}

#endif /* AOT_DENSE_H */
