/* conv2d's int8 helpers (aot/kernels/conv2d/include): the row intrinsic
   aot_conv_s8, fused with its epilogue as aot_conv_requant_*_s8, and the
   requantizing epilogues aot_requant_row_s8 and aot_requant_add_row_s8 (also
   depthwise's: aot_depthwise.h), built on aot_kernel_int8.h; Helium versions
   in aot_conv2d_mve.h.  See docs/kernels.md. */
#ifndef AOT_CONV2D_H
#define AOT_CONV2D_H

#include "aot_kernel_int8.h"
#if defined(AOT_HAVE_MVE)
#include "aot_conv2d_mve.h"
#endif

#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
/* aot_requant_row_s8's DSP loop over the pixels of a row: two outputs per step
   (two steps per iteration, an empty asm between them so GCC does not hoist
   the second's loads and spill) walk the four arrays by pointer, the two
   accumulators, the two biases and each table row are one LDRD each, and
   both bytes leave in one STRH.  Kept out of line (one copy per kernel file; the
   kernel's constant n, lo and hi reach it by GCC's IPA constant propagation):
   inlined into a kernel's pixel loop it competed for registers with the
   loop's own values and spilled, slower than GCC's inline epilogue. */
#if defined(AOT_HAVE_DOT3X2)
/* GCC: the pair in assembly, its twelve words in three groups of four LDRs
   (2+1+1+1 estimated M4 cycles each, where six LDRDs take 3 each) */
#define AOT_REQUANT_PAIR_STEP()                                                   \
  do {                                                                            \
    int32_t q0, q1, m, l, h, e, t;                                                \
    __asm__("ldr %[q0], [%[acc]], #8\n\t"                                         \
            "ldr %[q1], [%[acc], #-4]\n\t"                                        \
            "ldr %[m], [%[bias]], #8\n\t"                                         \
            "ldr %[l], [%[bias], #-4]\n\t"                                        \
            "add %[q0], %[q0], %[m]\n\t"                                          \
            "add %[q1], %[q1], %[l]\n\t"                                          \
            "ldr %[m], [%[tab]], #32\n\t"                                         \
            "ldr %[l], [%[tab], #-28]\n\t"                                        \
            "ldr %[h], [%[tab], #-24]\n\t"                                        \
            "ldr %[e], [%[tab], #-20]\n\t"                                        \
            "lsr %[t], %[q0], #31\n\t"                                            \
            "smlal %[l], %[h], %[q0], %[m]\n\t"                                   \
            "smlal %[l], %[h], %[t], %[min]\n\t"                                  \
            "asr %[q0], %[h], %[e]\n\t"                                           \
            "ldr %[m], [%[tab], #-16]\n\t"                                        \
            "ldr %[l], [%[tab], #-12]\n\t"                                        \
            "ldr %[h], [%[tab], #-8]\n\t"                                         \
            "ldr %[e], [%[tab], #-4]\n\t"                                         \
            "lsr %[t], %[q1], #31\n\t"                                            \
            "smlal %[l], %[h], %[q1], %[m]\n\t"                                   \
            "smlal %[l], %[h], %[t], %[min]\n\t"                                  \
            "asr %[q1], %[h], %[e]"                                                 \
            : [q0] "=&r"(q0), [q1] "=&r"(q1), [m] "=&r"(m), [l] "=&r"(l),           \
              [h] "=&r"(h), [e] "=&r"(e), [t] "=&r"(t), [acc] "+r"(acc),            \
              [bias] "+r"(bias), [tab] "+r"(table)                                  \
            : [min] "r"(INT32_MIN)                                                  \
            : "memory");                                                            \
    aot_store_s8x2(y, aot_clamp_s8(q0, lo, hi), aot_clamp_s8(q1, lo, hi));        \
    y += 2;                                                                       \
  } while (0)
#else
#define AOT_REQUANT_PAIR_STEP()                                                   \
  do {                                                                            \
    int32_t m0, l0, h0, e0, m1, l1, h1, e1, a0, a1, b0, b1;                       \
    acc = aot_load_pair(acc, &a0, &a1);                                           \
    bias = aot_load_pair(bias, &b0, &b1);                                         \
    const int32_t x0 = a0 + b0;                                                   \
    const int32_t x1 = a1 + b1;                                                   \
    table = aot_load_pair(table, &m0, &l0);                                       \
    table = aot_load_pair(table, &h0, &e0);                                       \
    table = aot_load_pair(table, &m1, &l1);                                       \
    table = aot_load_pair(table, &h1, &e1);                                       \
    aot_store_s8x2(y, aot_clamp_s8(aot_requant(x0, m0, l0, h0, e0), lo, hi),      \
                   aot_clamp_s8(aot_requant(x1, m1, l1, h1, e1), lo, hi));        \
    y += 2;                                                                       \
  } while (0)
#endif
static __attribute__((noinline, unused)) void aot_requant_pairs_s8(
    int8_t* y, int32_t y_ps, const int32_t* acc, int32_t acc_ps, const int32_t* bias0,
    const int32_t* table0, int32_t npix, int32_t n, int32_t lo, int32_t hi) {
  int32_t p;
  for (p = 0; p < npix; ++p) {
    const int32_t* bias = bias0;
    const int32_t* table = table0;
    const int32_t* const end4 = acc + (n & ~3);
    int8_t* const y_next = y + y_ps;
    const int32_t* const acc_next = acc + acc_ps;
    while (acc != end4) {
      AOT_REQUANT_PAIR_STEP();
      __asm__ volatile("" ::: "memory");
      AOT_REQUANT_PAIR_STEP();
    }
    if (n & 2) {
      AOT_REQUANT_PAIR_STEP();
    }
    if (n & 1) {
      y[0] = (int8_t)aot_clamp_s8(aot_requant(acc[0] + bias[0], table[0], table[1], table[2],
                                              table[3]), lo, hi);
    }
    y = y_next;
    acc = acc_next;
  }
}
#undef AOT_REQUANT_PAIR_STEP
#endif

/* y[p*y_ps + c] = clamp_s8(aot_requant(acc[p*acc_ps + c] + bias[c],
   table[4c .. 4c+3]), lo, hi) for npix pixels of n outputs (tensor intrinsic
   of the arm_cpu and arm_mve epilogue: a whole output row, or one pixel);
   Helium does four outputs per vector step (aot_mve_requant_rows_s8), the
   DSP extension two (aot_requant_pairs_s8, one call per row). */
AOT_INLINE int32_t aot_requant_row_s8(int8_t* y, int32_t y_ps, const int32_t* acc,
                                      int32_t acc_ps, const int32_t* bias,
                                      const int32_t* table, int32_t npix, int32_t n,
                                      int32_t lo, int32_t hi) {
#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
  aot_requant_pairs_s8(y, y_ps, acc, acc_ps, bias, table, npix, n, lo, hi);
#else
  int32_t p, c0 = 0;
#if defined(AOT_HAVE_MVE)
  aot_mve_requant_rows_s8(y, y_ps, acc, acc_ps, bias, table, npix, n, lo, hi);
  c0 = n - n % 4; /* the vector steps did all groups of four */
#endif
  for (p = 0; p < npix; ++p) {
    int8_t* yp = y + p * y_ps;
    const int32_t* ap = acc + p * acc_ps;
    int32_t c = c0;
    for (; c < n; ++c) {
      const int32_t* r = table + 4 * c;
      yp[c] = (int8_t)aot_clamp_s8(aot_requant(ap[c] + bias[c], r[0], r[1], r[2], r[3]),
                                   lo, hi);
    }
  }
#endif
  return 0;
}

/* aot_mbqm(aot_shl32(v + off, ls), m, s): one operand of TFLM's int8 ADD
   (offset, shifted left, rescaled to the common scale). */
static inline int32_t aot_add_term(int32_t v, int32_t off, int32_t ls, int32_t m, int32_t s) {
  return aot_mbqm(aot_shl32(v + off, ls), m, s);
}

/* The epilogue of a convolution with a residual add fused (tensor intrinsic
   of the arm_mve epilogue, aot/kernels/conv2d/helium.py): for npix pixels of
   n outputs, q = clamp_s8(aot_requant(acc + bias[c], table[4c ..]), lo1, hi1)
   is the convolution's output, and
   y = clamp(aot_mbqm(aot_add_term(q, c_off, ls, c_m, c_s)
                      + aot_add_term(res, r_off, ls, r_m, r_s), o_m, o_s) + o_off, lo, hi)
   TFLM's int8 ADD of q and the residual input res (-128 <= lo <= hi <= 127).
   Helium does four outputs per vector step (aot_mve_requant_add_rows_s8). */
AOT_INLINE int32_t aot_requant_add_row_s8(int8_t* y, int32_t y_ps, const int32_t* acc,
                                          int32_t acc_ps, const int32_t* bias,
                                          const int32_t* table, const int8_t* res,
                                          int32_t res_ps, int32_t npix, int32_t n, int32_t lo1,
                                          int32_t hi1, int32_t c_off, int32_t c_m, int32_t c_s,
                                          int32_t r_off, int32_t r_m, int32_t r_s, int32_t ls,
                                          int32_t o_m, int32_t o_s, int32_t o_off, int32_t lo,
                                          int32_t hi) {
  int32_t p, c0 = 0;
#if defined(AOT_HAVE_MVE)
  aot_mve_requant_add_rows_s8(y, y_ps, acc, acc_ps, bias, table, res, res_ps, npix, n, lo1,
                              hi1, c_off, c_m, c_s, r_off, r_m, r_s, ls, o_m, o_s, o_off, lo, hi);
  c0 = n - n % 4; /* the vector steps did all groups of four */
#endif
  for (p = 0; p < npix; ++p) {
    int8_t* yp = y + p * y_ps;
    const int32_t* ap = acc + p * acc_ps;
    const int8_t* rp = res + p * res_ps;
    int32_t c = c0;
    for (; c < n; ++c) {
      const int32_t* r = table + 4 * c;
      const int32_t q = aot_clamp_s8(aot_requant(ap[c] + bias[c], r[0], r[1], r[2], r[3]),
                                     lo1, hi1);
      const int32_t sum = aot_add_term(q, c_off, ls, c_m, c_s)
          + aot_add_term(rp[c], r_off, ls, r_m, r_s);
      const int32_t o = aot_mbqm(sum, o_m, o_s) + o_off;
      yp[c] = (int8_t)(o < lo ? lo : o > hi ? hi : o);
    }
  }
  return 0;
}

#if defined(AOT_HAVE_DSP)
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
#if defined(AOT_HAVE_DOT3X2)
  /* 1x1 kernels (no columns shared between pixels, so smaller chunks cost
     no more widening): a multiple of three for the 3-pixel blocks, unless
     the last chunk would then be a lone pixel */
  if (kw_n == 1 && p >= 3 && p < npix && npix % (p - p % 3) != 1) {
    return p - p % 3;
  }
#endif
  return p > 1 && p < npix ? p & ~1 : p;
}

/* Pixels per chunk of widened im2col patches of w_os bytes each in a buffer
   of `words` (both stay constants once inlined): even unless one patch fills it. */
AOT_INLINE int32_t aot_patch_chunk(int32_t npix, int32_t w_os, int32_t words) {
  const int32_t chunk = 2 * words / w_os;
  return chunk >= npix ? npix : chunk > 1 ? chunk & ~1 : chunk;
}

/* The fused epilogue of aot_conv_wide_s8 (aot_conv_requant_wide_s8, _patch_s8): `npx`
   (at most 3) pixels, y_ps bytes apart, of output channels o and o + 1
   (o even, so both in one group of four of the rows), s[2*q + j] the sum of
   pixel q and channel o + j, requantized from registers with the channels'
   rows (2*bias, m, kh, e) (aot_dw_requant, aot/kernels/conv2d/fuse.py) and
   stored as bytes.  The four words of each row are loaded once for all the
   pixels of the block.  The pixel loop is unrolled (npx is a constant once
   inlined): rolled, GCC kept the sums in a stack array and reloaded them.
   Two STRBs, not a packed STRH: packing takes two more instructions. */
AOT_INLINE void aot_conv_out_pair(int8_t* y, int32_t y_ps, const int32_t* s, int32_t npx,
                                  const int32_t* rows, int32_t o, int32_t lo, int32_t hi) {
  const int32_t* r = rows + 16 * (o >> 2) + (o & 3);
  const int32_t b0 = r[0], b1 = r[1], m0 = r[4], m1 = r[5];
  const int32_t k0 = r[8], k1 = r[9], e0 = r[12], e1 = r[13];
  int32_t q;
  AOT_UNROLL("GCC unroll 3")
  for (q = 0; q < npx; ++q) {
    const int32_t u = aot_clamp_s8(aot_dw_requant(s[2 * q], b0, m0, k0, e0), lo, hi);
    const int32_t v = aot_clamp_s8(aot_dw_requant(s[2 * q + 1], b1, m1, k1, e1), lo, hi);
    y[q * y_ps + o] = (int8_t)u;
    y[q * y_ps + o + 1] = (int8_t)v;
  }
}

/* One output of the fused epilogue: channel o of the pixel at y. */
AOT_INLINE void aot_conv_out1(int8_t* y, int32_t s, const int32_t* rows, int32_t o, int32_t lo,
                              int32_t hi) {
  const int32_t* r = rows + 16 * (o >> 2) + (o & 3);
  y[o] = (int8_t)aot_clamp_s8(aot_dw_requant(s, r[0], r[4], r[8], r[12]), lo, hi);
}

/* aot_conv_s8 for c_n a multiple of 4 and contiguous columns: each chunk of
   pixels first widens its input window once into a stack buffer (two
   halfword pairs per four bytes), which every output channel then reads
   with LDRD instead of re-widening it.  w_os is the weights' stride between
   output channels (kh_n * kw_n * c_n unless the caller passes one kernel row
   at a time, kh_n = 1); with acc_in the sums start from acc instead of 0.
   With `rows` (the fused rows; acc unused, acc_ps 0) each block's sums
   are requantized from registers into the int8 outputs y[p*y_ps + o]
   instead (aot_conv_out_pair), with no row of accumulators. */
#define AOT_ACC_IN(v) (acc_in ? (v) : 0)
AOT_INLINE int32_t aot_conv_wide_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                    const int8_t* w, int32_t npix, int32_t oc, int32_t kh_n,
                                    int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,
                                    int32_t dw, int32_t chunk, int32_t patch, int32_t* wide,
                                    int32_t w_os, int32_t acc_in, int8_t* y, int32_t y_ps,
                                    const int32_t* rows, int32_t lo, int32_t hi) {
  const int32_t joined = dw == 1;
  /* patches: one run of w_os per pixel; rows: runs per kernel row (and tap) */
  const int32_t run = patch ? w_os : joined ? kw_n * c_n : c_n;
  const int32_t runs = patch || joined ? 1 : kw_n;
  const int32_t khs = patch ? 1 : kh_n;
  const int32_t cols = (chunk - 1) * sw + (kw_n - 1) * dw + 1;
  const int32_t kh_words = patch ? 0 : cols * c_n / 2;  /* per kernel row in `wide` */
  const int32_t pix_words = patch ? w_os / 2 : sw * c_n / 2;
  const int32_t r_words = dw * c_n / 2;
#if defined(AOT_HAVE_DOT3X2)
  /* the assembly blocks take the strides as immediates */
  const int32_t asm_blocks = __builtin_constant_p(pix_words) && __builtin_constant_p(w_os)
                             && aot_dot3x2_fits(pix_words, w_os);
#endif
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
#if defined(AOT_HAVE_DOT3X2)
    /* three pixels at a time, except where that would leave one pixel
       alone (four left: two pairs; the pair blocks below are about as fast
       per MAC, a lone pixel is not) */
    if (asm_blocks) {
      for (; p + 3 <= n && n - p != 4; p += 3) {
        int32_t* out = acc + (p0 + p) * acc_ps;
        int32_t o;
        for (o = 0; o + 2 <= oc; o += 2) {
          int32_t sum[6] = {AOT_ACC_IN(out[o]), AOT_ACC_IN(out[o + 1]),
                             AOT_ACC_IN(out[acc_ps + o]), AOT_ACC_IN(out[acc_ps + o + 1]),
                             AOT_ACC_IN(out[2 * acc_ps + o]),
                             AOT_ACC_IN(out[2 * acc_ps + o + 1])};
          int32_t r;
          for (kh = 0; kh < khs; ++kh) {
            for (r = 0; r < runs; ++r) {
              aot_dot3x2_wide_s8(sum, wide + kh * kh_words + p * pix_words + r * r_words,
                                 pix_words, w + o * w_os + (kh * kw_n + r) * c_n, w_os, run);
            }
          }
          if (rows) {
            aot_conv_out_pair(y + (p0 + p) * y_ps, y_ps, sum, 3, rows, o, lo, hi);
            continue;
          }
          out[o] = sum[0];
          out[o + 1] = sum[1];
          out[acc_ps + o] = sum[2];
          out[acc_ps + o + 1] = sum[3];
          out[2 * acc_ps + o] = sum[4];
          out[2 * acc_ps + o + 1] = sum[5];
        }
        for (; o < oc; ++o) {
          int32_t s0 = AOT_ACC_IN(out[o]), s1 = AOT_ACC_IN(out[acc_ps + o]);
          int32_t s2 = AOT_ACC_IN(out[2 * acc_ps + o]), r;
          for (kh = 0; kh < khs; ++kh) {
            for (r = 0; r < runs; ++r) {
              const int32_t* xa = wide + kh * kh_words + p * pix_words + r * r_words;
              const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
              s0 = aot_dot1_wide_s8(s0, xa, wa, run);
              s1 = aot_dot1_wide_s8(s1, xa + pix_words, wa, run);
              s2 = aot_dot1_wide_s8(s2, xa + 2 * pix_words, wa, run);
            }
          }
          if (rows) {
            int8_t* yp = y + (p0 + p) * y_ps;
            aot_conv_out1(yp, s0, rows, o, lo, hi);
            aot_conv_out1(yp + y_ps, s1, rows, o, lo, hi);
            aot_conv_out1(yp + 2 * y_ps, s2, rows, o, lo, hi);
            continue;
          }
          out[o] = s0;
          out[acc_ps + o] = s1;
          out[2 * acc_ps + o] = s2;
        }
      }
    }
#endif
    for (; p + 2 <= n; p += 2) {
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 2 <= oc; o += 2) {
        int32_t sum[4] = {AOT_ACC_IN(out[o]), AOT_ACC_IN(out[o + 1]),
                          AOT_ACC_IN(out[acc_ps + o]), AOT_ACC_IN(out[acc_ps + o + 1])};
        int32_t r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int32_t* xa = wide + kh * kh_words + p * pix_words + r * r_words;
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
#if defined(AOT_HAVE_DOT3X2)
            if (asm_blocks) {
              aot_dot2x2_wide_asm_s8(sum, xa, pix_words, wa, w_os, run);
              continue;
            }
#endif
            aot_dot2x2_wide_s8(sum, xa, xa + pix_words, wa, wa + w_os, run);
          }
        }
        if (rows) {
          aot_conv_out_pair(y + (p0 + p) * y_ps, y_ps, sum, 2, rows, o, lo, hi);
          continue;
        }
        out[o] = sum[0];
        out[o + 1] = sum[1];
        out[acc_ps + o] = sum[2];
        out[acc_ps + o + 1] = sum[3];
      }
      for (; o < oc; ++o) {
        int32_t s0 = AOT_ACC_IN(out[o]), s1 = AOT_ACC_IN(out[acc_ps + o]), r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int32_t* xa = wide + kh * kh_words + p * pix_words + r * r_words;
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
            s0 = aot_dot1_wide_s8(s0, xa, wa, run);
            s1 = aot_dot1_wide_s8(s1, xa + pix_words, wa, run);
          }
        }
        if (rows) {
          aot_conv_out1(y + (p0 + p) * y_ps, s0, rows, o, lo, hi);
          aot_conv_out1(y + (p0 + p + 1) * y_ps, s1, rows, o, lo, hi);
          continue;
        }
        out[o] = s0;
        out[acc_ps + o] = s1;
      }
    }
    for (; p < n; ++p) {
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 4 <= oc; o += 4) {
        int32_t sum[4] = {AOT_ACC_IN(out[o]), AOT_ACC_IN(out[o + 1]), AOT_ACC_IN(out[o + 2]),
                          AOT_ACC_IN(out[o + 3])};
        int32_t r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            aot_dot1x4_wide_s8(sum, wide + kh * kh_words + p * pix_words + r * r_words,
                               w + o * w_os + (kh * kw_n + r) * c_n, w_os, run);
          }
        }
        if (rows) {
          aot_conv_out_pair(y + (p0 + p) * y_ps, 0, sum, 1, rows, o, lo, hi);
          aot_conv_out_pair(y + (p0 + p) * y_ps, 0, sum + 2, 1, rows, o + 2, lo, hi);
          continue;
        }
        out[o] = sum[0];
        out[o + 1] = sum[1];
        out[o + 2] = sum[2];
        out[o + 3] = sum[3];
      }
      for (; o + 2 <= oc; o += 2) {
        int32_t sum[2] = {AOT_ACC_IN(out[o]), AOT_ACC_IN(out[o + 1])};
        int32_t r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            const int8_t* wa = w + o * w_os + (kh * kw_n + r) * c_n;
            aot_dot1x2_wide_s8(sum, wide + kh * kh_words + p * pix_words + r * r_words, wa,
                               wa + w_os, run);
          }
        }
        if (rows) {
          aot_conv_out_pair(y + (p0 + p) * y_ps, 0, sum, 1, rows, o, lo, hi);
          continue;
        }
        out[o] = sum[0];
        out[o + 1] = sum[1];
      }
      for (; o < oc; ++o) {
        int32_t s0 = AOT_ACC_IN(out[o]), r;
        for (kh = 0; kh < khs; ++kh) {
          for (r = 0; r < runs; ++r) {
            s0 = aot_dot1_wide_s8(s0, wide + kh * kh_words + p * pix_words + r * r_words,
                                  w + o * w_os + (kh * kw_n + r) * c_n, run);
          }
        }
        if (rows) {
          aot_conv_out1(y + (p0 + p) * y_ps, s0, rows, o, lo, hi);
          continue;
        }
        out[o] = s0;
      }
    }
  }
  return 0;
}
#undef AOT_ACC_IN
#endif


/* The accumulators of `npix` output pixels x all `oc` output channels of a
   convolution (the portable path of aot_conv_s8, and the one for arguments
   the compiler cannot read as constants):
     acc[p*acc_ps + o] = sum_{kh,kw,c} x[kh*dh*x_rs + (p*sw + kw*dw)*x_cs + c]
                                       * w[((o*kh_n + kh)*kw_n + kw)*c_n + c]
   with OHWI weights.  Pixels and channels go in 2x2 blocks (aot_dot2x2_s8);
   when the taps of one kernel row are contiguous in the input (dw = 1 and
   a column stride of c_n) each kernel row is one dot product of kw_n*c_n. */
AOT_INLINE int32_t aot_conv_loops_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                     int32_t x_cs, const int8_t* w, int32_t npix, int32_t oc,
                                     int32_t kh_n, int32_t kw_n, int32_t c_n, int32_t sw,
                                     int32_t dh, int32_t dw) {
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

/* The accumulators of `npix` output pixels x all `oc` output channels of a
   convolution (tensor intrinsic of the arm_cpu conv2d strategy):
     acc[p*acc_ps + o] = sum_{kh,kw,c} x[kh*dh*x_rs + (p*sw + kw*dw)*x_cs + c]
                                       * w[((o*kh_n + kh)*kw_n + kw)*c_n + c]
   with OHWI weights: aot_conv_loops_s8, or on Helium with `widen` an int8
   im2col patch for short kernel rows.  The compiler names the DSP
   extension's widened paths as their own entry points below
   (aot/kernels/conv2d/paths.py, from the call's constant shape), so this
   one has none.  Every shape argument is a compile-time constant at the
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
#else
  (void)widen;
#endif
  return aot_conv_loops_s8(acc, acc_ps, x, x_rs, x_cs, w, npix, oc, kh_n, kw_n, c_n, sw, dh,
                           dw);
}

/* aot_conv_s8's widened paths (contiguous columns, x_cs = c_n, and widen
   set), one entry point each, named by aot/kernels/conv2d/paths.py
   (accumulate_path): with the DSP extension and without Helium, each chunk
   of pixels goes through aot_conv_wide_s8; elsewhere (Helium, or the host
   build of a kernel generated for such a core) each is aot_conv_s8. */
#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
/* A window of c_n % 4 == 0 channels whose every kernel row fits the widening
   buffer (aot_wide_chunk > 0). */
AOT_INLINE int32_t aot_conv_acc_wide_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                        int32_t x_rs, const int8_t* w, int32_t npix,
                                        int32_t oc, int32_t kh_n, int32_t kw_n, int32_t c_n,
                                        int32_t sw, int32_t dh, int32_t dw) {
  int32_t wide[AOT_WIDE_WORDS];
  return aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_wide_chunk(npix, kh_n, kw_n, c_n, sw, dw), 0, wide,
                          kh_n * kw_n * c_n, 0, 0, 0, 0, 0, 0);
}

/* A window of all kernel rows too big for the buffer, one kernel row fitting
   it (ResNet-8's 3x3 layers of 64 channels): one kernel row at a time, each
   adding to the sums of the rows before it. */
AOT_INLINE int32_t aot_conv_acc_rows_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                        int32_t x_rs, const int8_t* w, int32_t npix,
                                        int32_t oc, int32_t kh_n, int32_t kw_n, int32_t c_n,
                                        int32_t sw, int32_t dh, int32_t dw) {
  const int32_t row_chunk = aot_wide_chunk(npix, 1, kw_n, c_n, sw, dw);
  int32_t wide[AOT_WIDE_WORDS];
  int32_t kh;
  aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, 1, kw_n, c_n, sw, dh, dw, row_chunk, 0,
                   wide, kh_n * kw_n * c_n, 0, 0, 0, 0, 0, 0);
  for (kh = 1; kh < kh_n; ++kh) {
    aot_conv_wide_s8(acc, acc_ps, x + kh * dh * x_rs, x_rs, w + kh * kw_n * c_n, npix, oc, 1,
                     kw_n, c_n, sw, dh, dw, row_chunk, 0, wide, kh_n * kw_n * c_n, 1, 0, 0, 0,
                     0, 0);
  }
  return 0;
}

/* Few channels (e.g. the first layer): widened im2col patches of kernel rows
   of whole words, dw = 1.  Patches share no columns, so a chunk of two costs
   no more widening than a long one: a patch of at most AOT_PATCH_WORDS bytes
   takes the AOT_PATCH_WORDS buffer (less stack, as fast), a longer one (at
   most 2 * AOT_WIDE_WORDS bytes) the AOT_WIDE_WORDS one. */
AOT_INLINE int32_t aot_conv_acc_patch_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                         int32_t x_rs, const int8_t* w, int32_t npix,
                                         int32_t oc, int32_t kh_n, int32_t kw_n, int32_t c_n,
                                         int32_t sw, int32_t dh, int32_t dw) {
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t wide[AOT_PATCH_WORDS];
  return aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_patch_chunk(npix, w_os, AOT_PATCH_WORDS), 1, wide, w_os, 0, 0, 0,
                          0, 0, 0);
}

AOT_INLINE int32_t aot_conv_acc_long_patch_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                              int32_t x_rs, const int8_t* w, int32_t npix,
                                              int32_t oc, int32_t kh_n, int32_t kw_n,
                                              int32_t c_n, int32_t sw, int32_t dh, int32_t dw) {
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t wide[AOT_WIDE_WORDS];
  return aot_conv_wide_s8(acc, acc_ps, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_patch_chunk(npix, w_os, AOT_WIDE_WORDS), 1, wide, w_os, 0, 0, 0,
                          0, 0, 0);
}
#else
/* Without the DSP extension (or with Helium) every named path is the portable
   aot_conv_s8: the four entry points share one definition. */
#define AOT_CONV_ACC_PORTABLE(name)                                                          \
  AOT_INLINE int32_t name(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,       \
                          const int8_t* w, int32_t npix, int32_t oc, int32_t kh_n,           \
                          int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh, int32_t dw) {   \
    return aot_conv_s8(acc, acc_ps, x, x_rs, c_n, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,  \
                       1);                                                                   \
  }
AOT_CONV_ACC_PORTABLE(aot_conv_acc_wide_s8)
AOT_CONV_ACC_PORTABLE(aot_conv_acc_rows_s8)
AOT_CONV_ACC_PORTABLE(aot_conv_acc_patch_s8)
AOT_CONV_ACC_PORTABLE(aot_conv_acc_long_patch_s8)
#undef AOT_CONV_ACC_PORTABLE
#endif

/* The fused convolution rows: aot_conv_s8 followed by aot_requant_row_s8 over
   the same pixels, without the row of accumulators in between
   (aot/kernels/conv2d/fuse.py rewrites the pair into one of these calls),
   reading a row (2*bias, m, kh, e) per output channel (blocked by four
   channels, as aot_depthwise_requant_s8's):
     y[p*y_ps + o] = clamp_s8(aot_dw_requant(sum_{kh,kw,c} x[...] * w[...], row of o), lo, hi)
   The compiler picks the entry point from the call's constant shape
   (aot/kernels/conv2d/paths.py): a window that aot_conv_wide_s8 widens in
   one piece (aot_conv_requant_wide_s8) or as im2col patches (few channels,
   kernel rows of whole words: aot_conv_requant_patch_s8, or
   aot_conv_requant_long_patch_s8 for a patch longer than AOT_PATCH_WORDS
   bytes), with the DSP extension and without Helium, where each 3x2, 2x2, 1x4 or 1x2 block of
   sums is requantized from registers and stored as bytes (KWS's pointwise
   layers: no int32 row stored and read back, no out-of-line epilogue);
   aot_conv_requant_scratch_s8 elsewhere.  The first three write each chunk of
   pixels after widening its windows, the only order
   aot/kernels/overlap.py proves outputs may overlap inputs for. */
/* Output channels per step of aot_conv_requant_scratch_s8 (its int32
   scratch: two pixels of them, 256 bytes). */
#define AOT_CONV_REQUANT_OC 32

/* The fused row on any core and for any shape: aot_conv_loops_s8 fills a
   scratch of two pixels x AOT_CONV_REQUANT_OC channels, then requantized.
   It reads a pixel's window again after writing its first outputs (more
   than AOT_CONV_REQUANT_OC channels), so no overlap of y with x is proved
   for it. */
AOT_INLINE int32_t aot_conv_requant_scratch_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                               int32_t x_rs, int32_t x_cs, const int8_t* w,
                                               const int32_t* rows, int32_t npix, int32_t oc,
                                               int32_t kh_n, int32_t kw_n, int32_t c_n,
                                               int32_t sw, int32_t dh, int32_t dw, int32_t lo,
                                               int32_t hi) {
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t tmp[2 * AOT_CONV_REQUANT_OC];
  int32_t p;
  for (p = 0; p < npix; p += 2) {
    const int32_t np = npix - p < 2 ? npix - p : 2;
    int32_t o0;
    for (o0 = 0; o0 < oc; o0 += AOT_CONV_REQUANT_OC) {
      const int32_t no = oc - o0 < AOT_CONV_REQUANT_OC ? oc - o0 : AOT_CONV_REQUANT_OC;
      int32_t q, o;
      (void)aot_conv_loops_s8(tmp, no, x + p * sw * x_cs, x_rs, x_cs, w + o0 * w_os, np, no,
                              kh_n, kw_n, c_n, sw, dh, dw);
      for (q = 0; q < np; ++q) {
        for (o = 0; o < no; ++o) {
          const int32_t* r = rows + 16 * ((o0 + o) >> 2) + ((o0 + o) & 3);
          y[(p + q) * y_ps + o0 + o] =
              (int8_t)aot_clamp_s8(aot_dw_requant(tmp[q * no + o], r[0], r[4], r[8], r[12]),
                                   lo, hi);
        }
      }
    }
  }
  return 0;
}

#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
/* The fused row over a window of c_n % 4 == 0 channels with contiguous
   columns (x_cs = c_n) whose every kernel row fits the widening buffer
   (aot_wide_chunk > 0). */
AOT_INLINE int32_t aot_conv_requant_wide_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                            int32_t x_rs, const int8_t* w, const int32_t* rows,
                                            int32_t npix, int32_t oc, int32_t kh_n,
                                            int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,
                                            int32_t dw, int32_t lo, int32_t hi) {
  int32_t wide[AOT_WIDE_WORDS];
  return aot_conv_wide_s8((int32_t*)0, 0, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_wide_chunk(npix, kh_n, kw_n, c_n, sw, dw), 0, wide,
                          kh_n * kw_n * c_n, 0, y, y_ps, rows, lo, hi);
}

/* The fused row over few channels (KWS's first layer): widened im2col
   patches of kernel rows of whole words, contiguous columns (x_cs = c_n),
   dw = 1, in the AOT_PATCH_WORDS buffer (a patch of at most AOT_PATCH_WORDS
   bytes) or the AOT_WIDE_WORDS one (_long_patch_s8: at most 2 * AOT_WIDE_WORDS
   bytes), as aot_conv_acc_patch_s8 and aot_conv_acc_long_patch_s8. */
AOT_INLINE int32_t aot_conv_requant_patch_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                             int32_t x_rs, const int8_t* w, const int32_t* rows,
                                             int32_t npix, int32_t oc, int32_t kh_n,
                                             int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,
                                             int32_t dw, int32_t lo, int32_t hi) {
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t wide[AOT_PATCH_WORDS];
  return aot_conv_wide_s8((int32_t*)0, 0, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_patch_chunk(npix, w_os, AOT_PATCH_WORDS), 1, wide, w_os, 0, y,
                          y_ps, rows, lo, hi);
}

AOT_INLINE int32_t aot_conv_requant_long_patch_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                                  int32_t x_rs, const int8_t* w,
                                                  const int32_t* rows, int32_t npix, int32_t oc,
                                                  int32_t kh_n, int32_t kw_n, int32_t c_n,
                                                  int32_t sw, int32_t dh, int32_t dw, int32_t lo,
                                                  int32_t hi) {
  const int32_t w_os = kh_n * kw_n * c_n;
  int32_t wide[AOT_WIDE_WORDS];
  return aot_conv_wide_s8((int32_t*)0, 0, x, x_rs, w, npix, oc, kh_n, kw_n, c_n, sw, dh, dw,
                          aot_patch_chunk(npix, w_os, AOT_WIDE_WORDS), 1, wide, w_os, 0, y,
                          y_ps, rows, lo, hi);
}
#else
/* Elsewhere (the host build of a kernel generated for such a core, in the
   tests) the same entry points take the scratch path: the same outputs,
   not in pixel order beyond AOT_CONV_REQUANT_OC channels.  One definition for
   the three. */
#define AOT_CONV_REQUANT_SCRATCH(name)                                                       \
  AOT_INLINE int32_t name(int8_t* y, int32_t y_ps, const int8_t* x, int32_t x_rs,            \
                          const int8_t* w, const int32_t* rows, int32_t npix, int32_t oc,    \
                          int32_t kh_n, int32_t kw_n, int32_t c_n, int32_t sw, int32_t dh,   \
                          int32_t dw, int32_t lo, int32_t hi) {                              \
    return aot_conv_requant_scratch_s8(y, y_ps, x, x_rs, c_n, w, rows, npix, oc, kh_n, kw_n, \
                                       c_n, sw, dh, dw, lo, hi);                             \
  }
AOT_CONV_REQUANT_SCRATCH(aot_conv_requant_wide_s8)
AOT_CONV_REQUANT_SCRATCH(aot_conv_requant_patch_s8)
AOT_CONV_REQUANT_SCRATCH(aot_conv_requant_long_patch_s8)
#undef AOT_CONV_REQUANT_SCRATCH
#endif

#endif /* AOT_CONV2D_H */
