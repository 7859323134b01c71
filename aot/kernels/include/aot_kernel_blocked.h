/* Blocked int8 dot products: the tensor intrinsics of the auto tuner's
   ``block`` sketch (aot/tune/auto/sketch.py, aot/kernels/conv2d/blocked.py).
   One call of aot_block_row_s8 accumulates npix pixels x nch output channels
   over K reduction values,

     acc[p*acc_ps + o] += sum_{k<K} x[p*x_ps + k] * w[o*w_os + k],

   in blocks of P pixels x O channels (aot_block_s8; a last partial block of
   pixels one pixel at a time).  Every argument but the pointers is a
   compile-time constant at the call and the helpers are always inlined, so
   GCC unrolls the p and o loops and keeps the P*O sums in registers.

   With the DSP extension, 4 bytes of the block cost P + O loaded words,
   2(P + O) SXTB16 and 2PO SMLAD.  Either operand may instead be pre-widened
   ("wide"): int16 values, each chunk of 4 stored as SXTB16 pairs them
   (k0 k2 k1 k3, so one word holds the even and the next the odd halves; a
   last partial chunk in order), its 4 values then cost two word loads (one
   LDRD) and no SXTB16.  Wide weights are packed at compile time (the
   sketch's layout rule); wide input (``xw``) is widened by the call into a
   stack buffer once and read by every channel block.  ``steps`` (1 or 2) is
   how many 4-byte steps one iteration of the reduction loop does.  The
   portable loops read the same layouts and wrap like int32 sums do, as the
   reference does: every path gives the same bits. */
#ifndef AOT_KERNEL_BLOCKED_H
#define AOT_KERNEL_BLOCKED_H

#include "aot_kernel_target.h"
#include "aot_kernel_int8.h"

#define AOT_BLOCK_MAX 4
/* int16 values of widened input one call may hold (2 KiB of stack). */
#define AOT_BLOCK_WIDE_MAX 1024

/* Word reads and writes of wide operands (4-byte aligned: the layouts keep
   them so); a pair of words is one 64-bit read, so GCC emits one LDRD. */
typedef int32_t aot_s32_alias __attribute__((may_alias));
typedef uint64_t aot_u64_alias4 __attribute__((aligned(4), may_alias));

/* Where value k of a wide row of K values is stored (chunks of 4 as k0 k2 k1 k3). */
AOT_INLINE int32_t aot_block_lane(int32_t k, int32_t K) {
  return k < (K & ~3) ? ((k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1)) : k;
}

AOT_INLINE int32_t aot_block_x(const void* x, int32_t xw, int32_t at, int32_t k, int32_t K) {
  return xw ? (int32_t)((const int16_t*)x)[at + aot_block_lane(k, K)]
            : (int32_t)((const int8_t*)x)[at + k];
}

/* acc[p*acc_ps + o] = 0 for the npix x nch block (the intrinsic's reset). */
AOT_INLINE int32_t aot_block_reset_s32(int32_t* acc, int32_t acc_ps, int32_t npix,
                                       int32_t nch) {
  int32_t p, o;
  for (p = 0; p < npix; ++p) {
    AOT_UNROLL("GCC unroll 4")
    for (o = 0; o < nch; ++o) {
      acc[p * acc_ps + o] = 0;
    }
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
/* The even and odd halves of 4 values at element ``at`` of an operand. */
#define AOT_BLOCK_HALVES(ptr, wide, at, even, odd)                                \
  do {                                                                            \
    if (wide) {                                                                   \
      const uint64_t q_ = *(const aot_u64_alias4*)(const void*)((const int16_t*)(ptr) + (at)); \
      (even) = (int32_t)(uint32_t)q_;                                             \
      (odd) = (int32_t)(uint32_t)(q_ >> 32);                                      \
    } else {                                                                      \
      const uint32_t v_ = aot_load32((const int8_t*)(ptr) + (at));                \
      (even) = __sxtb16((int32_t)v_);                                             \
      (odd) = aot_sxtb16_ror8(v_);                                                \
    }                                                                             \
  } while (0)

/* One 4-value step of the block at offset i. */
#define AOT_BLOCK_STEP(i)                                                         \
  do {                                                                            \
    int32_t xe[AOT_BLOCK_MAX], xo[AOT_BLOCK_MAX];                                 \
    AOT_UNROLL("GCC unroll 4")                                                    \
    for (p = 0; p < P; ++p) {                                                     \
      AOT_BLOCK_HALVES(x, xw, p * x_ps + (i), xe[p], xo[p]);                      \
    }                                                                             \
    AOT_UNROLL("GCC unroll 4")                                                    \
    for (o = 0; o < O; ++o) {                                                     \
      int32_t we, wo;                                                             \
      AOT_BLOCK_HALVES(w, ww, o * w_os + (i), we, wo);                            \
      AOT_UNROLL("GCC unroll 4")                                                  \
      for (p = 0; p < P; ++p) {                                                   \
        s[p][o] = __smlad(xe[p], we, s[p][o]);                                    \
        s[p][o] = __smlad(xo[p], wo, s[p][o]);                                    \
      }                                                                           \
    }                                                                             \
  } while (0)
#endif

/* A P x O block: acc[p*acc_ps + o] += x_p . w_o over K (x_ps and w_os in
   elements of the operands: int8, or int16 when wide). */
AOT_INLINE void aot_block_s8(int32_t* acc, int32_t acc_ps, const void* x, int32_t x_ps,
                             int32_t xw, const void* w, int32_t w_os, int32_t ww, int32_t P,
                             int32_t O, int32_t K, int32_t steps) {
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
      const int32_t xv = aot_block_x(x, xw, p * x_ps, i, K);
      AOT_UNROLL("GCC unroll 4")
      for (o = 0; o < O; ++o) {
        const int32_t wv = aot_block_x(w, ww, o * w_os, i, K);
        s[p][o] = (int32_t)((uint32_t)s[p][o] + (uint32_t)(xv * wv));
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
}

#if defined(AOT_HAVE_DSP)
#undef AOT_BLOCK_STEP
#undef AOT_BLOCK_HALVES
#endif

/* dst[p*kp + lane(k)] = x[p*x_ps + k]: npix rows of K int8 values widened
   into the wide layout, kp (even) values apart. */
AOT_INLINE void aot_block_widen_s8(int16_t* dst, int32_t kp, const int8_t* x, int32_t x_ps,
                                   int32_t npix, int32_t K) {
  int32_t p, k;
  for (p = 0; p < npix; ++p) {
    const int8_t* row = x + p * x_ps;
    int16_t* out = dst + p * kp;
    k = 0;
#if defined(AOT_HAVE_DSP)
    for (; k + 4 <= K; k += 4) {
      const uint32_t v = aot_load32(row + k);
      aot_s32_alias* q = (aot_s32_alias*)(void*)(out + k);
      q[0] = __sxtb16((int32_t)v);
      q[1] = aot_sxtb16_ror8(v);
    }
#endif
    for (; k < K; ++k) {
      out[aot_block_lane(k, K)] = row[k];
    }
  }
}

/* npix pixels x nch channels (see the header's comment): channel blocks of O
   outside, pixel blocks of P inside.  ``ww``: w points at wide weights (w_os
   in int16 values); ``xw``: the input is widened once first (npix * K even-
   rounded values within AOT_BLOCK_WIDE_MAX; the schedule checks). */
AOT_INLINE int32_t aot_block_row_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_ps,
                                    const int8_t* w, int32_t w_os, int32_t npix, int32_t nch,
                                    int32_t P, int32_t O, int32_t K, int32_t steps, int32_t xw,
                                    int32_t ww) {
  int16_t wide[AOT_BLOCK_WIDE_MAX] AOT_ALIGNED(8);
  const void* xs = x;
  int32_t xs_ps = x_ps;
  int32_t c, p;
  if (xw) {
    xs_ps = (K + 1) & ~1;
    aot_block_widen_s8(wide, xs_ps, x, x_ps, npix, K);
    xs = wide;
  }
  for (c = 0; c < nch; c += O) {
    const void* wc = ww ? (const void*)((const int16_t*)(const void*)w + c * w_os)
                        : (const void*)(w + c * w_os);
    if (xw) {
      for (p = 0; p + P <= npix; p += P) {
        aot_block_s8(acc + p * acc_ps + c, acc_ps, (const int16_t*)xs + p * xs_ps, xs_ps, 1,
                     wc, w_os, ww, P, O, K, steps);
      }
      for (; p < npix; ++p) {
        aot_block_s8(acc + p * acc_ps + c, acc_ps, (const int16_t*)xs + p * xs_ps, xs_ps, 1,
                     wc, w_os, ww, 1, O, K, steps);
      }
    } else {
      for (p = 0; p + P <= npix; p += P) {
        aot_block_s8(acc + p * acc_ps + c, acc_ps, x + p * x_ps, x_ps, 0, wc, w_os, ww, P, O,
                     K, steps);
      }
      for (; p < npix; ++p) {
        aot_block_s8(acc + p * acc_ps + c, acc_ps, x + p * x_ps, x_ps, 0, wc, w_os, ww, 1, O,
                     K, steps);
      }
    }
  }
  return 0;
}

#endif /* AOT_KERNEL_BLOCKED_H */
