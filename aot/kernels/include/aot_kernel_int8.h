/* The int8 inner loops of the arm_cpu kernels (dot products, conv2d, dense,
   depthwise), reached through tensorize: portable C everywhere, ACLE and
   inline assembly with the DSP extension, aot_kernel_mve.h with Helium.
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

/* y[c] = clamp_s8(aot_requant(acc[c] + bias[c], table[4c .. 4c+3]), lo, hi)
   for n outputs (tensor intrinsic of the arm_cpu epilogue); Helium does four
   per vector step (aot_mve_requant_row_s8). */
AOT_INLINE int32_t aot_requant_row_s8(int8_t* y, const int32_t* acc, const int32_t* bias,
                                      const int32_t* table, int32_t n, int32_t lo, int32_t hi) {
  int32_t c = 0;
#if defined(AOT_HAVE_MVE)
  aot_mve_requant_row_s8(y, acc, bias, table, n, lo, hi);
  c = n - n % 4; /* the vector steps did all groups of four */
#endif
  for (; c < n; ++c) {
    const int32_t* r = table + 4 * c;
    y[c] = (int8_t)aot_clamp_s8(aot_requant(acc[c] + bias[c], r[0], r[1], r[2], r[3]), lo, hi);
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
/* The odd bytes of a word sign-extended to two halfwords in one instruction
   (GCC 12 does not fold the rotation into SXTB16 by itself). */
AOT_INLINE int32_t aot_sxtb16_ror8(uint32_t v) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

/* Cortex-M4 loads unaligned words with one LDR; the type says so to GCC
   (a memcpy here made GCC keep the word on the stack in some loops). */
typedef uint32_t aot_u32_unaligned __attribute__((aligned(1), may_alias));

AOT_INLINE uint32_t aot_load32(const int8_t* p) {
  return *(const aot_u32_unaligned*)(const void*)p;
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
/* Words of the stack buffer holding widened inputs (aot_conv_wide_s8). */
#define AOT_WIDE_WORDS 256

/* Two adjacent words in one LDRD, advancing the pointer (GCC splits 64-bit
   loads into two LDRs on Cortex-M4, where each counts as an instruction). */
AOT_INLINE const int32_t* aot_load_pair(const int32_t* p, int32_t* lo, int32_t* hi) {
  int32_t a, b;
  __asm__("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) : "m"(*(const int32_t(*)[2])p));
  *lo = a;
  *hi = b;
  return p;
}

/* Four dot products of length n (a multiple of 4) with the inputs already
   widened: a_i holds, per four int8 values, SXTB16 of the word and of the
   word rotated by 8 (one LDRD), so four bytes of both inputs and both
   weights cost 2 LDRD, 2 LDR, 4 SXTB16 and 8 SMLAD. */
AOT_INLINE void aot_dot2x2_wide_s8(int32_t* s, const int32_t* a0, const int32_t* a1,
                                   const int8_t* b0, const int8_t* b1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  int32_t i;
  for (i = 0; i < n; i += 4) {
    int32_t x0e, x0o, x1e, x1o;
    const uint32_t y0 = aot_load32(b0 + i);
    const uint32_t y1 = aot_load32(b1 + i);
    const int32_t y0e = __sxtb16((int32_t)y0), y1e = __sxtb16((int32_t)y1);
    const int32_t y0o = aot_sxtb16_ror8(y0), y1o = aot_sxtb16_ror8(y1);
    a0 = aot_load_pair(a0, &x0e, &x0o);
    a1 = aot_load_pair(a1, &x1e, &x1o);
    s00 = __smlad(x0e, y0e, s00);
    s01 = __smlad(x0e, y1e, s01);
    s10 = __smlad(x1e, y0e, s10);
    s11 = __smlad(x1e, y1e, s11);
    s00 = __smlad(x0o, y0o, s00);
    s01 = __smlad(x0o, y1o, s01);
    s10 = __smlad(x1o, y0o, s10);
    s11 = __smlad(x1o, y1o, s11);
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}

/* Two dot products sharing a widened input vector (n a multiple of 4). */
AOT_INLINE void aot_dot1x2_wide_s8(int32_t* s, const int32_t* a, const int8_t* b0,
                                   const int8_t* b1, int32_t n) {
  int32_t s0 = s[0], s1 = s[1];
  int32_t i;
  for (i = 0; i < n; i += 4) {
    int32_t xe, xo;
    const uint32_t y0 = aot_load32(b0 + i);
    const uint32_t y1 = aot_load32(b1 + i);
    a = aot_load_pair(a, &xe, &xo);
    s0 = __smlad(xe, __sxtb16((int32_t)y0), s0);
    s1 = __smlad(xe, __sxtb16((int32_t)y1), s1);
    s0 = __smlad(xo, aot_sxtb16_ror8(y0), s0);
    s1 = __smlad(xo, aot_sxtb16_ror8(y1), s1);
  }
  s[0] = s0;
  s[1] = s1;
}

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

/* Pixels per chunk of aot_conv_wide_s8 (even when more than one fits), or 0
   when not even one pixel's input window fits the buffer. */
AOT_INLINE int32_t aot_wide_chunk(int32_t npix, int32_t kh_n, int32_t kw_n, int32_t c_n,
                                  int32_t sw, int32_t dw) {
  const int32_t fixed = (kw_n - 1) * dw + 1;  /* columns of one pixel's window */
  int32_t p = (AOT_WIDE_WORDS / (kh_n * c_n / 2) - fixed) / sw + 1;
  if (AOT_WIDE_WORDS < kh_n * fixed * c_n / 2) {
    return 0;
  }
  p = p > npix ? npix : p;
  return p > 1 && p < npix ? p & ~1 : p;
}

/* aot_conv_s8 for c_n a multiple of 4 and contiguous columns: each chunk of
   pixels first widens its input window once into a stack buffer (two
   halfword pairs per four bytes), which every output channel then reads
   with LDRD instead of re-widening it. */
AOT_INLINE int32_t aot_conv_wide_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                    const int8_t* w, int32_t npix, int32_t oc, int32_t kh_n,
                                    int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,
                                    int32_t dw, int32_t chunk, int32_t patch) {
  int32_t wide[AOT_WIDE_WORDS];
  const int32_t joined = dw == 1;
  const int32_t w_os = kh_n * kw_n * c_n;
  /* patches: one run of w_os per pixel; rows: runs per kernel row (and tap) */
  const int32_t run = patch ? w_os : joined ? kw_n * c_n : c_n;
  const int32_t runs = patch || joined ? 1 : kw_n;
  const int32_t khs = patch ? 1 : kh_n;
  const int32_t cols = (chunk - 1) * sw + (kw_n - 1) * dw + 1;
  const int32_t kh_words = patch ? 0 : cols * c_n / 2;  /* per kernel row in `wide` */
  const int32_t pix_words = patch ? w_os / 2 : sw * c_n / 2;
  const int32_t r_words = dw * c_n / 2;
  int32_t p0;
  for (p0 = 0; p0 < npix; p0 += chunk) {
    const int32_t n = npix - p0 < chunk ? npix - p0 : chunk;
    const int32_t bytes = ((n - 1) * sw + (kw_n - 1) * dw + 1) * c_n;
    int32_t kh, p = 0;
    if (patch) { /* im2col: each pixel's kernel rows one after the other */
      int32_t* dst = wide;
      for (p = 0; p < n; ++p) {
        for (kh = 0; kh < kh_n; ++kh) {
          const int8_t* src = x + kh * dh * x_rs + (p0 + p) * sw * c_n;
          int32_t i;
          for (i = 0; i < kw_n * c_n; i += 4) {
            const uint32_t v = aot_load32(src + i);
            dst[0] = __sxtb16((int32_t)v);
            dst[1] = aot_sxtb16_ror8(v);
            dst += 2;
          }
        }
      }
      p = 0;
    } else {
      for (kh = 0; kh < kh_n; ++kh) {
        const int8_t* src = x + kh * dh * x_rs + p0 * sw * c_n;
        int32_t* dst = wide + kh * kh_words;
        int32_t i;
        for (i = 0; i < bytes; i += 4) {
          const uint32_t v = aot_load32(src + i);
          dst[0] = __sxtb16((int32_t)v);
          dst[1] = aot_sxtb16_ror8(v);
          dst += 2;
        }
      }
    }
    for (; p + 2 <= n; p += 2) {
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 2 <= oc; o += 2) {
        int32_t sum[4] = {0, 0, 0, 0};
        int32_t r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int32_t* xa = wide + kh * kh_words + p * pix_words + r * r_words;
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
            aot_dot2x2_wide_s8(sum, xa, xa + pix_words, wa, wa + w_os, run);
          }
        }
        out[o] = sum[0];
        out[o + 1] = sum[1];
        out[acc_ps + o] = sum[2];
        out[acc_ps + o + 1] = sum[3];
      }
      for (; o < oc; ++o) {
        int32_t s0 = 0, s1 = 0, r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int32_t* xa = wide + kh * kh_words + p * pix_words + r * r_words;
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
            s0 = aot_dot1_wide_s8(s0, xa, wa, run);
            s1 = aot_dot1_wide_s8(s1, xa + pix_words, wa, run);
          }
        }
        out[o] = s0;
        out[acc_ps + o] = s1;
      }
    }
    for (; p < n; ++p) {
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 2 <= oc; o += 2) {
        int32_t sum[2] = {0, 0};
        int32_t r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
            aot_dot1x2_wide_s8(sum, wide + kh * kh_words + p * pix_words + r * r_words, wa,
                               wa + w_os, run);
          }
        }
        out[o] = sum[0];
        out[o + 1] = sum[1];
      }
      for (; o < oc; ++o) {
        int32_t s0 = 0, r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            s0 = aot_dot1_wide_s8(s0, wide + kh * kh_words + p * pix_words + r * r_words,
                                  w + o * w_os + (kh * kw_n + r) * c_n, run);
          }
        }
        out[o] = s0;
      }
    }
  }
  return 0;
}
#endif

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

/* The accumulators of `npix` output pixels x all `oc` output channels of a
   convolution (tensor intrinsic of the arm_cpu conv2d strategy):
     acc[p*acc_ps + o] = sum_{kh,kw,c} x[kh*dh*x_rs + (p*sw + kw*dw)*x_cs + c]
                                       * w[((o*kh_n + kh)*kw_n + kw)*c_n + c]
   with OHWI weights.  Pixels and channels go in 2x2 blocks (aot_dot2x2_s8);
   when the taps of one kernel row are contiguous in the input (dw = 1 and
   a column stride of c_n) each kernel row is one dot product of kw_n*c_n.
   With `widen` (and DSP, c_n % 4 == 0), chunks of pixels go through
   aot_conv_wide_s8.  Every shape argument is a compile-time constant at the
   call, and the function is always inlined, so GCC specializes it per layer. */
AOT_INLINE int32_t aot_conv_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                               int32_t x_cs, const int8_t* w, int32_t npix, int32_t oc,
                               int32_t kh_n, int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,
                               int32_t dw, int32_t widen) {
#if defined(AOT_HAVE_MVE)
  /* Helium reads the int8 inputs directly; short kernel rows go through an
     int8 im2col patch */
  if (widen && x_cs == c_n && dw == 1 && kh_n > 1 && kw_n * c_n < 16
      && kh_n * kw_n * c_n <= AOT_MVE_PATCH_BYTES) {
    return aot_mve_conv_patch_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh);
  }
#elif !defined(AOT_HAVE_DSP)
  (void)widen;
#else
  if (widen && c_n % 4 == 0 && x_cs == c_n) {
    const int32_t chunk = aot_wide_chunk(npix, kh_n, kw_n, c_n, sw, dw);
    if (chunk > 0) {
      return aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                              chunk, 0);
    }
  }
  /* few channels (e.g. the first layer): widened im2col patches when each
     kernel row is a whole number of words */
  if (widen && x_cs == c_n && dw == 1 && (kw_n * c_n) % 4 == 0
      && kh_n * kw_n * c_n <= 2 * AOT_WIDE_WORDS) {
    int32_t chunk = 2 * AOT_WIDE_WORDS / (kh_n * kw_n * c_n);
    chunk = chunk >= npix ? npix : chunk > 1 ? chunk & ~1 : chunk;
    return aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                            chunk, 1);
  }
#endif
  const int32_t joined = dw == 1 && x_cs == c_n;
  const int32_t run = joined ? kw_n * c_n : c_n;
  const int32_t runs = joined ? 1 : kw_n;
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t p = 0;
  for (; p + 2 <= npix; p += 2) {
    const int8_t* xp = x + p * sw * x_cs;
    int32_t o = 0;
    for (; o + 2 <= oc; o += 2) {
      int32_t s[4] = {0, 0, 0, 0};
      int32_t kh, r;
      for (kh = 0; kh < kh_n; ++kh) {
        for (r = 0; r < runs; ++r) {
          const int8_t* xa = xp + kh * dh * x_rs + r * dw * x_cs;
          const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
          aot_dot2x2_s8(s, xa, xa + sw * x_cs, wa, wa + w_os, run);
        }
      }
      acc[p * acc_ps + o] = s[0];
      acc[p * acc_ps + o + 1] = s[1];
      acc[(p + 1) * acc_ps + o] = s[2];
      acc[(p + 1) * acc_ps + o + 1] = s[3];
    }
    for (; o < oc; ++o) {
      int32_t s0 = 0, s1 = 0, kh, r;
      for (kh = 0; kh < kh_n; ++kh) {
        for (r = 0; r < runs; ++r) {
          const int8_t* xa = xp + kh * dh * x_rs + r * dw * x_cs;
          const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
          s0 = aot_dot1_s8(s0, xa, wa, run);
          s1 = aot_dot1_s8(s1, xa + sw * x_cs, wa, run);
        }
      }
      acc[p * acc_ps + o] = s0;
      acc[(p + 1) * acc_ps + o] = s1;
    }
  }
  for (; p < npix; ++p) { /* the last pixel of an odd row: two channels at a time */
    const int8_t* xp = x + p * sw * x_cs;
    int32_t o = 0;
    for (; o + 2 <= oc; o += 2) {
      int32_t s[2] = {0, 0};
      int32_t kh, r;
      for (kh = 0; kh < kh_n; ++kh) {
        for (r = 0; r < runs; ++r) {
          const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
          aot_dot1x2_s8(s, xp + kh * dh * x_rs + r * dw * x_cs, wa, wa + w_os, run);
        }
      }
      acc[p * acc_ps + o] = s[0];
      acc[p * acc_ps + o + 1] = s[1];
    }
    for (; o < oc; ++o) {
      int32_t s0 = 0, kh, r;
      for (kh = 0; kh < kh_n; ++kh) {
        for (r = 0; r < runs; ++r) {
          s0 = aot_dot1_s8(s0, xp + kh * dh * x_rs + r * dw * x_cs,
                           w + o * w_os + (kh * kw_n + r) * c_n, run);
        }
      }
      acc[p * acc_ps + o] = s0;
    }
  }
  return 0;
}

/* The accumulators of `npix` output pixels of a depthwise convolution with
   multiplier 1 (tensor intrinsic of the arm_cpu depthwise strategy):
     acc[p*acc_ps + c] = sum_{kh,kw} x[kh*dh*x_rs + (p*sw + kw*dw)*x_cs + c]
                                     * w[(kh*kw_n + kw)*c_n + c]
   Channels innermost, four per word: SXTB16 splits a word of inputs and one
   of weights into the even and odd channels, and SMLABB/SMLATT accumulate
   each channel in its own register (no packing, the 1HWC weights are
   consumed as stored). */
AOT_INLINE int32_t aot_depthwise_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                    int32_t x_cs, const int8_t* w, int32_t npix, int32_t c_n,
                                    int32_t kh_n, int32_t kw_n, int32_t sw, int32_t dh,
                                    int32_t dw) {
#if defined(AOT_HAVE_MVE)
  return aot_mve_depthwise_s8(acc, acc_ps, x, x_rs, x_cs, w, npix, c_n, kh_n, kw_n, sw, dh, dw);
#endif
  int32_t p = 0;
#if defined(AOT_HAVE_DSP)
  /* two pixels at a time share each widened weight word */
  for (; p + 2 <= npix && c_n >= 4; p += 2) {
    const int8_t* xp = x + p * sw * x_cs;
    const int8_t* xq = xp + sw * x_cs;
    int32_t* out = acc + p * acc_ps;
    int32_t c;
    for (c = 0; c + 4 <= c_n; c += 4) {
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0, kh, kw;
      AOT_UNROLL("GCC unroll 8")
      for (kh = 0; kh < kh_n; ++kh) {
        AOT_UNROLL("GCC unroll 8")
        for (kw = 0; kw < kw_n; ++kw) {
          const int32_t off = kh * dh * x_rs + kw * dw * x_cs + c;
          const uint32_t wv = aot_load32(w + (kh * kw_n + kw) * c_n + c);
          const int32_t we = __sxtb16((int32_t)wv), wo = aot_sxtb16_ror8(wv);
          const uint32_t xv = aot_load32(xp + off);
          const uint32_t yv = aot_load32(xq + off);
          const int32_t xe = __sxtb16((int32_t)xv), xo = aot_sxtb16_ror8(xv);
          const int32_t ye = __sxtb16((int32_t)yv), yo = aot_sxtb16_ror8(yv);
          s0 = __smlabb(xe, we, s0);
          s2 = __smlatt(xe, we, s2);
          s1 = __smlabb(xo, wo, s1);
          s3 = __smlatt(xo, wo, s3);
          t0 = __smlabb(ye, we, t0);
          t2 = __smlatt(ye, we, t2);
          t1 = __smlabb(yo, wo, t1);
          t3 = __smlatt(yo, wo, t3);
        }
      }
      out[c] = s0;
      out[c + 1] = s1;
      out[c + 2] = s2;
      out[c + 3] = s3;
      out[acc_ps + c] = t0;
      out[acc_ps + c + 1] = t1;
      out[acc_ps + c + 2] = t2;
      out[acc_ps + c + 3] = t3;
    }
    for (; c < c_n; ++c) {
      int32_t s0 = 0, t0 = 0, kh, kw;
      for (kh = 0; kh < kh_n; ++kh) {
        for (kw = 0; kw < kw_n; ++kw) {
          const int32_t off = kh * dh * x_rs + kw * dw * x_cs + c;
          const int32_t wk = w[(kh * kw_n + kw) * c_n + c];
          s0 += (int32_t)xp[off] * wk;
          t0 += (int32_t)xq[off] * wk;
        }
      }
      out[c] = s0;
      out[acc_ps + c] = t0;
    }
  }
#endif
  for (; p < npix; ++p) {
    const int8_t* xp = x + p * sw * x_cs;
    int32_t* out = acc + p * acc_ps;
    int32_t c = 0;
#if defined(AOT_HAVE_DSP)
    for (; c + 4 <= c_n; c += 4) {
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, kh, kw;
      AOT_UNROLL("GCC unroll 8")
      for (kh = 0; kh < kh_n; ++kh) {
        AOT_UNROLL("GCC unroll 8")
        for (kw = 0; kw < kw_n; ++kw) {
          const uint32_t xv = aot_load32(xp + kh * dh * x_rs + kw * dw * x_cs + c);
          const uint32_t wv = aot_load32(w + (kh * kw_n + kw) * c_n + c);
          const int32_t xe = __sxtb16((int32_t)xv), we = __sxtb16((int32_t)wv);
          const int32_t xo = aot_sxtb16_ror8(xv), wo = aot_sxtb16_ror8(wv);
          s0 = __smlabb(xe, we, s0);
          s2 = __smlatt(xe, we, s2);
          s1 = __smlabb(xo, wo, s1);
          s3 = __smlatt(xo, wo, s3);
        }
      }
      out[c] = s0;
      out[c + 1] = s1;
      out[c + 2] = s2;
      out[c + 3] = s3;
    }
#endif
    for (; c < c_n; ++c) {
      int32_t s0 = 0, kh, kw;
      for (kh = 0; kh < kh_n; ++kh) {
        for (kw = 0; kw < kw_n; ++kw) {
          s0 = (int32_t)((uint32_t)s0 + (uint32_t)((int32_t)xp[kh * dh * x_rs + kw * dw * x_cs + c]
                                                   * (int32_t)w[(kh * kw_n + kw) * c_n + c]));
        }
      }
      out[c] = s0;
    }
  }
  return 0;
}

#endif /* AOT_KERNEL_INT8_H */
