/* Blocked int8 dot products: the tensor intrinsics of the auto tuner's
   ``block`` sketch (aot/tune/auto/sketch.py, aot/kernels/conv2d/blocked.py).
   One call accumulates a block of P pixels x O output channels over K
   reduction values:

     acc[p*acc_ps + o] += sum_{k<K} x[p*x_ps + k] * w[o*w_os + k]

   for P, O in 1..4.  Every argument but the pointers is a compile-time
   constant at the call and the helper is always inlined, so GCC unrolls the
   p and o loops and keeps the P*O sums in registers.  With the DSP
   extension each loaded word of input (P of them) and of weights (O) is
   sign extended once (SXTB16, even and odd bytes) and feeds 2*O (2*P)
   SMLADs: 4 bytes of the block cost P + O loads, 2(P + O) SXTB16 and 2PO
   SMLAD.  ``steps`` (1 or 2) is how many such 4-byte steps one iteration
   of the reduction loop does.  aot_block_row_s8 walks a row of pixels in
   such blocks (the tail one pixel at a time).  The portable loop wraps like int32 sums do,
   as the reference does, and gives the same bits. */
#ifndef AOT_KERNEL_BLOCKED_H
#define AOT_KERNEL_BLOCKED_H

#include "aot_kernel_target.h"
#include "aot_kernel_int8.h"

#define AOT_BLOCK_MAX 4

/* acc[p*acc_ps + o] = 0 for the block (the intrinsic's reset). */
AOT_INLINE int32_t aot_block_reset_s32(int32_t* acc, int32_t acc_ps, int32_t P, int32_t O) {
  int32_t p, o;
  AOT_UNROLL("GCC unroll 4")
  for (p = 0; p < P; ++p) {
    AOT_UNROLL("GCC unroll 4")
    for (o = 0; o < O; ++o) {
      acc[p * acc_ps + o] = 0;
    }
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
/* One 4-byte step of the DSP block at offset i. */
#define AOT_BLOCK_STEP(i)                                                         \
  do {                                                                            \
    int32_t xe[AOT_BLOCK_MAX], xo[AOT_BLOCK_MAX];                                 \
    AOT_UNROLL("GCC unroll 4")                                                    \
    for (p = 0; p < P; ++p) {                                                     \
      const uint32_t v = aot_load32(x + p * x_ps + (i));                          \
      xe[p] = __sxtb16((int32_t)v);                                               \
      xo[p] = aot_sxtb16_ror8(v);                                                 \
    }                                                                             \
    AOT_UNROLL("GCC unroll 4")                                                    \
    for (o = 0; o < O; ++o) {                                                     \
      const uint32_t u = aot_load32(w + o * w_os + (i));                          \
      const int32_t we = __sxtb16((int32_t)u), wo = aot_sxtb16_ror8(u);           \
      AOT_UNROLL("GCC unroll 4")                                                  \
      for (p = 0; p < P; ++p) {                                                   \
        s[p][o] = __smlad(xe[p], we, s[p][o]);                                    \
        s[p][o] = __smlad(xo[p], wo, s[p][o]);                                    \
      }                                                                           \
    }                                                                             \
  } while (0)
#endif

/* The block's update: acc += x . w over K (see the header's comment). */
AOT_INLINE int32_t aot_block_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_ps,
                                const int8_t* w, int32_t w_os, int32_t P, int32_t O,
                                int32_t K, int32_t steps) {
  int32_t s[AOT_BLOCK_MAX][AOT_BLOCK_MAX];
  int32_t p, o, i = 0;
  AOT_UNROLL("GCC unroll 4")
  for (p = 0; p < P; ++p) {
    AOT_UNROLL("GCC unroll 4")
    for (o = 0; o < O; ++o) {
      s[p][o] = acc[p * acc_ps + o];
    }
  }
#if defined(AOT_HAVE_DSP)
  if (steps == 2) {
    for (; i + 8 <= K; i += 8) {
      AOT_BLOCK_STEP(i);
      AOT_BLOCK_STEP(i + 4);
    }
  }
  for (; i + 4 <= K; i += 4) {
    AOT_BLOCK_STEP(i);
  }
#else
  (void)steps;
#endif
  for (; i < K; ++i) {
    AOT_UNROLL("GCC unroll 4")
    for (p = 0; p < P; ++p) {
      const int32_t xv = x[p * x_ps + i];
      AOT_UNROLL("GCC unroll 4")
      for (o = 0; o < O; ++o) {
        s[p][o] = (int32_t)((uint32_t)s[p][o] + (uint32_t)(xv * (int32_t)w[o * w_os + i]));
      }
    }
  }
  AOT_UNROLL("GCC unroll 4")
  for (p = 0; p < P; ++p) {
    AOT_UNROLL("GCC unroll 4")
    for (o = 0; o < O; ++o) {
      acc[p * acc_ps + o] = s[p][o];
    }
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
#undef AOT_BLOCK_STEP
#endif

/* npix pixels x O channels in blocks of P pixels (the last npix % P pixels
   one at a time): acc[p*acc_ps + o] += x[p*x_ps ..] . w[o*w_os ..]. */
AOT_INLINE int32_t aot_block_row_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_ps,
                                    const int8_t* w, int32_t w_os, int32_t npix, int32_t P,
                                    int32_t O, int32_t K, int32_t steps) {
  int32_t p = 0;
  for (; p + P <= npix; p += P) {
    aot_block_s8(acc + p * acc_ps, acc_ps, x + p * x_ps, x_ps, w, w_os, P, O, K, steps);
  }
  for (; p < npix; ++p) {
    aot_block_s8(acc + p * acc_ps, acc_ps, x + p * x_ps, x_ps, w, w_os, 1, O, K, steps);
  }
  return 0;
}

#endif /* AOT_KERNEL_BLOCKED_H */
