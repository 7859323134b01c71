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
#ifndef AOT_BLOCK_H
#define AOT_BLOCK_H

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

/* Where the weights of channel o (of a block starting on an even channel)
   and values i..i+3 start (i a multiple of 4): o*w_os, or with wide pairs
   (ww == 2: the chunks of channels 2j and 2j+1 alternate, K a multiple of 4)
   in channel o's pair, then chunk i/4, then the pair's channel. */
AOT_INLINE int32_t aot_block_w_at(int32_t ww, int32_t o, int32_t w_os, int32_t i) {
  return ww == 2 ? (o >> 1) * 2 * w_os + 2 * i + (o & 1) * 4 : o * w_os + i;
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
      AOT_BLOCK_HALVES(w, ww, aot_block_w_at(ww, o, w_os, i), we, wo);            \
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
        const int32_t wv = ww == 2 ? (int32_t)((const int16_t*)w)[
                               aot_block_w_at(ww, o, w_os, i & ~3) + aot_block_lane(i & 3, 4)]
                                   : aot_block_x(w, ww, o * w_os, i, K);
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

#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE) && defined(__GNUC__) && !defined(__clang__) \
    && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(AOT_NO_ASM)
/* Blocks of wide input x wide weights in GCC inline assembly (Armv7E-M):
   AOT_HAVE_BLOCK_ASM says aot_block_wide_asm_s8 exists.  In C, GCC splits
   each 64-bit load of a wide pair into two LDRs (and the Cortex-M4 counts
   both); here each operand's four values are one LDRD, so a step of four
   values of a 2 x 2 block is 4 LDRD + 8 SMLAD (0.75 instructions per MAC)
   and of a 3 x 2 block 5 LDRD + 12 SMLAD (0.71).  The loop bound waits on
   the stack as in aot_dot3x2_wide_s8 (aot_kernel_int8.h), which explains
   the register budget: 3 x 2 takes all fourteen allocatable registers, so
   a build with a frame pointer must turn it off (AOT_BLOCK_NO_3X2, below;
   GCC otherwise stops with "impossible constraints").  With wide pairs
   (ww == 2) both channels' four values are one LDM: 16 and 11 instructions
   per step.  The input and weight strides are
   immediates: the caller checks __builtin_constant_p and
   aot_block_asm_fits.  AOT_NO_ASM keeps the C blocks; so do clang, -Os and
   Helium cores (as for the library's blocks). */
#define AOT_HAVE_BLOCK_ASM 1

/* LDRD's immediate offsets reach 1020 bytes either way: a pixel next to the
   one a points at (the second of two, the first and third of three) and the
   second weight row, less or plus a step's 32 bytes. */
AOT_INLINE int32_t aot_block_asm_fits(int32_t P, int32_t x_ps, int32_t w_os) {
  return P <= 3 && x_ps >= 0 && w_os >= 0 && 2 * x_ps + 32 <= 1020 && 2 * w_os <= 1016
         && x_ps % 2 == 0 && w_os % 2 == 0;
}

/* One step of four values: both weight rows' pairs, then each pixel's pair
   and its four SMLADs.  A group of steps of B bytes per operand row advances
   a and b by B on the group's first loads (post-index), so a step's offsets
   k (its bytes into the group) are relative to the advanced pointers. */
#define AOT_BLOCK_W(bo, k, B)                                                     \
  "ldrd %[we0], %[wo0], [%[b]" bo "\n\t"                                          \
  "ldrd %[we1], %[wo1], [%[b], #%c[W]-" #B "+" #k "]\n\t"
/* The first multiply-accumulate into a sum: SMLAD, or SMUAD (the sum from
   zero) in the block's first step. */
#define AOT_BLOCK_ACC(s, x, w) "smlad %[" s "], %[" x "], %[" w "], %[" s "]\n\t"
#define AOT_BLOCK_SET(s, x, w) "smuad %[" s "], %[" x "], %[" w "]\n\t"
#define AOT_BLOCK_X(F, xe, xo, s0, s1, ao)                                        \
  "ldrd %[" xe "], %[" xo "], [%[a]" ao "\n\t"                                    \
  F(s0, xe, "we0") F(s1, xe, "we1")                                               \
  AOT_BLOCK_ACC(s0, xo, "wo0") AOT_BLOCK_ACC(s1, xo, "wo1")
#define AOT_BLOCK_XN(F, n, xe, xo, s0, s1, k, B)                                  \
  AOT_BLOCK_X(F, xe, xo, s0, s1, ", #" #n "*%c[X]-" #B "+" #k "]")
/* Wide pairs (ww == 2): the step's four words of both channels are one LDM
   (the registers pinned in ascending order), b advancing by 16 bytes. */
#define AOT_BLOCK_WP(bo, k, B) "ldmia %[b]!, {%[we0], %[wo0], %[we1], %[wo1]}\n\t"
#define AOT_BLOCK_STEP2W(F, W, bo, ao, k, B)                                      \
  W(bo, k, B)                                                                     \
  AOT_BLOCK_X(F, "xe", "xo", "s00", "s01", ao)                                    \
  AOT_BLOCK_XN(F, 1, "xe", "xo", "s10", "s11", k, B)
/* Three pixels: a points at the middle one (offsets -X and +X for the
   others, so that rows of 256 wide values stay within LDRD's reach). */
#define AOT_BLOCK_STEP3W(F, W, bo, ao, k, B)                                      \
  W(bo, k, B)                                                                     \
  AOT_BLOCK_X(F, "xe", "xo", "s10", "s11", ao)                                    \
  AOT_BLOCK_XN(F, -1, "xe", "xo", "s00", "s01", k, B)                             \
  AOT_BLOCK_XN(F, 1, "xe", "xo", "s20", "s21", k, B)
#define AOT_BLOCK_STEP2F(F, bo, ao, k, B) AOT_BLOCK_STEP2W(F, AOT_BLOCK_W, bo, ao, k, B)
#define AOT_BLOCK_STEP3F(F, bo, ao, k, B) AOT_BLOCK_STEP3W(F, AOT_BLOCK_W, bo, ao, k, B)
#define AOT_BLOCK_STEP2(bo, ao, k, B) AOT_BLOCK_STEP2F(AOT_BLOCK_ACC, bo, ao, k, B)
#define AOT_BLOCK_STEP3(bo, ao, k, B) AOT_BLOCK_STEP3F(AOT_BLOCK_ACC, bo, ao, k, B)
#define AOT_BLOCK_STEP2FP(F, bo, ao, k, B) AOT_BLOCK_STEP2W(F, AOT_BLOCK_WP, bo, ao, k, B)
#define AOT_BLOCK_STEP3FP(F, bo, ao, k, B) AOT_BLOCK_STEP3W(F, AOT_BLOCK_WP, bo, ao, k, B)
#define AOT_BLOCK_STEP2P(bo, ao, k, B) AOT_BLOCK_STEP2FP(AOT_BLOCK_ACC, bo, ao, k, B)
#define AOT_BLOCK_STEP3P(bo, ao, k, B) AOT_BLOCK_STEP3FP(AOT_BLOCK_ACC, bo, ao, k, B)
/* The first step (SMUAD: the sums start from it), then four steps per
   iteration (16 values), then two and one as the n = K - 4 left need. */
#define AOT_BLOCK_LOOP(STEPF, STEP, OUTPUTS, FIRST, WIDTH)                        \
  do {                                                                            \
    __asm__ volatile(STEPF(AOT_BLOCK_SET, "], #8", "], #8", 0, 8)                 \
                     : FIRST                                                      \
                     : [X] "n"(2 * x_ps), [W] "n"(2 * w_os)                       \
                     : "memory");                                                 \
    xe = (int32_t)(intptr_t)(b + WIDTH * (n & ~15));                              \
    if (n >= 16) {                                                                \
      __asm__ volatile("push {%[xe]}\n"                                           \
                       "1:\n\t"                                                   \
                       STEP("], #32", "], #32", 0, 32)                            \
                       STEP(", #-24]", ", #-24]", 8, 32)                          \
                       STEP(", #-16]", ", #-16]", 16, 32)                         \
                       STEP(", #-8]", ", #-8]", 24, 32)                           \
                       "ldr %[xe], [sp]\n\t"                                      \
                       "cmp %[b], %[xe]\n\t"                                      \
                       "bne 1b\n\t"                                               \
                       "add sp, #4"                                               \
                       : OUTPUTS                                                  \
                       : [X] "n"(2 * x_ps), [W] "n"(2 * w_os)                     \
                       : "cc", "memory");                                         \
    }                                                                             \
    if (n & 8) {                                                                  \
      __asm__ volatile(STEP("], #16", "], #16", 0, 16)                            \
                       STEP(", #-8]", ", #-8]", 8, 16)                            \
                       : OUTPUTS                                                  \
                       : [X] "n"(2 * x_ps), [W] "n"(2 * w_os)                     \
                       : "memory");                                               \
    }                                                                             \
    if (n & 4) {                                                                  \
      __asm__ volatile(STEP("], #8", "], #8", 0, 8)                               \
                       : OUTPUTS                                                  \
                       : [X] "n"(2 * x_ps), [W] "n"(2 * w_os)                     \
                       : "memory");                                               \
    }                                                                             \
  } while (0)
#define AOT_BLOCK_REGS                                                            \
  [a] "+r"(a), [b] "+r"(b), [we0] "=r"(we0), [wo0] "=r"(wo0), [we1] "=r"(we1),    \
      [wo1] "=r"(wo1), [xe] "+r"(xe), [xo] "=r"(xo)
#define AOT_BLOCK_OUT2                                                            \
  [s00] "+r"(s[0][0]), [s01] "+r"(s[0][1]), [s10] "+r"(s[1][0]),                  \
      [s11] "+r"(s[1][1]), AOT_BLOCK_REGS
#define AOT_BLOCK_OUT3 AOT_BLOCK_OUT2, [s20] "+r"(s[2][0]), [s21] "+r"(s[2][1])
#define AOT_BLOCK_SET2                                                            \
  [s00] "=r"(s[0][0]), [s01] "=r"(s[0][1]), [s10] "=r"(s[1][0]),                  \
      [s11] "=r"(s[1][1]), AOT_BLOCK_REGS
#define AOT_BLOCK_SET3 AOT_BLOCK_SET2, [s20] "=r"(s[2][0]), [s21] "=r"(s[2][1])

/* AOT_BLOCK_NO_3X2 keeps the 3 x 2 blocks in C (a build that keeps a frame
   pointer has thirteen registers left: "impossible constraints"); so do
   Armv8.1-M cores with Helium built for the DSP path (AOT_NO_MVE), where
   GCC's low-overhead loops hold LR around the block. */
#if defined(AOT_BLOCK_NO_3X2) || defined(__ARM_FEATURE_MVE)
#define AOT_BLOCK_ASM_3X2 0
#else
#define AOT_BLOCK_ASM_3X2 1
#endif

/* s[p][o] = a_p . b_o for P (2 or 3) pixels x 2 channels over K values (a
   positive multiple of 4) of wide rows: a_p = a + p*x_ps, b_o = b + o*w_os
   (int16 values; ww == 2: wide pairs, aot_block_w_at), both constants
   within aot_block_asm_fits.  xe carries the loop bound into the loop (b
   advances by four values of one or both channels per step). */
AOT_INLINE void aot_block_wide_asm_s8(int32_t s[AOT_BLOCK_MAX][AOT_BLOCK_MAX], const int16_t* a,
                                      int32_t x_ps, const int16_t* b, int32_t w_os, int32_t ww,
                                      int32_t P, int32_t K) {
  int32_t xo, xe = 0;
  const int32_t n = K - 4;
  if (P == 3) {
    a += x_ps; /* the middle pixel (AOT_BLOCK_STEP3W) */
  }
  if (ww == 2) {
    register int32_t we0 __asm__("r8");
    register int32_t wo0 __asm__("r9");
    register int32_t we1 __asm__("r10");
    register int32_t wo1 __asm__("r11");
    if (P == 3) {
      AOT_BLOCK_LOOP(AOT_BLOCK_STEP3FP, AOT_BLOCK_STEP3P, AOT_BLOCK_OUT3, AOT_BLOCK_SET3, 2);
    } else {
      AOT_BLOCK_LOOP(AOT_BLOCK_STEP2FP, AOT_BLOCK_STEP2P, AOT_BLOCK_OUT2, AOT_BLOCK_SET2, 2);
    }
  } else {
    int32_t we0, wo0, we1, wo1;
    if (P == 3) {
      AOT_BLOCK_LOOP(AOT_BLOCK_STEP3F, AOT_BLOCK_STEP3, AOT_BLOCK_OUT3, AOT_BLOCK_SET3, 1);
    } else {
      AOT_BLOCK_LOOP(AOT_BLOCK_STEP2F, AOT_BLOCK_STEP2, AOT_BLOCK_OUT2, AOT_BLOCK_SET2, 1);
    }
  }
}
/* One output of aot_block_out_asm_s8: x2 = 2*s + b2 into s, then
   aot_dw_requant's SMMLAR, the sign term and the shift, SSAT and the store. */
#define AOT_BLOCK_Q(sum, off)                                                     \
  "add %[" sum "], %[b2], %[" sum "], lsl #1\n\t"                                 \
  "smmlar %[q], %[" sum "], %[m], %[kh]\n\t"                                      \
  "add %[q], %[q], %[" sum "], asr #31\n\t"                                       \
  "asr %[q], %[q], %[e]\n\t"                                                      \
  "ssat %[q], #8, %[q]\n\t"                                                       \
  "strb %[q], [%[y], #" off "]\n\t"
/* Channel o's row (rc[o + 4*f]) into the four field registers. */
#define AOT_BLOCK_ROW(o)                                                          \
  "ldr %[b2], [%[rc], #4*" #o "]\n\t"                                             \
  "ldr %[m], [%[rc], #16+4*" #o "]\n\t"                                           \
  "ldr %[kh], [%[rc], #32+4*" #o "]\n\t"                                          \
  "ldr %[e], [%[rc], #48+4*" #o "]\n\t"
#define AOT_BLOCK_OUT_OPS(...)                                                    \
  : __VA_ARGS__, [b2] "=&r"(b2), [m] "=&r"(m), [kh] "=&r"(kh), [e] "=&r"(e),       \
    [q] "=&r"(q)                                                                  \
  : [y] "r"(y), [rc] "r"(rc), [Y] "n"(y_ps)                                       \
  : "memory"

/* aot_block_out_s8 for P (1 to 3) pixels x 2 channels without an activation
   clamp, in assembly: each output is exactly the six instructions of the
   form (above), each channel's row four LDRs.  GCC's version of the same
   arithmetic kept fewer values in registers after the blocks, which had
   taken every register, and reloaded them (about 2 instructions more per
   output).  y_ps is an immediate (aot_block_out_fits). */
AOT_INLINE int32_t aot_block_out_fits(int32_t P, int32_t y_ps) {
  return y_ps >= 0 && (P - 1) * y_ps + 1 <= 4095;
}

AOT_INLINE void aot_block_out_asm_s8(int8_t* y, int32_t y_ps,
                                     int32_t s[AOT_BLOCK_MAX][AOT_BLOCK_MAX], int32_t P,
                                     const int32_t* rc) {
  int32_t b2, m, kh, e, q;
  if (P == 3) {
    __asm__ volatile(AOT_BLOCK_ROW(0) AOT_BLOCK_Q("s0", "0") AOT_BLOCK_Q("s1", "%c[Y]")
                     AOT_BLOCK_Q("s2", "2*%c[Y]")
                     AOT_BLOCK_ROW(1) AOT_BLOCK_Q("t0", "1") AOT_BLOCK_Q("t1", "%c[Y]+1")
                     AOT_BLOCK_Q("t2", "2*%c[Y]+1")
                     AOT_BLOCK_OUT_OPS([s0] "+r"(s[0][0]), [s1] "+r"(s[1][0]),
                                       [s2] "+r"(s[2][0]), [t0] "+r"(s[0][1]),
                                       [t1] "+r"(s[1][1]), [t2] "+r"(s[2][1])));
  } else if (P == 2) {
    __asm__ volatile(AOT_BLOCK_ROW(0) AOT_BLOCK_Q("s0", "0") AOT_BLOCK_Q("s1", "%c[Y]")
                     AOT_BLOCK_ROW(1) AOT_BLOCK_Q("t0", "1") AOT_BLOCK_Q("t1", "%c[Y]+1")
                     AOT_BLOCK_OUT_OPS([s0] "+r"(s[0][0]), [s1] "+r"(s[1][0]),
                                       [t0] "+r"(s[0][1]), [t1] "+r"(s[1][1])));
  } else {
    __asm__ volatile(AOT_BLOCK_ROW(0) AOT_BLOCK_Q("s0", "0")
                     AOT_BLOCK_ROW(1) AOT_BLOCK_Q("t0", "1")
                     AOT_BLOCK_OUT_OPS([s0] "+r"(s[0][0]), [t0] "+r"(s[0][1])));
  }
}
#undef AOT_BLOCK_Q
#undef AOT_BLOCK_ROW
#undef AOT_BLOCK_OUT_OPS
#undef AOT_BLOCK_W
#undef AOT_BLOCK_X
#undef AOT_BLOCK_XN
#undef AOT_BLOCK_STEP2
#undef AOT_BLOCK_STEP3
#undef AOT_BLOCK_STEP2F
#undef AOT_BLOCK_STEP3F
#undef AOT_BLOCK_WP
#undef AOT_BLOCK_STEP2W
#undef AOT_BLOCK_STEP3W
#undef AOT_BLOCK_STEP2FP
#undef AOT_BLOCK_STEP3FP
#undef AOT_BLOCK_STEP2P
#undef AOT_BLOCK_STEP3P
#undef AOT_BLOCK_ACC
#undef AOT_BLOCK_SET
#undef AOT_BLOCK_SET2
#undef AOT_BLOCK_SET3
#undef AOT_BLOCK_LOOP
#undef AOT_BLOCK_REGS
#undef AOT_BLOCK_OUT2
#undef AOT_BLOCK_OUT3
#endif

/* The P x O sums s[p][o] of output channels c..c+O-1 requantized from the
   fused rows (2*bias, m, kh, e) of aot/kernels/conv2d/fuse.py (blocked by
   four channels: field f of channel c at rows[16*(c/4) + c%4 + 4*f];
   aot_dw_requant, the library's fused rows' form) and stored as int8 at
   y[p*y_ps + o].  rc points at channel c's first field: O divides four and
   c is a multiple of O, so the block's channels are one group's rc[o + 4*f]
   (adjacent words: the pairs load as LDRDs).  Each channel's row is loaded
   once for the block's pixels. */
AOT_INLINE void aot_block_out_s8(int8_t* y, int32_t y_ps, int32_t s[AOT_BLOCK_MAX][AOT_BLOCK_MAX],
                                 int32_t P, int32_t O, const int32_t* rc, int32_t lo,
                                 int32_t hi) {
  int32_t p, o;
  AOT_UNROLL("GCC unroll 4")
  for (o = 0; o < O; ++o) {
    const int32_t b2 = rc[o], m = rc[4 + o], kh = rc[8 + o], e = rc[12 + o];
    AOT_UNROLL("GCC unroll 4")
    for (p = 0; p < P; ++p) {
      y[p * y_ps + o] = (int8_t)aot_clamp_s8(aot_dw_requant(s[p][o], b2, m, kh, e), lo, hi);
    }
  }
}

/* One P x O block of the fused row: sums from zero (the bias is in the rows)
   over K values, then requantized.  Wide input and wide weights with
   constant strides take the assembly blocks where they exist. */
AOT_INLINE void aot_block_fused_s8(int8_t* y, int32_t y_ps, const void* x, int32_t x_ps,
                                   int32_t xw, const void* w, int32_t w_os, int32_t ww,
                                   const int32_t* rc, int32_t P, int32_t O, int32_t K,
                                   int32_t steps, int32_t lo, int32_t hi) {
  int32_t s[AOT_BLOCK_MAX][AOT_BLOCK_MAX];
  int32_t p, o, done = 0;
  AOT_UNROLL("GCC unroll 4")
  for (p = 0; p < AOT_BLOCK_MAX; ++p) {
    AOT_UNROLL("GCC unroll 4")
    for (o = 0; o < AOT_BLOCK_MAX; ++o) {
      s[p][o] = 0;
    }
  }
#if defined(AOT_HAVE_BLOCK_ASM)
  if (xw && ww && O == 2 && (P == 2 || (P == 3 && AOT_BLOCK_ASM_3X2)) && K % 4 == 0 && K > 0
      && __builtin_constant_p(x_ps) && __builtin_constant_p(w_os)
      && aot_block_asm_fits(P, x_ps, w_os)) {
    aot_block_wide_asm_s8(s, (const int16_t*)x, x_ps, (const int16_t*)w, w_os, ww, P, K);
    done = 1;
  }
#endif
  if (!done) {
    aot_block_s8(&s[0][0], AOT_BLOCK_MAX, x, x_ps, xw, w, w_os, ww, P, O, K, steps);
  }
#if defined(AOT_HAVE_BLOCK_ASM)
  if (O == 2 && P <= 3 && __builtin_constant_p(lo) && __builtin_constant_p(hi) && lo == -128
      && hi == 127 && __builtin_constant_p(y_ps) && aot_block_out_fits(P, y_ps)) {
    aot_block_out_asm_s8(y, y_ps, s, P, rc);
    return;
  }
#endif
  aot_block_out_s8(y, y_ps, s, P, O, rc, lo, hi);
}

/* aot_block_row_s8 and aot_requant_row_s8 of the same row in one call (the
   ``block`` sketch's fused epilogue, aot/kernels/conv2d/fuse.py): each
   P x O block's sums are requantized from registers and stored as int8 at
   y[p*y_ps + o], with no row of int32 accumulators.  ``rows``: the fused
   requantization rows (which exist only where the form is exact).  The
   pixels left over by the blocks of P go as one block of two, then one. */
AOT_INLINE int32_t aot_block_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x, int32_t x_ps,
                                        const int8_t* w, int32_t w_os, const int32_t* rows,
                                        int32_t npix, int32_t nch, int32_t P, int32_t O,
                                        int32_t K, int32_t steps, int32_t xw, int32_t ww,
                                        int32_t lo, int32_t hi) {
  int16_t wide[AOT_BLOCK_WIDE_MAX] AOT_ALIGNED(8);
  const int8_t* xs = x;
  int32_t xs_ps = x_ps;
  int32_t c, p;
  if (xw) {
    xs_ps = (K + 1) & ~1;
    aot_block_widen_s8(wide, xs_ps, x, x_ps, npix, K);
    xs = (const int8_t*)(const void*)wide;
  }
  for (c = 0; c < nch; c += O) {
    const void* wc = ww ? (const void*)((const int16_t*)(const void*)w + c * w_os)
                        : (const void*)(w + c * w_os);
    const int32_t* rc = rows + 16 * (c >> 2) + (c & 3);
    int8_t* yc = y + c;
    for (p = 0; p + P <= npix; p += P) {
      const void* xp = xw ? (const void*)((const int16_t*)(const void*)xs + p * xs_ps)
                          : (const void*)(xs + p * xs_ps);
      aot_block_fused_s8(yc + p * y_ps, y_ps, xp, xs_ps, xw, wc, w_os, ww, rc, P, O, K, steps,
                         lo, hi);
    }
    if (P > 2 && npix - p >= 2) {
      const void* xp = xw ? (const void*)((const int16_t*)(const void*)xs + p * xs_ps)
                          : (const void*)(xs + p * xs_ps);
      aot_block_fused_s8(yc + p * y_ps, y_ps, xp, xs_ps, xw, wc, w_os, ww, rc, 2, O, K, steps,
                         lo, hi);
      p += 2;
    }
    for (; p < npix; ++p) {
      const void* xp = xw ? (const void*)((const int16_t*)(const void*)xs + p * xs_ps)
                          : (const void*)(xs + p * xs_ps);
      aot_block_fused_s8(yc + p * y_ps, y_ps, xp, xs_ps, xw, wc, w_os, ww, rc, 1, O, K, steps,
                         lo, hi);
    }
  }
  return 0;
}

/* Bytes of im2col patches one patch call may gather (1 KiB of stack). */
#define AOT_BLOCK_PATCH_MAX 1024

/* The patch length the patch helpers reduce over: K = KH * KWC, rounded up
   to a multiple of 4 with wide weights (their packing pads each weight row
   with zeros the same way, aot/kernels/conv2d/blocked.py patch_length), so
   that the assembly blocks take odd patches too. */
AOT_INLINE int32_t aot_block_patch_len(int32_t K, int32_t ww) {
  return ww ? (K + 3) & ~3 : K;
}

/* Pixels per gathered chunk of a patch call: as many patches of Kp values
   as the buffers hold (AOT_BLOCK_PATCH_MAX bytes, AOT_BLOCK_WIDE_MAX int16
   values once widened), a multiple of P when that is at least P, at most
   npix (blocked.py patch_chunk). */
AOT_INLINE int32_t aot_block_patch_chunk(int32_t npix, int32_t P, int32_t Kp) {
  int32_t n = AOT_BLOCK_PATCH_MAX / Kp;
  const int32_t m = AOT_BLOCK_WIDE_MAX / ((Kp + 1) & ~1);
  n = m < n ? m : n;
  if (n >= P) {
    n -= n % P;
  }
  return n < npix ? n : npix;
}

/* dst[p*Kp + r*KWC + j] = x[r*x_rs + p*x_ps + j], zeros from KH*KWC to Kp:
   the im2col patches of npix pixels (KH kernel rows of KWC contiguous bytes
   each, the kernel columns and channels of a row with dilation 1), one
   after the other. */
AOT_INLINE void aot_block_gather_s8(int8_t* dst, const int8_t* x, int32_t x_rs, int32_t x_ps,
                                    int32_t npix, int32_t KH, int32_t KWC, int32_t Kp) {
  int32_t p, r, j;
  for (p = 0; p < npix; ++p) {
    int8_t* out = dst + p * Kp;
    for (r = 0; r < KH; ++r) {
      const int8_t* src = x + r * x_rs + p * x_ps;
      j = 0;
#if defined(AOT_HAVE_DSP)
      for (; j + 4 <= KWC; j += 4) {
        *(aot_u32_unaligned*)(void*)(out + j) = aot_load32(src + j);
      }
#endif
      for (; j < KWC; ++j) {
        out[j] = src[j];
      }
      out += KWC;
    }
    for (j = KH * KWC; j < Kp; ++j) {
      dst[p * Kp + j] = 0;
    }
  }
}

/* The ``block`` sketch's ``patch`` order: aot_block_row_s8 over the npix
   pixels' whole im2col patches (K = KH * KWC values, the OHWI weights'
   order; Kp with aot_block_patch_len), gathered into a stack buffer and
   widened there (xw) a chunk of pixels at a time (aot_block_patch_chunk),
   so that few-channel convolutions get one reduction per block instead of
   one per kernel row.  x: the first kernel row of the first pixel's window,
   x_rs bytes between kernel rows, x_ps between pixels; w_os: Kp. */
AOT_INLINE int32_t aot_block_patch_row_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                          int32_t x_rs, int32_t x_ps, const int8_t* w,
                                          int32_t w_os, int32_t npix, int32_t nch, int32_t P,
                                          int32_t O, int32_t KH, int32_t KWC, int32_t steps,
                                          int32_t xw, int32_t ww) {
  int8_t patch[AOT_BLOCK_PATCH_MAX] AOT_ALIGNED(8);
  const int32_t Kp = aot_block_patch_len(KH * KWC, ww);
  const int32_t chunk = aot_block_patch_chunk(npix, P, Kp);
  int32_t p0;
  for (p0 = 0; p0 < npix; p0 += chunk) {
    const int32_t n = npix - p0 < chunk ? npix - p0 : chunk;
    aot_block_gather_s8(patch, x + p0 * x_ps, x_rs, x_ps, n, KH, KWC, Kp);
    aot_block_row_s8(acc + p0 * acc_ps, acc_ps, patch, Kp, w, w_os, n, nch, P, O, Kp, steps,
                     xw, ww);
  }
  return 0;
}

/* aot_block_patch_row_s8 fused with the row's epilogue (aot_block_requant_s8). */
AOT_INLINE int32_t aot_block_patch_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                              int32_t x_rs, int32_t x_ps, const int8_t* w,
                                              int32_t w_os, const int32_t* rows, int32_t npix,
                                              int32_t nch, int32_t P, int32_t O, int32_t KH,
                                              int32_t KWC, int32_t steps, int32_t xw, int32_t ww,
                                              int32_t lo, int32_t hi) {
  int8_t patch[AOT_BLOCK_PATCH_MAX] AOT_ALIGNED(8);
  const int32_t Kp = aot_block_patch_len(KH * KWC, ww);
  const int32_t chunk = aot_block_patch_chunk(npix, P, Kp);
  int32_t p0;
  for (p0 = 0; p0 < npix; p0 += chunk) {
    const int32_t n = npix - p0 < chunk ? npix - p0 : chunk;
    aot_block_gather_s8(patch, x + p0 * x_ps, x_rs, x_ps, n, KH, KWC, Kp);
    aot_block_requant_s8(y + p0 * y_ps, y_ps, patch, Kp, w, w_os, rows, n, nch, P, O, Kp,
                         steps, xw, ww, lo, hi);
  }
  return 0;
}

#endif /* AOT_BLOCK_H */
