/* The int8 dot products the kernels' helpers are built from (conv2d/include
   and dense/include hold the operators' own): portable C everywhere, ACLE
   and inline assembly with the DSP extension, aot_kernel_mve.h with Helium.
   Every path gives the same results; see docs/kernels.md. */
#ifndef AOT_KERNEL_INT8_H
#define AOT_KERNEL_INT8_H

#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"

/* Tensor intrinsics of the arm_cpu strategy (reset, then accumulate). */
static inline int32_t aot_acc_reset(int32_t* acc) {
  *acc = 0;
  return 0;
}

#if defined(AOT_HAVE_MVE)
#include "aot_kernel_mve.h"
#endif

#if defined(AOT_HAVE_DSP)
/* The odd bytes of a word sign-extended to two halfwords in one instruction
   (GCC 12 does not fold the rotation into SXTB16 by itself). */
AOT_INLINE int32_t aot_sxtb16_ror8(uint32_t v) {
#if defined(AOT_DSP_ASM)
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
#else
  return (int32_t)__sxtb16(__ror(v, 8));
#endif
}

/* Cortex-M4 loads unaligned words with one LDR; the type says so to GCC
   (a memcpy here made GCC keep the word on the stack in some loops). */
typedef uint32_t aot_u32_unaligned __attribute__((aligned(1), may_alias));

AOT_INLINE uint32_t aot_load32(const int8_t* p) {
  return *(const aot_u32_unaligned*)(const void*)p;
}

/* Two int8 values stored with one STRH (any alignment on Cortex-M4). */
typedef uint16_t aot_u16_unaligned __attribute__((aligned(1), may_alias));

AOT_INLINE void aot_store_s8x2(int8_t* p, int32_t a, int32_t b) {
  *(aot_u16_unaligned*)(void*)p = (uint16_t)(((uint32_t)a & 0xffu) | ((uint32_t)b << 8));
}
#endif

/* sum_{i<n} a[i] * b[i] + sum for int8 vectors, wrapping like int32 sums do.
   With the Cortex-M DSP extension, four products per two SMLADs (SXTB16
   sign extends the even and, rotated, the odd bytes); elsewhere a plain loop. */
AOT_INLINE int32_t aot_dot1_s8(int32_t sum, const int8_t* a, const int8_t* b, int32_t n) {
  int32_t i = 0;
#if defined(AOT_HAVE_MVE)
  return aot_mve_dot1_s8(sum, a, b, n);
#elif defined(AOT_HAVE_DSP)
  for (; i + 4 <= n; i += 4) {
    const uint32_t va = aot_load32(a + i);
    const uint32_t vb = aot_load32(b + i);
    sum = __smlad(__sxtb16((int32_t)va), __sxtb16((int32_t)vb), sum);
    sum = __smlad(aot_sxtb16_ror8(va), aot_sxtb16_ror8(vb), sum);
  }
#endif
  for (; i < n; ++i) {
    sum = (int32_t)((uint32_t)sum + (uint32_t)((int32_t)a[i] * (int32_t)b[i]));
  }
  return sum;
}

/* *acc += a . b (the tensor intrinsic of dense and of unblocked dot products). */
static inline int32_t aot_dot_s8(int32_t* acc, const int8_t* a, const int8_t* b, int32_t n) {
  *acc = aot_dot1_s8(*acc, a, b, n);
  return 0;
}

/* Four dot products of length n sharing their operands (two input vectors x
   two weight vectors): s[2*i + j] += a_i . b_j.  Each loaded word feeds two
   SMLADs, so four bytes of both inputs and both weights cost 4 loads, 8
   SXTB16 and 8 SMLAD for 16 multiply-accumulates. */
AOT_INLINE void aot_dot2x2_s8(int32_t* s, const int8_t* a0, const int8_t* a1,
                              const int8_t* b0, const int8_t* b1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t i = 0;
#if defined(AOT_HAVE_MVE)
  aot_mve_dot2x2_s8(s, a0, a1, b0, b1, n);
  return;
#elif defined(AOT_HAVE_DSP)
  for (; i + 4 <= n; i += 4) {
    const uint32_t x0 = aot_load32(a0 + i);
    const uint32_t x1 = aot_load32(a1 + i);
    const uint32_t y0 = aot_load32(b0 + i);
    const uint32_t y1 = aot_load32(b1 + i);
    const int32_t x0e = __sxtb16((int32_t)x0), x1e = __sxtb16((int32_t)x1);
    const int32_t y0e = __sxtb16((int32_t)y0), y1e = __sxtb16((int32_t)y1);
    const int32_t x0o = aot_sxtb16_ror8(x0), x1o = aot_sxtb16_ror8(x1);
    const int32_t y0o = aot_sxtb16_ror8(y0), y1o = aot_sxtb16_ror8(y1);
    s00 = __smlad(x0e, y0e, s00);
    s01 = __smlad(x0e, y1e, s01);
    s10 = __smlad(x1e, y0e, s10);
    s11 = __smlad(x1e, y1e, s11);
    s00 = __smlad(x0o, y0o, s00);
    s01 = __smlad(x0o, y1o, s01);
    s10 = __smlad(x1o, y0o, s10);
    s11 = __smlad(x1o, y1o, s11);
  }
#endif
  for (; i < n; ++i) {
    const int32_t x0 = a0[i], x1 = a1[i], y0 = b0[i], y1 = b1[i];
    s00 = (int32_t)((uint32_t)s00 + (uint32_t)(x0 * y0));
    s01 = (int32_t)((uint32_t)s01 + (uint32_t)(x0 * y1));
    s10 = (int32_t)((uint32_t)s10 + (uint32_t)(x1 * y0));
    s11 = (int32_t)((uint32_t)s11 + (uint32_t)(x1 * y1));
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}

/* Two dot products sharing the input vector: s[j] += a . b_j. */
AOT_INLINE void aot_dot1x2_s8(int32_t* s, const int8_t* a, const int8_t* b0, const int8_t* b1,
                              int32_t n) {
  int32_t s0 = s[0], s1 = s[1];
  int32_t i = 0;
#if defined(AOT_HAVE_MVE)
  aot_mve_dot1x2_s8(s, a, b0, b1, n);
  return;
#elif defined(AOT_HAVE_DSP)
  for (; i + 4 <= n; i += 4) {
    const uint32_t x = aot_load32(a + i);
    const uint32_t y0 = aot_load32(b0 + i);
    const uint32_t y1 = aot_load32(b1 + i);
    const int32_t xe = __sxtb16((int32_t)x), xo = aot_sxtb16_ror8(x);
    s0 = __smlad(xe, __sxtb16((int32_t)y0), s0);
    s1 = __smlad(xe, __sxtb16((int32_t)y1), s1);
    s0 = __smlad(xo, aot_sxtb16_ror8(y0), s0);
    s1 = __smlad(xo, aot_sxtb16_ror8(y1), s1);
  }
#endif
  for (; i < n; ++i) {
    const int32_t x = a[i];
    s0 = (int32_t)((uint32_t)s0 + (uint32_t)(x * (int32_t)b0[i]));
    s1 = (int32_t)((uint32_t)s1 + (uint32_t)(x * (int32_t)b1[i]));
  }
  s[0] = s0;
  s[1] = s1;
}

#if defined(AOT_HAVE_DSP)
/* Words of the stack buffer holding widened inputs (aot_conv_wide_s8), and
   of the smaller one for im2col patches when two patches fit it. */
#define AOT_WIDE_WORDS 256
#define AOT_PATCH_WORDS 128

/* Two adjacent words in one LDRD, advancing the pointer (GCC splits 64-bit
   loads into two LDRs on Cortex-M4, where each counts as an instruction). */
AOT_INLINE const int32_t* aot_load_pair(const int32_t* p, int32_t* lo, int32_t* hi) {
#if defined(AOT_DSP_ASM)
  int32_t a, b;
  __asm__("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) : "m"(*(const int32_t(*)[2])p));
  *lo = a;
  *hi = b;
  return p;
#else
  *lo = p[0];
  *hi = p[1];
  return p + 2;
#endif
}

/* One step of aot_dot2x2_wide_s8: four int8 values of both weight vectors
   against two widened input pairs.  The two weight LDRs come first, so the
   second pipelines behind the first. */
#define AOT_DOT2X2_WIDE_STEP(i)                                               \
  do {                                                                        \
    int32_t x0e, x0o, x1e, x1o;                                               \
    const uint32_t y0 = aot_load32(b0 + (i));                                 \
    const uint32_t y1 = aot_load32(b1 + (i));                                 \
    const int32_t y0e = __sxtb16((int32_t)y0), y1e = __sxtb16((int32_t)y1);   \
    const int32_t y0o = aot_sxtb16_ror8(y0), y1o = aot_sxtb16_ror8(y1);       \
    a0 = aot_load_pair(a0, &x0e, &x0o);                                       \
    a1 = aot_load_pair(a1, &x1e, &x1o);                                       \
    s00 = __smlad(x0e, y0e, s00);                                             \
    s01 = __smlad(x0e, y1e, s01);                                             \
    s10 = __smlad(x1e, y0e, s10);                                             \
    s11 = __smlad(x1e, y1e, s11);                                             \
    s00 = __smlad(x0o, y0o, s00);                                             \
    s01 = __smlad(x0o, y1o, s01);                                             \
    s10 = __smlad(x1o, y0o, s10);                                             \
    s11 = __smlad(x1o, y1o, s11);                                             \
  } while (0)

/* Four dot products of length n (a multiple of 4) with the inputs already
   widened: a_i holds, per four int8 values, SXTB16 of the word and of the
   word rotated by 8 (one LDRD), so four bytes of both inputs and both
   weights cost 2 LDRD, 2 LDR, 4 SXTB16 and 8 SMLAD.  Two steps per loop
   iteration (n is a constant once inlined, so an odd step is peeled at
   compile time): the compare and the taken branch, 4 of 27 estimated M4
   cycles per step, are paid once per 32 multiply-accumulates.  The empty
   asm between the steps keeps GCC from hoisting the second step's loads
   above the first step's SMLADs, which spilled accumulators. */
AOT_INLINE void aot_dot2x2_wide_s8(int32_t* s, const int32_t* a0, const int32_t* a1,
                                   const int8_t* b0, const int8_t* b1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t i;
  for (i = 0; i < (n & ~7); i += 8) {
    AOT_DOT2X2_WIDE_STEP(i);
    __asm__ volatile("" ::: "memory");
    AOT_DOT2X2_WIDE_STEP(i + 4);
  }
  if (n & 4) {
    AOT_DOT2X2_WIDE_STEP(i);
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}
#undef AOT_DOT2X2_WIDE_STEP

/* One step of aot_dot1x2_wide_s8 (weight LDRs first, as above). */
#define AOT_DOT1X2_WIDE_STEP(i)                                               \
  do {                                                                        \
    int32_t xe, xo;                                                           \
    const uint32_t y0 = aot_load32(b0 + (i));                                 \
    const uint32_t y1 = aot_load32(b1 + (i));                                 \
    a = aot_load_pair(a, &xe, &xo);                                           \
    s0 = __smlad(xe, __sxtb16((int32_t)y0), s0);                              \
    s1 = __smlad(xe, __sxtb16((int32_t)y1), s1);                              \
    s0 = __smlad(xo, aot_sxtb16_ror8(y0), s0);                                \
    s1 = __smlad(xo, aot_sxtb16_ror8(y1), s1);                                \
  } while (0)

/* Two dot products sharing a widened input vector (n a multiple of 4), two
   steps per iteration as aot_dot2x2_wide_s8. */
AOT_INLINE void aot_dot1x2_wide_s8(int32_t* s, const int32_t* a, const int8_t* b0,
                                   const int8_t* b1, int32_t n) {
  int32_t s0 = s[0], s1 = s[1];
  int32_t i;
  for (i = 0; i < (n & ~7); i += 8) {
    AOT_DOT1X2_WIDE_STEP(i);
    __asm__ volatile("" ::: "memory");
    AOT_DOT1X2_WIDE_STEP(i + 4);
  }
  if (n & 4) {
    AOT_DOT1X2_WIDE_STEP(i);
  }
  s[0] = s0;
  s[1] = s1;
}
#undef AOT_DOT1X2_WIDE_STEP

/* One step of aot_dot1x4_wide_s8: the input pair, then the weights two
   words at a time (each second LDR pipelines behind the first). */
#define AOT_DOT1X4_WIDE_STEP(i)                                               \
  do {                                                                        \
    int32_t xe, xo;                                                           \
    uint32_t y0, y1;                                                          \
    a = aot_load_pair(a, &xe, &xo);                                           \
    y0 = aot_load32(b + (i));                                                 \
    y1 = aot_load32(b + w_os + (i));                                          \
    s0 = __smlad(xe, __sxtb16((int32_t)y0), s0);                              \
    s1 = __smlad(xe, __sxtb16((int32_t)y1), s1);                              \
    s0 = __smlad(xo, aot_sxtb16_ror8(y0), s0);                                \
    s1 = __smlad(xo, aot_sxtb16_ror8(y1), s1);                                \
    __asm__ volatile("" ::: "memory"); /* no hoisting: it spilled */          \
    y0 = aot_load32(b + 2 * w_os + (i));                                      \
    y1 = aot_load32(b + 3 * w_os + (i));                                      \
    s2 = __smlad(xe, __sxtb16((int32_t)y0), s2);                              \
    s3 = __smlad(xe, __sxtb16((int32_t)y1), s3);                              \
    s2 = __smlad(xo, aot_sxtb16_ror8(y0), s2);                                \
    s3 = __smlad(xo, aot_sxtb16_ror8(y1), s3);                                \
  } while (0)

/* Four dot products sharing a widened input vector (n a multiple of 4):
   s[j] += a . b[j*w_os ..], the weight vectors w_os bytes apart.  The last
   pixel of an odd row: each input LDRD feeds eight SMLADs instead of four
   (aot_dot1x2_wide_s8), about 1.6 estimated M4 cycles per MAC against 2.1. */
AOT_INLINE void aot_dot1x4_wide_s8(int32_t* s, const int32_t* a, const int8_t* b,
                                   int32_t w_os, int32_t n) {
  int32_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  int32_t i;
  for (i = 0; i < (n & ~7); i += 8) {
    AOT_DOT1X4_WIDE_STEP(i);
    __asm__ volatile("" ::: "memory");
    AOT_DOT1X4_WIDE_STEP(i + 4);
  }
  if (n & 4) {
    AOT_DOT1X4_WIDE_STEP(i);
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}
#undef AOT_DOT1X4_WIDE_STEP

#if defined(__GNUC__) && !defined(__clang__) && !defined(AOT_HAVE_MVE) && defined(__OPTIMIZE__) \
    && !defined(__OPTIMIZE_SIZE__) && !defined(AOT_NO_ASM)
/* Three pixels x two output channels in GCC inline assembly (Armv7E-M):
   AOT_HAVE_DOT3X2 says the helper below exists.  C cannot hold this block:
   six accumulators, both pointers, the four halves of two weight words and
   an input word take thirteen registers, so GCC spills the loop bound (or an
   accumulator) of any C version; here the bound stays on the stack, read
   once per two steps.  Thirteen, not the fourteen a second input register
   would need (about 0.1 cycle per MAC less): with a frame pointer (r7) or
   at -O1 GCC could not find fourteen ("impossible constraints"), and at -Os
   not always thirteen, so size-optimized builds keep the C blocks too.
   AOT_NO_ASM turns it off; other compilers keep the 2x2 blocks. */
#define AOT_HAVE_DOT3X2 1

/* One step: four input channels.  The two weight words and the first
   pixel's even input pair are one group of three LDRs (2+1+1 estimated M4
   cycles: neighbouring loads pipeline), every SXTB16 half of a weight then
   feeds three SMLADs, and each further input pair is one LDR into the one
   register left (x) just before its two SMLADs.  b and a advance by 8 and
   16 bytes on the step's first load of each (post-index), so the offsets
   are relative to the advanced pointers; k is the step's byte offset in the
   weights within an advance of B bytes. */
#define AOT_DOT3X2_STEP(bo, ao, k, B)                                             \
  "ldr %[y0], [%[b]" bo "\n\t"                                                    \
  "ldr %[y1], [%[b], #%c[W]-" #B "+" #k "]\n\t"                                   \
  "ldr %[x], [%[a]" ao "\n\t"                                                     \
  "sxtb16 %[t0], %[y0], ror #8\n\t"                                               \
  "sxtb16 %[y0], %[y0]\n\t"                                                       \
  "sxtb16 %[t1], %[y1], ror #8\n\t"                                               \
  "sxtb16 %[y1], %[y1]\n\t"                                                       \
  "smlad %[s00], %[x], %[y0], %[s00]\n\t"                                         \
  "smlad %[s01], %[x], %[y1], %[s01]\n\t"                                         \
  "ldr %[x], [%[a], #4-2*" #B "+2*" #k "]\n\t"                                    \
  "smlad %[s00], %[x], %[t0], %[s00]\n\t"                                         \
  "smlad %[s01], %[x], %[t1], %[s01]\n\t"                                         \
  "ldr %[x], [%[a], #%c[P]-2*" #B "+2*" #k "]\n\t"                                \
  "smlad %[s10], %[x], %[y0], %[s10]\n\t"                                         \
  "smlad %[s11], %[x], %[y1], %[s11]\n\t"                                         \
  "ldr %[x], [%[a], #%c[P]+4-2*" #B "+2*" #k "]\n\t"                              \
  "smlad %[s10], %[x], %[t0], %[s10]\n\t"                                         \
  "smlad %[s11], %[x], %[t1], %[s11]\n\t"                                         \
  "ldr %[x], [%[a], #2*%c[P]-2*" #B "+2*" #k "]\n\t"                              \
  "smlad %[s20], %[x], %[y0], %[s20]\n\t"                                         \
  "smlad %[s21], %[x], %[y1], %[s21]\n\t"                                         \
  "ldr %[x], [%[a], #2*%c[P]+4-2*" #B "+2*" #k "]\n\t"                            \
  "smlad %[s20], %[x], %[t0], %[s20]\n\t"                                         \
  "smlad %[s21], %[x], %[t1], %[s21]\n\t"

/* The asm operands of both statements below: accumulators, pointers and
   temporaries in registers, the input and weight strides in bytes as
   immediates, from which the assembler computes each offset.  No operand is
   an input only, so no register is shared between two of them (the first
   version read the loop bound from a memory operand, and GCC addressed it
   through `a`, which the loop advances). */
#define AOT_DOT3X2_OUTPUTS                                                        \
  [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11),         \
      [s20] "+r"(s20), [s21] "+r"(s21), [a] "+r"(a), [b] "+r"(b),             \
      [y0] "=r"(y0), [y1] "=r"(y1), [t0] "=r"(t0), [t1] "=r"(t1),             \
      [x] "+r"(x)
#define AOT_DOT3X2_STRIDES [P] "n"(4 * pix_words), [W] "n"(w_os)

/* The immediates fit LDR's offsets (-255..4095 bytes). */
AOT_INLINE int32_t aot_dot3x2_fits(int32_t pix_words, int32_t w_os) {
  return pix_words >= 0 && 8 * pix_words < 4000 && w_os >= 0 && w_os < 4000;
}

/* Six dot products of length n (a multiple of 4) over widened inputs:
   s[2*i + j] += a_i . b_j with a_i = a + i*pix_words (words) and
   b_j = b + j*w_os (bytes).  Four steps per loop iteration, then two and
   one as n % 16 needs.  24 MACs per step in 30 estimated M4 cycles, plus 6
   per iteration for the bound (LDR, CMP, taken BNE): about 1.31 cycles per
   MAC against 1.47 for 2x2 steps (KWS's pointwise layers: 1.97 -> 1.80
   cycles per MAC with their epilogue, rows of 5 pixels as 3 + 2; with two
   steps per iteration 1.84).  pix_words and w_os must be
   compile-time constants within aot_dot3x2_fits (immediate offsets): the
   caller checks with __builtin_constant_p. */
AOT_INLINE void aot_dot3x2_wide_s8(int32_t* s, const int32_t* a, int32_t pix_words,
                                   const int8_t* b, int32_t w_os, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3], s20 = s[4], s21 = s[5];
  int32_t y0, y1, t0, t1;
  /* the loop bound enters in x and waits on the stack, pushed and popped by
     the asm itself (a memory operand would need an address register, and
     none is left when the frame is over 4 KiB) */
  const int8_t* x = b + (n & ~15);
  if (n >= 16) {
    __asm__ volatile("push {%[x]}\n"
                     "1:\n\t"
                     AOT_DOT3X2_STEP("], #16", "], #32", 0, 16)
                     AOT_DOT3X2_STEP(", #-12]", ", #-24]", 4, 16)
                     AOT_DOT3X2_STEP(", #-8]", ", #-16]", 8, 16)
                     AOT_DOT3X2_STEP(", #-4]", ", #-8]", 12, 16)
                     "ldr %[x], [sp]\n\t"
                     "cmp %[b], %[x]\n\t"
                     "bne 1b\n\t"
                     "add sp, #4"
                     : AOT_DOT3X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "cc", "memory");
  }
  if (n & 8) {
    __asm__ volatile(AOT_DOT3X2_STEP("], #8", "], #16", 0, 8)
                     AOT_DOT3X2_STEP(", #-4]", ", #-8]", 4, 8)
                     : AOT_DOT3X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "memory");
  }
  if (n & 4) {
    __asm__ volatile(AOT_DOT3X2_STEP("], #4", "], #8", 0, 4)
                     : AOT_DOT3X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "memory");
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
  s[4] = s20;
  s[5] = s21;
}

/* One step of aot_dot2x2_wide_asm_s8, as AOT_DOT3X2_STEP: the two weight
   words and both pixels' even input pairs are one group of four LDRs
   (2+1+1+1), both odd pairs one of two (2+1). */
#define AOT_DOT2X2_STEP(bo, ao, k, B)                                             \
  "ldr %[y0], [%[b]" bo "\n\t"                                                    \
  "ldr %[y1], [%[b], #%c[W]-" #B "+" #k "]\n\t"                                   \
  "ldr %[x], [%[a]" ao "\n\t"                                                     \
  "ldr %[x1], [%[a], #%c[P]-2*" #B "+2*" #k "]\n\t"                               \
  "sxtb16 %[t0], %[y0], ror #8\n\t"                                               \
  "sxtb16 %[y0], %[y0]\n\t"                                                       \
  "sxtb16 %[t1], %[y1], ror #8\n\t"                                               \
  "sxtb16 %[y1], %[y1]\n\t"                                                       \
  "smlad %[s00], %[x], %[y0], %[s00]\n\t"                                         \
  "smlad %[s01], %[x], %[y1], %[s01]\n\t"                                         \
  "smlad %[s10], %[x1], %[y0], %[s10]\n\t"                                        \
  "smlad %[s11], %[x1], %[y1], %[s11]\n\t"                                        \
  "ldr %[x], [%[a], #4-2*" #B "+2*" #k "]\n\t"                                    \
  "ldr %[x1], [%[a], #%c[P]+4-2*" #B "+2*" #k "]\n\t"                             \
  "smlad %[s00], %[x], %[t0], %[s00]\n\t"                                         \
  "smlad %[s01], %[x], %[t1], %[s01]\n\t"                                         \
  "smlad %[s10], %[x1], %[t0], %[s10]\n\t"                                        \
  "smlad %[s11], %[x1], %[t1], %[s11]\n\t"
#define AOT_DOT2X2_OUTPUTS                                                        \
  [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11),             \
      [a] "+r"(a), [b] "+r"(b), [y0] "=r"(y0), [y1] "=r"(y1), [t0] "=r"(t0),      \
      [t1] "=r"(t1), [x] "+r"(x), [x1] "=r"(x1)

/* aot_dot2x2_wide_s8 in assembly, with aot_dot3x2_wide_s8's arguments and
   loop structure: s[2*i + j] += a_i . b_j for two pixels and two output
   channels.  20 estimated M4 cycles per 16 MACs and step (the C version's
   LDRDs, 3 cycles each, do not pipeline: 23), twelve registers. */
AOT_INLINE void aot_dot2x2_wide_asm_s8(int32_t* s, const int32_t* a, int32_t pix_words,
                                       const int8_t* b, int32_t w_os, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t y0, y1, t0, t1, x1;
  const int8_t* x = b + (n & ~15); /* the loop bound, as above */
  if (n >= 16) {
    __asm__ volatile("push {%[x]}\n"
                     "1:\n\t"
                     AOT_DOT2X2_STEP("], #16", "], #32", 0, 16)
                     AOT_DOT2X2_STEP(", #-12]", ", #-24]", 4, 16)
                     AOT_DOT2X2_STEP(", #-8]", ", #-16]", 8, 16)
                     AOT_DOT2X2_STEP(", #-4]", ", #-8]", 12, 16)
                     "ldr %[x], [sp]\n\t"
                     "cmp %[b], %[x]\n\t"
                     "bne 1b\n\t"
                     "add sp, #4"
                     : AOT_DOT2X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "cc", "memory");
  }
  if (n & 8) {
    __asm__ volatile(AOT_DOT2X2_STEP("], #8", "], #16", 0, 8)
                     AOT_DOT2X2_STEP(", #-4]", ", #-8]", 4, 8)
                     : AOT_DOT2X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "memory");
  }
  if (n & 4) {
    __asm__ volatile(AOT_DOT2X2_STEP("], #4", "], #8", 0, 4)
                     : AOT_DOT2X2_OUTPUTS
                     : AOT_DOT3X2_STRIDES
                     : "memory");
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}
#undef AOT_DOT2X2_STEP
#undef AOT_DOT2X2_OUTPUTS
#undef AOT_DOT3X2_STEP
#undef AOT_DOT3X2_OUTPUTS
#undef AOT_DOT3X2_STRIDES
#endif

AOT_INLINE int32_t aot_dot1_wide_s8(int32_t sum, const int32_t* a, const int8_t* b, int32_t n) {
  int32_t i;
  for (i = 0; i < n; i += 4) {
    const uint32_t y = aot_load32(b + i);
    sum = __smlad(a[0], __sxtb16((int32_t)y), sum);
    sum = __smlad(a[1], aot_sxtb16_ror8(y), sum);
    a += 2;
  }
  return sum;
}
#endif

#endif /* AOT_KERNEL_INT8_H */
