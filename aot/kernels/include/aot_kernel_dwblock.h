/* Blocked depthwise rows: the tensor intrinsic of the auto tuner's ``dwblock``
   sketch (aot/tune/auto/sketch.py, aot/kernels/depthwise_conv2d/blocked.py).
   One call computes the npix output pixels of one output row of a depthwise
   convolution (multiplier 1, dilation 1):

     s[p, c] = sum_{kh, kw} x[kh*x_rs + (p*sw + kw)*x_cs + c] * w[kh, kw, c]

   and stores either the sums (aot_dwblock_s8: acc[p*acc_ps + c]) or the
   int8 outputs requantized from registers with the fused epilogue's rows
   (aot_dwblock_requant_s8: clamp_s8(aot_dw_requant(s, row of c)), the rows of
   aot/kernels/conv2d/fuse.py, blocked by four channels).

   SMLAD multiplies two halfword pairs, so the operands are paired along the
   kernel columns instead of the channels:

   * the input is widened once per call, `cb` channels at a time, into a
     channel-planar stack buffer: wide[kh][c][col] int16, adjacent columns
     adjacent, each plane `wp` (even) values long, the column after the last
     tap zero; a word at an even column holds (x[col], x[col+1]);
   * the weights are packed at compile time (pack_dwblock): per channel and
     kernel row KW + 1 words of int16 pairs, E_j = (w[2j], w[2j+1]) for
     j < (KW+1)/2 and O_j = (w[2j-1], w[2j]) for j <= KW/2 (w[-1] = w[KW] = 0).
     A pixel whose first tap is at an even column `b` is sum_j SMLAD(word(b+2j),
     E_j); one at an odd column b + 1 is sum_j SMLAD(word(b+2j), O_j).
     For 3 columns only E_0 = (w0, w1) and O_1 = (w1, w2) are read: the even
     pixel is SMLAD(word(b), E_0) + SMLABT(word(b+2), O_1), the odd one
     SMLATB(word(b), E_0) + SMLAD(word(b+2), O_1), so a kernel row of a
     pixel costs two multiplies and (pairs of pixels) one LDRD.

   Channels outermost: a channel's weights and requantization row are loaded
   once per call, then its pixels in blocks of P (1, 2 or 4: the sums in
   registers).  Every argument but the pointers is a compile-time constant at
   the call and the helpers are always inlined.  The portable path reads the
   same layouts with plain multiplies and wraps like int32 sums do: every path
   gives the same bits. */
#ifndef AOT_KERNEL_DWBLOCK_H
#define AOT_KERNEL_DWBLOCK_H

#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"
#include "aot_kernel_int8.h"

/* int16 values of the widened input one chunk of channels may hold (3 KiB). */
#define AOT_DWB_WIDE_MAX 1536
#define AOT_DWB_P_MAX 4

typedef int32_t aot_dwb_s32_alias __attribute__((may_alias));

/* The word of int16 pairs at element `at` (even) of a widened plane or of the
   packed weights. */
AOT_INLINE int32_t aot_dwb_word(const int16_t* base, int32_t at) {
  return *(const aot_dwb_s32_alias*)(const void*)(base + at);
}

/* sum += lo(a) * lo(b) + hi(a) * hi(b) (SMLAD), wrapping. */
AOT_INLINE int32_t aot_dwb_dual(int32_t a, int32_t b, int32_t sum) {
#if defined(AOT_HAVE_DSP)
  return __smlad(a, b, sum);
#else
  const int32_t al = (int16_t)(uint32_t)a, ah = (int16_t)((uint32_t)a >> 16);
  const int32_t bl = (int16_t)(uint32_t)b, bh = (int16_t)((uint32_t)b >> 16);
  return (int32_t)((uint32_t)sum + (uint32_t)(al * bl) + (uint32_t)(ah * bh));
#endif
}

/* sum += lo(a) * hi(b) (SMLABT). */
AOT_INLINE int32_t aot_dwb_lo_hi(int32_t a, int32_t b, int32_t sum) {
#if defined(AOT_HAVE_DSP)
  return __smlabt(a, b, sum);
#else
  return (int32_t)((uint32_t)sum + (uint32_t)((int16_t)(uint32_t)a
                                              * (int16_t)((uint32_t)b >> 16)));
#endif
}

/* sum += hi(a) * lo(b) (SMLATB). */
AOT_INLINE int32_t aot_dwb_hi_lo(int32_t a, int32_t b, int32_t sum) {
#if defined(AOT_HAVE_DSP)
  return __smlatb(a, b, sum);
#else
  return (int32_t)((uint32_t)sum + (uint32_t)((int16_t)((uint32_t)a >> 16)
                                              * (int16_t)(uint32_t)b));
#endif
}

/* Widen channels c0 .. c0 + n - 1 of kh_n input rows of `cols` columns into
   wide[kh][c][col] (planes of wp values; columns cols .. wp - 1 zero). */
AOT_INLINE void aot_dwb_widen(int16_t* wide, int32_t wp, const int8_t* x, int32_t x_rs,
                              int32_t x_cs, int32_t c0, int32_t n, int32_t kh_n,
                              int32_t cols) {
  int32_t kh, c, col;
  for (kh = 0; kh < kh_n; ++kh) {
    const int8_t* row = x + kh * x_rs + c0;
    int16_t* plane = wide + kh * n * wp;
    int32_t c4 = 0;
#if defined(AOT_HAVE_DSP)
    /* four channels of two columns: two words in, four pairs out (a bound
       GCC sees is a multiple of 4, so it knows where the tail starts) */
    c4 = n & ~3;
    for (c = 0; c < c4; c += 4) {
      int16_t* p0 = plane + c * wp;
      for (col = 0; col + 2 <= cols; col += 2) {
        const uint32_t a = aot_load32(row + col * x_cs + c);
        const uint32_t b = aot_load32(row + (col + 1) * x_cs + c);
        const uint32_t ae = (uint32_t)__sxtb16((int32_t)a), be = (uint32_t)__sxtb16((int32_t)b);
        const uint32_t ao = (uint32_t)aot_sxtb16_ror8(a), bo = (uint32_t)aot_sxtb16_ror8(b);
        *(aot_dwb_s32_alias*)(void*)(p0 + col) = (int32_t)((ae & 0xffffu) | (be << 16));
        *(aot_dwb_s32_alias*)(void*)(p0 + wp + col) = (int32_t)((ao & 0xffffu) | (bo << 16));
        *(aot_dwb_s32_alias*)(void*)(p0 + 2 * wp + col) =
            (int32_t)((ae >> 16) | (be & 0xffff0000u));
        *(aot_dwb_s32_alias*)(void*)(p0 + 3 * wp + col) =
            (int32_t)((ao >> 16) | (bo & 0xffff0000u));
      }
      for (; col < wp; ++col) {
        const int32_t in = col < cols;
        p0[col] = in ? row[col * x_cs + c] : 0;
        p0[wp + col] = in ? row[col * x_cs + c + 1] : 0;
        p0[2 * wp + col] = in ? row[col * x_cs + c + 2] : 0;
        p0[3 * wp + col] = in ? row[col * x_cs + c + 3] : 0;
      }
    }
#endif
    for (c = c4; c < n; ++c) {
      int16_t* pc = plane + c * wp;
      for (col = 0; col < cols; ++col) {
        pc[col] = row[col * x_cs + c];
      }
      for (; col < wp; ++col) {
        pc[col] = 0;
      }
    }
  }
}

/* The sums of P pixels (p0 .. p0 + P - 1) of one channel: xc its planes
   (kernel rows n * wp apart), wc its packed weights (kh_n * (kw_n + 1) words). */
AOT_INLINE void aot_dwb_pixels(int32_t* s, const int16_t* xc, int32_t row_vals,
                               const int16_t* wc, int32_t p0, int32_t P, int32_t kh_n,
                               int32_t kw_n, int32_t sw) {
  const int32_t ne = (kw_n + 1) / 2, no = kw_n / 2 + 1;
  int32_t kh, i, j;
  AOT_UNROLL("GCC unroll 4")
  for (i = 0; i < P; ++i) {
    s[i] = 0;
  }
  AOT_UNROLL("GCC unroll 8")
  for (kh = 0; kh < kh_n; ++kh) {
    const int16_t* xr = xc + kh * row_vals;
    const int16_t* wr = wc + 2 * kh * (kw_n + 1);
    if (kw_n == 3) {
      const int32_t e0 = aot_dwb_word(wr, 0), o1 = aot_dwb_word(wr, 6);
      AOT_UNROLL("GCC unroll 4")
      for (i = 0; i < P; ++i) {
        const int32_t col = (p0 + i) * sw;
        const int32_t b = col & ~1;
        const int32_t a0 = aot_dwb_word(xr, b), a1 = aot_dwb_word(xr, b + 2);
        if (col & 1) {
          s[i] = aot_dwb_dual(a1, o1, aot_dwb_hi_lo(a0, e0, s[i]));
        } else {
          s[i] = aot_dwb_lo_hi(a1, o1, aot_dwb_dual(a0, e0, s[i]));
        }
      }
    } else {
      AOT_UNROLL("GCC unroll 4")
      for (i = 0; i < P; ++i) {
        const int32_t col = (p0 + i) * sw;
        const int32_t b = col & ~1;
        if (col & 1) {
          AOT_UNROLL("GCC unroll 4")
          for (j = 0; j < no; ++j) {
            s[i] = aot_dwb_dual(aot_dwb_word(xr, b + 2 * j), aot_dwb_word(wr, 2 * (ne + j)),
                                s[i]);
          }
        } else {
          AOT_UNROLL("GCC unroll 4")
          for (j = 0; j < ne; ++j) {
            s[i] = aot_dwb_dual(aot_dwb_word(xr, b + 2 * j), aot_dwb_word(wr, 2 * j), s[i]);
          }
        }
      }
    }
  }
}

/* The row: chunks of cb channels widened, then per channel blocks of P
   pixels (a last partial block one pixel at a time); with `rows` the int8
   outputs y[p*y_ps + c], else the sums acc[p*acc_ps + c]. */
AOT_INLINE void aot_dwblock_row(int32_t* acc, int32_t acc_ps, int8_t* y, int32_t y_ps,
                                const int32_t* rows, int32_t lo, int32_t hi, const int8_t* x,
                                int32_t x_rs, int32_t x_cs, const int8_t* w, int32_t npix,
                                int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t sw, int32_t P,
                                int32_t cb) {
  int16_t wide[AOT_DWB_WIDE_MAX] AOT_ALIGNED(8);
  const int16_t* wq = (const int16_t*)(const void*)w;
  const int32_t cols = (npix - 1) * sw + kw_n;
  const int32_t wp = (cols + 2) & ~1;  /* the column after the last tap, even */
  const int32_t w_cs = 2 * kh_n * (kw_n + 1);  /* int16 values per channel */
  int32_t c0, c, p, i;
  for (c0 = 0; c0 < c_n; c0 += cb) {
    const int32_t n = c_n - c0 < cb ? c_n - c0 : cb;
    aot_dwb_widen(wide, wp, x, x_rs, x_cs, c0, n, kh_n, cols);
    for (c = 0; c < n; ++c) {
      const int16_t* xc = wide + c * wp;
      const int16_t* wc = wq + (c0 + c) * w_cs;
      const int32_t* r = rows ? rows + 16 * ((c0 + c) >> 2) + ((c0 + c) & 3) : rows;
      int32_t b2 = 0, m = 0, k = 0, e = 0;
      int32_t s[AOT_DWB_P_MAX];
      if (rows) {
        b2 = r[0];
        m = r[4];
        k = r[8];
        e = r[12];
      }
      for (p = 0; p + P <= npix; p += P) {
        aot_dwb_pixels(s, xc, n * wp, wc, p, P, kh_n, kw_n, sw);
        AOT_UNROLL("GCC unroll 4")
        for (i = 0; i < P; ++i) {
          if (rows) {
            y[(p + i) * y_ps + c0 + c] =
                (int8_t)aot_clamp_s8(aot_dw_requant(s[i], b2, m, k, e), lo, hi);
          } else {
            acc[(p + i) * acc_ps + c0 + c] = s[i];
          }
        }
      }
      for (; p < npix; ++p) {
        aot_dwb_pixels(s, xc, n * wp, wc, p, 1, kh_n, kw_n, sw);
        if (rows) {
          y[p * y_ps + c0 + c] = (int8_t)aot_clamp_s8(aot_dw_requant(s[0], b2, m, k, e), lo, hi);
        } else {
          acc[p * acc_ps + c0 + c] = s[0];
        }
      }
    }
  }
}

/* The sums of a row (the tensor intrinsic; its epilogue is separate). */
AOT_INLINE int32_t aot_dwblock_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                  int32_t x_cs, const int8_t* w, int32_t npix, int32_t c_n,
                                  int32_t kh_n, int32_t kw_n, int32_t sw, int32_t P,
                                  int32_t cb) {
  aot_dwblock_row(acc, acc_ps, (int8_t*)0, 0, (const int32_t*)0, 0, 0, x, x_rs, x_cs, w, npix,
                  c_n, kh_n, kw_n, sw, P, cb);
  return 0;
}

/* aot_dwblock_s8 followed by aot_requant_row_s8 over the row, requantized from
   registers (the fused epilogue's rows, aot/kernels/conv2d/fuse.py). */
AOT_INLINE int32_t aot_dwblock_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x, int32_t x_rs,
                                          int32_t x_cs, const int8_t* w, const int32_t* rows,
                                          int32_t npix, int32_t c_n, int32_t kh_n, int32_t kw_n,
                                          int32_t sw, int32_t P, int32_t cb, int32_t lo,
                                          int32_t hi) {
  aot_dwblock_row((int32_t*)0, 0, y, y_ps, rows, lo, hi, x, x_rs, x_cs, w, npix, c_n, kh_n,
                  kw_n, sw, P, cb);
  return 0;
}

#endif /* AOT_KERNEL_DWBLOCK_H */
