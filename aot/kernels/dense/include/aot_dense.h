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

/* Words of the widened input segment of aot_dense_wide_s8: 128 int8 inputs,
   256 bytes of stack. */
#define AOT_DENSE_WIDE_WORDS 64

#if defined(AOT_HAVE_DSP)

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

/* The packed weights of aot_dense_packed_s8 (aot/kernels/dense/intrin.py,
   pack_dense_weights, which documents the layout and the arithmetic): each
   row keeps its int8 bytes, but the odd byte of every byte pair holds
   w[odd] - [w[even] < 0], so that the pair read as one signed halfword is
   exactly 256 * w[odd] + w[even]; the int32 per-unit correction
   127 * sum of the unit's odd weights follows all rows. */

/* acc[u] = x . w[u] for `units` packed rows starting at w (depth a multiple
   of 4, k the corrections of these units, any alignment of x).  Portable
   decoding of the packed pairs. */
AOT_INLINE int32_t aot_dense_packed_plain_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                             const int32_t* k, int32_t units, int32_t depth) {
  int32_t u, i;
  (void)k;
  for (u = 0; u < units; ++u) {
    const int8_t* wu = w + u * depth;
    uint32_t s = 0;
    for (i = 0; i < depth; i += 2) {
      const int32_t lo = wu[i];
      const int32_t hi = (int32_t)wu[i + 1] + (lo < 0);
      s += (uint32_t)((int32_t)x[i] * lo) + (uint32_t)((int32_t)x[i + 1] * hi);
    }
    acc[u] = (int32_t)s;
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
/* One unit of a packed row over a widened segment (a[2j], a[2j+1] the pair
   words of input word j): SMLAD of the raw weight word with the first pair
   word, SXTB16 of the even bytes with the second. */
AOT_INLINE int32_t aot_dense_packed1_s8(int32_t s, const int32_t* a, const int8_t* w,
                                        int32_t n) {
  int32_t i;
  for (i = 0; i < n; i += 4) {
    const uint32_t v = aot_load32(w + i);
    s = __smlad(a[0], (int32_t)v, s);
    s = __smlad(a[1], __sxtb16((int32_t)v), s);
    a += 2;
  }
  return s;
}

#if defined(AOT_HAVE_DOT3X2)
/* Four units of packed rows in GCC inline assembly (where aot_kernel_int8.h
   has its convolution blocks: optimizing GCC, AOT_NO_ASM off).  One step,
   four inputs: the four weight words and the input's pair words are one
   group of six LDRs (2+1+1+1+1+1 estimated M4 cycles), then per unit
   SMLAD with the raw word, SXTB16 in place and SMLAD with the even bytes:
   16 MACs in 19 cycles.  b advances by B bytes (a by 2B) on the step's
   first load of each, so the other offsets are relative to the advanced
   pointers; k is the step's byte offset within an advance; D the rows'
   stride in bytes (an immediate). */
#define AOT_DENSE4_STEP(bo, ao, k, B)                                             \
  "ldr %[v0], [%[b]" bo "\n\t"                                                    \
  "ldr %[v1], [%[b], #%c[D]-" #B "+" #k "]\n\t"                                   \
  "ldr %[v2], [%[b], #2*%c[D]-" #B "+" #k "]\n\t"                                 \
  "ldr %[v3], [%[b], #3*%c[D]-" #B "+" #k "]\n\t"                                 \
  "ldr %[p], [%[a]" ao "\n\t"                                                     \
  "ldr %[q], [%[a], #4-2*" #B "+2*" #k "]\n\t"                                    \
  "smlad %[s0], %[p], %[v0], %[s0]\n\t"                                           \
  "sxtb16 %[v0], %[v0]\n\t"                                                       \
  "smlad %[s1], %[p], %[v1], %[s1]\n\t"                                           \
  "sxtb16 %[v1], %[v1]\n\t"                                                       \
  "smlad %[s2], %[p], %[v2], %[s2]\n\t"                                           \
  "sxtb16 %[v2], %[v2]\n\t"                                                       \
  "smlad %[s3], %[p], %[v3], %[s3]\n\t"                                           \
  "sxtb16 %[v3], %[v3]\n\t"                                                       \
  "smlad %[s0], %[q], %[v0], %[s0]\n\t"                                           \
  "smlad %[s1], %[q], %[v1], %[s1]\n\t"                                           \
  "smlad %[s2], %[q], %[v2], %[s2]\n\t"                                           \
  "smlad %[s3], %[q], %[v3], %[s3]\n\t"
#define AOT_DENSE4_OUTPUTS                                                        \
  [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [a] "+r"(a),        \
      [b] "+r"(b), [v0] "=r"(v0), [v1] "=r"(v1), [v2] "=r"(v2), [v3] "=r"(v3),    \
      [p] "=r"(p), [q] "=r"(q), [e] "+r"(e)

/* The row stride fits LDR's immediate offsets (up to 4095 bytes). */
AOT_INLINE int32_t aot_dense4_fits(int32_t depth) {
  return depth > 0 && 3 * depth < 4000;
}

/* s[j] += a . (packed row j at b + j*depth) for four units over n widened
   inputs (n a multiple of 4; a the pair words): eight steps (32 inputs) per
   loop iteration, then four, two and one as n % 32 needs.  Thirteen
   registers, the loop bound (e) among them: 152 estimated M4 cycles per
   iteration of 128 MACs plus 4 for CMP and the taken BNE.  depth must be a
   compile-time constant within aot_dense4_fits. */
AOT_INLINE void aot_dense4_packed_asm(int32_t* s, const int32_t* a, const int8_t* b,
                                      int32_t depth, int32_t n) {
  int32_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  int32_t v0, v1, v2, v3, p, q;
  const int8_t* e = b + (n & ~31); /* the loop bound */
  if (n >= 32) {
    __asm__ volatile("1:\n\t"
                     AOT_DENSE4_STEP("], #32", "], #64", 0, 32)
                     AOT_DENSE4_STEP(", #-28]", ", #-56]", 4, 32)
                     AOT_DENSE4_STEP(", #-24]", ", #-48]", 8, 32)
                     AOT_DENSE4_STEP(", #-20]", ", #-40]", 12, 32)
                     AOT_DENSE4_STEP(", #-16]", ", #-32]", 16, 32)
                     AOT_DENSE4_STEP(", #-12]", ", #-24]", 20, 32)
                     AOT_DENSE4_STEP(", #-8]", ", #-16]", 24, 32)
                     AOT_DENSE4_STEP(", #-4]", ", #-8]", 28, 32)
                     "cmp %[b], %[e]\n\t"
                     "bne 1b"
                     : AOT_DENSE4_OUTPUTS
                     : [D] "n"(depth)
                     : "cc", "memory");
  }
  if (n & 16) {
    __asm__ volatile(AOT_DENSE4_STEP("], #16", "], #32", 0, 16)
                     AOT_DENSE4_STEP(", #-12]", ", #-24]", 4, 16)
                     AOT_DENSE4_STEP(", #-8]", ", #-16]", 8, 16)
                     AOT_DENSE4_STEP(", #-4]", ", #-8]", 12, 16)
                     : AOT_DENSE4_OUTPUTS
                     : [D] "n"(depth)
                     : "memory");
  }
  if (n & 8) {
    __asm__ volatile(AOT_DENSE4_STEP("], #8", "], #16", 0, 8)
                     AOT_DENSE4_STEP(", #-4]", ", #-8]", 4, 8)
                     : AOT_DENSE4_OUTPUTS
                     : [D] "n"(depth)
                     : "memory");
  }
  if (n & 4) {
    __asm__ volatile(AOT_DENSE4_STEP("], #4", "], #8", 0, 4)
                     : AOT_DENSE4_OUTPUTS
                     : [D] "n"(depth)
                     : "memory");
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}
#undef AOT_DENSE4_STEP
#undef AOT_DENSE4_OUTPUTS
#endif

/* aot_dense_packed_plain_s8 with the DSP extension: the input is widened one
   segment of 2 * AOT_DENSE_WIDE_WORDS values at a time into the pair words
   p = (x1 - 127, x3 - 127) and q = (256 x0 - x1 + 127, 256 x2 - x3 + 127)
   of each input word (x0..x3), so that a packed weight word v adds
   256 * (x0 w0 + x1 w1 + x2 w2 + x3 w3 - 127 (w1 + w3)) as
   SMLAD(p, v) + SMLAD(q, SXTB16(v)): three instructions per four products
   instead of four.  Four units share each pair; the sums stay scaled by 256
   across segments (int32 wraps harmlessly: the compile-time bound keeps the
   final value within 2^31) and end as (s >> 8) + k[u]. */
AOT_INLINE int32_t aot_dense_packed_wide_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                            const int32_t* k, int32_t units, int32_t depth) {
  int32_t wide[AOT_DENSE_WIDE_WORDS];
  int32_t d0, u;
#if defined(AOT_HAVE_DOT3X2)
  const int32_t asm_block = __builtin_constant_p(depth) && aot_dense4_fits(depth);
#endif
  for (d0 = 0; d0 < depth; d0 += 2 * AOT_DENSE_WIDE_WORDS) {
    const int32_t seg = depth - d0 < 2 * AOT_DENSE_WIDE_WORDS ? depth - d0
                                                              : 2 * AOT_DENSE_WIDE_WORDS;
    const int32_t last = d0 + seg == depth;
    const int8_t* src = x + d0;
    const int8_t* const end = src + seg;
    int32_t* dst = wide;
    int32_t i;
    for (; src != end; src += 4, dst += 2) {
      const uint32_t v = aot_load32(src);
      const int32_t p = __ssub16(aot_sxtb16_ror8(v), 0x007f007f);
      dst[0] = p;
      dst[1] = __ssub16((int32_t)((v << 8) & 0xff00ff00u), p);
    }
    for (u = 0; u + 4 <= units; u += 4) {
      const int8_t* w0 = w + u * depth + d0;
      int32_t s[4] = {0, 0, 0, 0};
      if (d0 > 0) {
        s[0] = acc[u];
        s[1] = acc[u + 1];
        s[2] = acc[u + 2];
        s[3] = acc[u + 3];
      }
#if defined(AOT_HAVE_DOT3X2)
      if (asm_block) {
        aot_dense4_packed_asm(s, wide, w0, depth, seg);
      } else
#endif
      {
        const int32_t* xa = wide;
        int32_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
        for (i = 0; i < seg; i += 4) {
          int32_t p, q;
          uint32_t v0, v1, v2, v3;
          xa = aot_load_pair(xa, &p, &q);
          v0 = aot_load32(w0 + i);
          v1 = aot_load32(w0 + depth + i);
          v2 = aot_load32(w0 + 2 * depth + i);
          v3 = aot_load32(w0 + 3 * depth + i);
          s0 = __smlad(p, (int32_t)v0, s0);
          s0 = __smlad(q, __sxtb16((int32_t)v0), s0);
          s1 = __smlad(p, (int32_t)v1, s1);
          s1 = __smlad(q, __sxtb16((int32_t)v1), s1);
          s2 = __smlad(p, (int32_t)v2, s2);
          s2 = __smlad(q, __sxtb16((int32_t)v2), s2);
          s3 = __smlad(p, (int32_t)v3, s3);
          s3 = __smlad(q, __sxtb16((int32_t)v3), s3);
        }
        s[0] = s0;
        s[1] = s1;
        s[2] = s2;
        s[3] = s3;
      }
      if (last) {
        acc[u] = (s[0] >> 8) + k[u];
        acc[u + 1] = (s[1] >> 8) + k[u + 1];
        acc[u + 2] = (s[2] >> 8) + k[u + 2];
        acc[u + 3] = (s[3] >> 8) + k[u + 3];
      } else {
        acc[u] = s[0];
        acc[u + 1] = s[1];
        acc[u + 2] = s[2];
        acc[u + 3] = s[3];
      }
    }
    for (u = units - units % 4; u < units; ++u) {
      const int32_t s1 = aot_dense_packed1_s8(d0 > 0 ? acc[u] : 0, wide, w + u * depth + d0, seg);
      acc[u] = last ? (s1 >> 8) + k[u] : s1;
    }
  }
  return 0;
}
#endif

#if defined(AOT_HAVE_DSP)
/* One output of aot_dense_packed_requant_s8 from its packed sum s. */
AOT_INLINE int8_t aot_dense_requant1_s8(int32_t s, int32_t b2, int32_t m, int32_t kh,
                                        int32_t e, int32_t lo, int32_t hi) {
  const int32_t x2 = (int32_t)((uint32_t)(s >> 7) + (uint32_t)b2);
  int32_t q;
#if defined(AOT_DSP_ASM)
  __asm__("smmlar %0, %1, %2, %3" : "=r"(q) : "r"(x2), "r"(m), "r"(kh));
#else
  q = (int32_t)(((int64_t)kh * 4294967296LL + (int64_t)x2 * m + 2147483648LL) >> 32);
#endif
  return (int8_t)aot_clamp_s8((q + (x2 >> 31)) >> e, lo, hi);
}
#endif

/* y[u] = clamp(requant(x . w[u] + bias[u])) for `units` packed rows (depth
   a multiple of 4, at most 2 * AOT_DENSE_WIDE_WORDS) without an accumulator
   row: aot/kernels/dense/fuse.py.  rows = (m, kh, e, then 2 * (bias + k)
   per unit of the layer), c the first unit's index in it.  Each packed sum
   s = 256 * (x . w - k) becomes x2 = (s >> 7) + 2 * (bias + k) =
   2 * (x . w + bias), then aot_dw_requant's one-rounding form (SMMLAR, the
   sign term, a shift) and the clamp, from registers.  The whole input is
   widened before the first output is written (aot/kernels/overlap.py's
   READS_FIRST: y may overlap x), on every path. */
AOT_INLINE int32_t aot_dense_packed_requant_s8(int8_t* y, const int8_t* x, const int8_t* w,
                                               const int32_t* rows, int32_t c, int32_t units,
                                               int32_t depth, int32_t lo, int32_t hi) {
  const int32_t m = rows[0], kh = rows[1], e = rows[2];
  const int32_t* b2 = rows + 3 + c;
  int32_t u;
#if defined(AOT_HAVE_DSP)
  int32_t wide[AOT_DENSE_WIDE_WORDS];
  const int8_t* src = x;
  const int8_t* const end = x + depth;
  int32_t* dst = wide;
#if defined(AOT_HAVE_DOT3X2)
  const int32_t asm_block = __builtin_constant_p(depth) && aot_dense4_fits(depth);
#endif
  for (; src != end; src += 4, dst += 2) {
    const uint32_t v = aot_load32(src);
    const int32_t p = __ssub16(aot_sxtb16_ror8(v), 0x007f007f);
    dst[0] = p;
    dst[1] = __ssub16((int32_t)((v << 8) & 0xff00ff00u), p);
  }
  for (u = 0; u + 4 <= units; u += 4) {
    const int8_t* w0 = w + u * depth;
    int32_t s[4] = {0, 0, 0, 0};
#if defined(AOT_HAVE_DOT3X2)
    if (asm_block) {
      aot_dense4_packed_asm(s, wide, w0, depth, depth);
    } else
#endif
    {
      s[0] = aot_dense_packed1_s8(0, wide, w0, depth);
      s[1] = aot_dense_packed1_s8(0, wide, w0 + depth, depth);
      s[2] = aot_dense_packed1_s8(0, wide, w0 + 2 * depth, depth);
      s[3] = aot_dense_packed1_s8(0, wide, w0 + 3 * depth, depth);
    }
    /* written out: as a loop GCC kept s on the stack */
    y[u] = aot_dense_requant1_s8(s[0], b2[u], m, kh, e, lo, hi);
    y[u + 1] = aot_dense_requant1_s8(s[1], b2[u + 1], m, kh, e, lo, hi);
    y[u + 2] = aot_dense_requant1_s8(s[2], b2[u + 2], m, kh, e, lo, hi);
    y[u + 3] = aot_dense_requant1_s8(s[3], b2[u + 3], m, kh, e, lo, hi);
  }
  for (u = units - units % 4; u < units; ++u) {
    const int32_t s1 = aot_dense_packed1_s8(0, wide, w + u * depth, depth);
    y[u] = aot_dense_requant1_s8(s1, b2[u], m, kh, e, lo, hi);
  }
#else
  /* the same pairs, p = x[odd] - 127 and q = 256 x[even] - x[odd] + 127,
     then per packed pair (lo, hi') p * (256 hi' + lo as a halfword) + q * lo,
     which is 256 * (x . w - 127 * w[odd]) per pair (dense.intrin) */
  int32_t wide[2 * AOT_DENSE_WIDE_WORDS]; /* one word per input here */
  int32_t i;
  for (i = 0; i < depth; i += 2) {
    const int32_t p = (int32_t)x[i + 1] - 127;
    wide[i] = p;
    wide[i + 1] = 256 * (int32_t)x[i] - p;
  }
  for (u = 0; u < units; ++u) {
    const int8_t* wu = w + u * depth;
    uint32_t s = 0;
    for (i = 0; i < depth; i += 2) {
      const int32_t lo8 = wu[i];
      const int32_t half = 256 * (int32_t)wu[i + 1] + (lo8 & 0xff);
      s += (uint32_t)(wide[i] * half) + (uint32_t)(wide[i + 1] * lo8);
    }
    /* s = 256 * (x . w - k): arithmetic shift of the wrapped sum */
    y[u] = (int8_t)aot_clamp_s8(aot_dw_requant((int32_t)s >> 8, b2[u], m, kh, e), lo, hi);
  }
#endif
  return 0;
}

/* acc[u] = x . w[u] for `units` rows of packed dense weights (the tensor
   intrinsic dense_packed of the arm_cpu dense strategy): `w` points at the
   first unit's row, its corrections are `koff` bytes further on. */
AOT_INLINE int32_t aot_dense_packed_s8(int32_t* acc, const int8_t* x, const int8_t* w,
                                       int32_t koff, int32_t units, int32_t depth) {
  const int32_t* k = (const int32_t*)(const void*)(w + koff);
#if defined(AOT_HAVE_DSP)
  return aot_dense_packed_wide_s8(acc, x, w, k, units, depth);
#else
  return aot_dense_packed_plain_s8(acc, x, w, k, units, depth);
#endif
}

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
