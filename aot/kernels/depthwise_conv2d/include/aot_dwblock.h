/* Blocked depthwise rows: the tensor intrinsic of the auto tuner's ``dwblock``
   sketch (aot/kernels/depthwise_conv2d/blocked.py and schedules.py).
   One call computes nrow output rows of npix pixels of a depthwise
   convolution (multiplier 1, dilation 1; output row r reads input rows
   r*sh .. r*sh + KH - 1):

     s[r, p, c] = sum_{kh, kw} x[(r*sh + kh)*x_rs + (p*sw + kw)*x_cs + c]
                               * w[kh, kw, c]

   and stores either the sums (aot_dwblock_s8: acc[(r*npix + p)*acc_ps + c])
   or the int8 outputs requantized from registers with the fused epilogue's
   rows (aot_dwblock_requant_s8: clamp_s8(aot_dw_requant(s, row of c)), the
   rows of aot/kernels/conv2d/fuse.py, blocked by four channels).

   SMLAD multiplies two halfword pairs, so the operands are paired along the
   kernel columns instead of the channels:

   * the input is widened once per call, `cb` channels at a time, into a
     stack buffer of int16 pairs of adjacent columns: the word of channel c,
     kernel row kh and columns (2j, 2j+1) at (kh*pairs + j)*cb + c, for the
     row's columns and the one after the last tap (wp = 2 * pairs values per
     channel and kernel row); four channels of two columns are two word loads,
     four SXTB16, four PKHBT/PKHTB and four word stores side by side (every
     input row of the call once, `uw`: the column pairs four at a time);
   * the weights are packed at compile time (pack_dwblock): per channel and
     kernel row KW + 1 words of int16 pairs, E_j = (w[2j], w[2j+1]) for
     j < (KW+1)/2 and O_j = (w[2j-1], w[2j]) for j <= KW/2 (w[-1] = w[KW] = 0).
     A pixel whose first tap is at an even column `b` is sum_j SMLAD(word(b+2j),
     E_j); one at an odd column b + 1 is sum_j SMLAD(word(b+2j), O_j).
     For 3 columns only E_0 = (w0, w1) and O_1 = (w1, w2) are read: the even
     pixel is SMLAD(word(b), E_0) + SMLABT(word(b+2), O_1), the odd one
     SMLATB(word(b), E_0) + SMLAD(word(b+2), O_1), so a kernel row of a
     pixel costs two multiplies and (pairs of pixels) one word load.

   With `dbl` the weights are packed doubled (the fused epilogue's: each
   channel's |acc + bias| < 2^30, so 2 * acc does not wrap): the fused
   helper starts each sum at the channel's 2 * bias and has the doubled
   value aot_dw_requant starts from without an add; aot_dwblock_s8 returns
   the sums halved (exact).

   Channels outermost: a channel's requantization row is loaded once per
   call, then per output row its pixels in blocks of P (1 to 6: the sums in
   registers; 3x3 blocks in inline assembly).  Every argument but the
   pointers is a compile-time constant at the call and the helpers are always
   inlined.  The portable path reads the same layouts with plain multiplies
   and wraps like int32 sums do: every path gives the same bits. */
#ifndef AOT_DWBLOCK_H
#define AOT_DWBLOCK_H

#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"
#include "aot_kernel_int8.h"

/* int16 values of the widened input one chunk of channels may hold (3 KiB). */
#define AOT_DWB_WIDE_MAX 1536
#define AOT_DWB_P_MAX 6

typedef int32_t aot_dwb_s32_alias __attribute__((may_alias));

/* The word of int16 pairs at element `at` (even) of the packed weights. */
AOT_INLINE int32_t aot_dwb_word(const int16_t* base, int32_t at) {
  return *(const aot_dwb_s32_alias*)(const void*)(base + at);
}

#if defined(AOT_HAVE_DSP)
/* (lo(a), lo(b)) and (hi(a), hi(b)): PKHBT and PKHTB (GCC spells each as two
   instructions). */
AOT_INLINE int32_t aot_dwb_pack_lo(int32_t a, int32_t b) {
#if defined(AOT_DSP_ASM)
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return (int32_t)(((uint32_t)a & 0xFFFFu) | ((uint32_t)b << 16));
#endif
}

AOT_INLINE int32_t aot_dwb_pack_hi(int32_t a, int32_t b) {
#if defined(AOT_DSP_ASM)
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
#else
  return (int32_t)(((uint32_t)b & 0xFFFF0000u) | ((uint32_t)a >> 16));
#endif
}
#endif

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

/* The n words (xa[c], xb[c]) of one pair of columns, widened. */
AOT_INLINE void aot_dwb_widen_pair(int32_t* out, const int8_t* xa, const int8_t* xb,
                                   int32_t n) {
  int32_t c, c4 = 0;
#if defined(AOT_HAVE_DSP)
  /* four channels of both columns: two words in, four pairs out (a bound
     GCC sees is a multiple of 4, so it knows where the tail starts) */
  c4 = n & ~3;
  AOT_UNROLL("GCC unroll 4")
  for (c = 0; c < c4; c += 4) {
    const uint32_t a = aot_load32(xa + c), b = aot_load32(xb + c);
    const int32_t ae = __sxtb16((int32_t)a), be = __sxtb16((int32_t)b);
    const int32_t ao = aot_sxtb16_ror8(a), bo = aot_sxtb16_ror8(b);
    out[c] = aot_dwb_pack_lo(ae, be);
    out[c + 1] = aot_dwb_pack_lo(ao, bo);
    out[c + 2] = aot_dwb_pack_hi(ae, be);
    out[c + 3] = aot_dwb_pack_hi(ao, bo);
  }
#endif
  for (c = c4; c < n; ++c) {
    out[c] = (int32_t)(((uint32_t)(int32_t)xa[c] & 0xffffu) | ((uint32_t)(int32_t)xb[c] << 16));
  }
}

/* The n words of a lone last column: its value in the low half (the high
   half, past the last column, is read only by zero weights or not at all). */
AOT_INLINE void aot_dwb_widen_one(int32_t* out, const int8_t* xa, int32_t n) {
  int32_t c, c4 = 0;
#if defined(AOT_HAVE_DSP)
  c4 = n & ~3;
  AOT_UNROLL("GCC unroll 4")
  for (c = 0; c < c4; c += 4) {
    const uint32_t a = aot_load32(xa + c);
    const int32_t ae = __sxtb16((int32_t)a), ao = aot_sxtb16_ror8(a);
    out[c] = ae;
    out[c + 1] = ao;
    out[c + 2] = ae >> 16;
    out[c + 3] = ao >> 16;
  }
#endif
  for (c = c4; c < n; ++c) {
    out[c] = (int32_t)xa[c];
  }
}

/* Widen channels c0 .. c0 + n - 1 of kh_n input rows of `cols` columns into
   the words wide[(kh*pairs + j)*n + c] = (x[kh][2j][c], x[kh][2j+1][c]) for
   the pairs j < pairs = wp / 2 (the high half of a pair past the last
   column is unspecified, and so is a pair wholly past it: only zero weights
   or no multiply read them). */
AOT_INLINE void aot_dwb_widen(int32_t* wide, int32_t wp, const int8_t* x, int32_t x_rs,
                              int32_t x_cs, int32_t c0, int32_t n, int32_t kh_n,
                              int32_t cols, int32_t uw) {
  const int32_t pairs = wp / 2, full = cols / 2;
  int32_t kh, j;
  for (kh = 0; kh < kh_n; ++kh) {
    const int8_t* xr = x + kh * x_rs + c0;
    int32_t* out = wide + kh * pairs * n;
    if (uw) { /* the pairs four at a time (the sketch's `unroll_widen`) */
      AOT_UNROLL("GCC unroll 4")
      for (j = 0; j < full; ++j) {
        aot_dwb_widen_pair(out + j * n, xr + 2 * j * x_cs, xr + (2 * j + 1) * x_cs, n);
      }
    } else {
      for (j = 0; j < full; ++j) {
        aot_dwb_widen_pair(out + j * n, xr + 2 * j * x_cs, xr + (2 * j + 1) * x_cs, n);
      }
    }
    for (; j < pairs; ++j) { /* the lone last column, or a pair past it */
      aot_dwb_widen_one(out + j * n, xr + (2 * j < cols ? 2 * j : cols - 1) * x_cs, n);
    }
  }
}

#if defined(AOT_HAVE_DSP) && defined(__GNUC__) && !defined(__clang__) \
    && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(AOT_NO_ASM)
/* The 3x3 taps of a block of P pixels (1 to 6) of one channel whose first
   column is even, in GCC inline assembly: in C, GCC kept the sums of a block
   on the stack between kernel rows (spilled around every multiply).  Per
   kernel row: the two weight words, then the block's words in column order
   into two alternating registers, each feeding the multiplies that read it
   (stride 1, four pixels: five loads, eight multiplies; ten registers in
   all).  AOT_DWB_ROW_S<stride>P<pixels>, composed of one step per pixel
   or, at stride 1, per pair of pixels: KH the kernel row (immediate
   arithmetic for the assembler); R the kernel rows' and N the column pairs'
   distance in bytes, immediates (aot_dwb_fits).  AOT_NO_ASM turns it off. */
#define AOT_HAVE_DWB_ASM 1

/* A kernel row's two weight words and the block's first word. */
#define AOT_DWB_HEAD(KH) \
  "ldr %[e], [%[w], #" KH "*16]\n\t" \
  "ldr %[o], [%[w], #" KH "*16+12]\n\t" \
  "ldr %[a], [%[x], #" KH "*%c[R]]\n\t"
/* Pixel I alone: its first two taps from word A (already loaded), its third
   from word J, loaded into B. */
#define AOT_DWB_PIX(KH, I, J, A, B) \
  "smlad %[s" #I "], %[" #A "], %[e], %[s" #I "]\n\t" \
  "ldr %[" #B "], [%[x], #" KH "*%c[R]+" #J "*%c[N]]\n\t" \
  "smlabt %[s" #I "], %[" #B "], %[o], %[s" #I "]\n\t"
/* Pixels I and I1 (stride 1) from word A and word J, loaded into B. */
#define AOT_DWB_PAIR(KH, I, I1, J, A, B) \
  "smlad %[s" #I "], %[" #A "], %[e], %[s" #I "]\n\t" \
  "smlatb %[s" #I1 "], %[" #A "], %[e], %[s" #I1 "]\n\t" \
  "ldr %[" #B "], [%[x], #" KH "*%c[R]+" #J "*%c[N]]\n\t" \
  "smlabt %[s" #I "], %[" #B "], %[o], %[s" #I "]\n\t" \
  "smlad %[s" #I1 "], %[" #B "], %[o], %[s" #I1 "]\n\t"

#define AOT_DWB_ROW_S1P1(KH) AOT_DWB_HEAD(KH) AOT_DWB_PIX(KH, 0, 1, a, b)
#define AOT_DWB_ROW_S1P2(KH) AOT_DWB_HEAD(KH) AOT_DWB_PAIR(KH, 0, 1, 1, a, b)
#define AOT_DWB_ROW_S1P3(KH) AOT_DWB_ROW_S1P2(KH) AOT_DWB_PIX(KH, 2, 2, b, a)
#define AOT_DWB_ROW_S1P4(KH) AOT_DWB_ROW_S1P2(KH) AOT_DWB_PAIR(KH, 2, 3, 2, b, a)
#define AOT_DWB_ROW_S1P5(KH) AOT_DWB_ROW_S1P4(KH) AOT_DWB_PIX(KH, 4, 3, a, b)
#define AOT_DWB_ROW_S1P6(KH) AOT_DWB_ROW_S1P4(KH) AOT_DWB_PAIR(KH, 4, 5, 3, a, b)

#define AOT_DWB_ROW_S2P1(KH) AOT_DWB_HEAD(KH) AOT_DWB_PIX(KH, 0, 1, a, b)
#define AOT_DWB_ROW_S2P2(KH) AOT_DWB_ROW_S2P1(KH) AOT_DWB_PIX(KH, 1, 2, b, a)
#define AOT_DWB_ROW_S2P3(KH) AOT_DWB_ROW_S2P2(KH) AOT_DWB_PIX(KH, 2, 3, a, b)
#define AOT_DWB_ROW_S2P4(KH) AOT_DWB_ROW_S2P3(KH) AOT_DWB_PIX(KH, 3, 4, b, a)
#define AOT_DWB_ROW_S2P5(KH) AOT_DWB_ROW_S2P4(KH) AOT_DWB_PIX(KH, 4, 5, a, b)
#define AOT_DWB_ROW_S2P6(KH) AOT_DWB_ROW_S2P5(KH) AOT_DWB_PIX(KH, 5, 6, b, a)

#define AOT_DWB_S_OUT1 [s0] "+r"(s[0])
#define AOT_DWB_S_OUT2 AOT_DWB_S_OUT1, [s1] "+r"(s[1])
#define AOT_DWB_S_OUT3 AOT_DWB_S_OUT2, [s2] "+r"(s[2])
#define AOT_DWB_S_OUT4 AOT_DWB_S_OUT3, [s3] "+r"(s[3])
#define AOT_DWB_S_OUT5 AOT_DWB_S_OUT4, [s4] "+r"(s[4])
#define AOT_DWB_S_OUT6 AOT_DWB_S_OUT5, [s5] "+r"(s[5])
#define AOT_DWB_ASM(ROW, OUT)                                                     \
  __asm__ volatile(ROW("0") ROW("1") ROW("2")                                     \
                   : OUT, [a] "=&r"(a), [b] "=&r"(b), [e] "=&r"(e), [o] "=&r"(o)  \
                   : [x] "r"(xb), [w] "r"(wc), [R] "n"(r_), [N] "n"(n_)           \
                   : "memory")

/* The immediates fit LDR's offsets (0..4095 bytes): two kernel rows and up
   to six column pairs past the block's first word (stride 2, six pixels). */
AOT_INLINE int32_t aot_dwb_fits(int32_t r, int32_t n) {
  return (uint32_t)r < 2048u && (uint32_t)n < 1024u && 2 * r + 6 * n < 4096;
}
#endif

/* The sums of P pixels of one channel, pixels q .. q + P - 1 of a block
   whose first pixel's column is even: xb its first widened word (pairs of
   columns `n` words apart, kernel rows `row` words apart), wc the channel's
   packed weights (kh_n * (kw_n + 1) words).  q, P and the shapes are
   constants once inlined, so each pixel's column parity is too. */
AOT_INLINE void aot_dwb_pixels(int32_t* s, int32_t init, const int32_t* xb, int32_t row,
                               int32_t n, const int16_t* wc, int32_t q, int32_t P,
                               int32_t kh_n, int32_t kw_n, int32_t sw) {
  const int32_t ne = (kw_n + 1) / 2, no = kw_n / 2 + 1;
  int32_t kh, i, j;
  AOT_UNROLL("GCC unroll 8")
  for (i = 0; i < P; ++i) {
    s[i] = init;
  }
#if defined(AOT_HAVE_DWB_ASM)
  {
    const int32_t r_ = 4 * row, n_ = 4 * n;
    if (kh_n == 3 && kw_n == 3 && ((q * sw) & 1) == 0 && __builtin_constant_p(r_)
        && __builtin_constant_p(n_) && __builtin_constant_p(P) && __builtin_constant_p(sw)
        && aot_dwb_fits(r_, n_)) {
      int32_t a, b, e, o;
      xb += ((q * sw) >> 1) * n;
      if (sw == 1 && P == 1) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P1, AOT_DWB_S_OUT1);
        return;
      }
      if (sw == 1 && P == 2) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P2, AOT_DWB_S_OUT2);
        return;
      }
      if (sw == 1 && P == 3) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P3, AOT_DWB_S_OUT3);
        return;
      }
      if (sw == 1 && P == 4) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P4, AOT_DWB_S_OUT4);
        return;
      }
      if (sw == 1 && P == 5) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P5, AOT_DWB_S_OUT5);
        return;
      }
      if (sw == 1 && P == 6) {
        AOT_DWB_ASM(AOT_DWB_ROW_S1P6, AOT_DWB_S_OUT6);
        return;
      }
      if (sw == 2 && P == 1) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P1, AOT_DWB_S_OUT1);
        return;
      }
      if (sw == 2 && P == 2) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P2, AOT_DWB_S_OUT2);
        return;
      }
      if (sw == 2 && P == 3) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P3, AOT_DWB_S_OUT3);
        return;
      }
      if (sw == 2 && P == 4) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P4, AOT_DWB_S_OUT4);
        return;
      }
      if (sw == 2 && P == 5) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P5, AOT_DWB_S_OUT5);
        return;
      }
      if (sw == 2 && P == 6) {
        AOT_DWB_ASM(AOT_DWB_ROW_S2P6, AOT_DWB_S_OUT6);
        return;
      }
      xb -= ((q * sw) >> 1) * n;
    }
  }
#endif
  AOT_UNROLL("GCC unroll 8")
  for (kh = 0; kh < kh_n; ++kh) {
    const int32_t* xr = xb + kh * row;
    const int16_t* wr = wc + 2 * kh * (kw_n + 1);
#if defined(AOT_HAVE_DSP)
    /* each kernel row's words loaded where they are used: hoisted out of the
       pixel blocks, the weights took the sums' registers and GCC spilled */
    __asm__ volatile("" ::: "memory");
#endif
    if (kw_n == 3) {
      const int32_t e0 = aot_dwb_word(wr, 0), o1 = aot_dwb_word(wr, 6);
      AOT_UNROLL("GCC unroll 8")
      for (i = 0; i < P; ++i) {
        const int32_t col = (q + i) * sw;
        const int32_t a0 = xr[(col >> 1) * n], a1 = xr[((col >> 1) + 1) * n];
        if (col & 1) {
          s[i] = aot_dwb_dual(a1, o1, aot_dwb_hi_lo(a0, e0, s[i]));
        } else {
          s[i] = aot_dwb_lo_hi(a1, o1, aot_dwb_dual(a0, e0, s[i]));
        }
      }
    } else {
      AOT_UNROLL("GCC unroll 8")
      for (i = 0; i < P; ++i) {
        const int32_t col = (q + i) * sw;
        const int32_t* xp = xr + (col >> 1) * n;
        if (col & 1) {
          AOT_UNROLL("GCC unroll 4")
          for (j = 0; j < no; ++j) {
            s[i] = aot_dwb_dual(xp[j * n], aot_dwb_word(wr, 2 * (ne + j)), s[i]);
          }
        } else {
          AOT_UNROLL("GCC unroll 4")
          for (j = 0; j < ne; ++j) {
            s[i] = aot_dwb_dual(xp[j * n], aot_dwb_word(wr, 2 * j), s[i]);
          }
        }
      }
    }
  }
}

/* Pixels q .. q + P - 1 of the block at y (or acc): their sums, then the outputs. */
#define AOT_DWB_BLOCK(Q, NP)                                                      \
  do {                                                                            \
    aot_dwb_pixels(s, dbl && rows ? b2 : 0, xb, row, n, wc, (Q), (NP), kh_n, kw_n, sw); \
    AOT_UNROLL("GCC unroll 8")                                                    \
    for (i = 0; i < (NP); ++i) {                                                  \
      if (rows) {                                                                 \
        const int32_t q_ = dbl ? aot_dw_requant(0, s[i], m, k, e)                 \
                               : aot_dw_requant(s[i], b2, m, k, e);               \
        yb[((Q) + i) * y_ps] = (int8_t)aot_clamp_s8(q_, lo, hi);                  \
      } else {                                                                    \
        ab[((Q) + i) * acc_ps] = dbl ? s[i] >> 1 : s[i];                          \
      }                                                                           \
    }                                                                             \
  } while (0)

/* One chunk of the call: channels c0 .. c0 + n - 1 (see aot_dwblock_rows),
   widened, then per channel and output row the blocks of pixels. */
AOT_INLINE void aot_dwb_chunk(int32_t* wide, int32_t* acc, int32_t acc_ps, int8_t* y,
                              int32_t y_ps, const int32_t* rows, int32_t lo, int32_t hi,
                              const int8_t* x, int32_t x_rs, int32_t x_cs, const int16_t* wq,
                              int32_t nrow, int32_t npix, int32_t c0, int32_t n, int32_t kh_n,
                              int32_t kw_n, int32_t sh, int32_t sw, int32_t P, int32_t dbl,
                              int32_t uw) {
  const int32_t cols = (npix - 1) * sw + kw_n;
  const int32_t wp = (cols + 2) & ~1;  /* the column after the last tap, even */
  const int32_t w_cs = 2 * kh_n * (kw_n + 1);  /* int16 values per channel */
  const int32_t step = (P * sw) & 1 ? 2 * P : P;
  const int32_t row = n * (wp / 2);
  int32_t c, r, p, i;
  aot_dwb_widen(wide, wp, x, x_rs, x_cs, c0, n, (nrow - 1) * sh + kh_n, cols, uw);
  for (c = 0; c < n; ++c) {
    const int16_t* wc = wq + (c0 + c) * w_cs;
    const int32_t* rr = rows ? rows + 16 * ((c0 + c) >> 2) + ((c0 + c) & 3) : rows;
    int32_t b2 = 0, m = 0, k = 0, e = 0;
    int32_t s[2 * AOT_DWB_P_MAX];
    if (rows) {
      b2 = rr[0];
      m = rr[4];
      k = rr[8];
      e = rr[12];
    }
    for (r = 0; r < nrow; ++r) {
      const int32_t* xr = wide + c + r * sh * row;
      int8_t* yr = rows ? y + r * npix * y_ps + c0 + c : y;
      int32_t* ar = rows ? acc : acc + r * npix * acc_ps + c0 + c;
      for (p = 0; p + step <= npix; p += step) {
        const int32_t* xb = xr + ((p * sw) >> 1) * n;
        int8_t* yb = rows ? yr + p * y_ps : y;
        int32_t* ab = rows ? acc : ar + p * acc_ps;
        AOT_DWB_BLOCK(0, P);
        if (step > P) {
          AOT_DWB_BLOCK(P, P);
        }
      }
      if (p < npix) {
        const int32_t* xb = xr + ((p * sw) >> 1) * n;
        int8_t* yb = rows ? yr + p * y_ps : y;
        int32_t* ab = rows ? acc : ar + p * acc_ps;
        AOT_DWB_BLOCK(0, npix - p);
      }
    }
  }
}

/* nrow output rows of npix pixels (rows npix pixels apart in y or acc; input
   row r * sh for output row r): chunks of cb channels (a last one of
   c_n % cb) widened, every input row once, then per channel and output row
   blocks of P pixels (two blocks per step when P pixels span an odd number
   of columns, so that every step starts at an even column; a last partial
   step as one block); with `rows` the int8 outputs y[(r*npix + p)*y_ps + c],
   else the sums acc[(r*npix + p)*acc_ps + c]. */
AOT_INLINE void aot_dwblock_rows(int32_t* acc, int32_t acc_ps, int8_t* y, int32_t y_ps,
                                 const int32_t* rows, int32_t lo, int32_t hi, const int8_t* x,
                                 int32_t x_rs, int32_t x_cs, const int8_t* w, int32_t nrow,
                                 int32_t npix, int32_t c_n, int32_t kh_n, int32_t kw_n,
                                 int32_t sh, int32_t sw, int32_t P, int32_t cb, int32_t dbl,
                                 int32_t uw) {
  int32_t wide[AOT_DWB_WIDE_MAX / 2];
  const int16_t* wq = (const int16_t*)(const void*)w;
  int32_t c0;
  /* whole chunks, then the rest: each with a constant number of channels */
  for (c0 = 0; c0 + cb <= c_n; c0 += cb) {
    aot_dwb_chunk(wide, acc, acc_ps, y, y_ps, rows, lo, hi, x, x_rs, x_cs, wq, nrow, npix, c0,
                  cb, kh_n, kw_n, sh, sw, P, dbl, uw);
  }
  if (c0 < c_n) {
    aot_dwb_chunk(wide, acc, acc_ps, y, y_ps, rows, lo, hi, x, x_rs, x_cs, wq, nrow, npix, c0,
                  c_n % cb, kh_n, kw_n, sh, sw, P, dbl, uw);
  }
}
#undef AOT_DWB_BLOCK

/* The sums of nrow output rows (the tensor intrinsic; its epilogue is separate). */
AOT_INLINE int32_t aot_dwblock_s8(int32_t* acc, int32_t acc_ps, const int8_t* x, int32_t x_rs,
                                  int32_t x_cs, const int8_t* w, int32_t nrow, int32_t npix,
                                  int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t sh,
                                  int32_t sw, int32_t P, int32_t cb, int32_t dbl, int32_t uw) {
  aot_dwblock_rows(acc, acc_ps, (int8_t*)0, 0, (const int32_t*)0, 0, 0, x, x_rs, x_cs, w, nrow,
                   npix, c_n, kh_n, kw_n, sh, sw, P, cb, dbl, uw);
  return 0;
}

/* aot_dwblock_s8 followed by aot_requant_row_s8 over its rows, requantized from
   registers (the fused epilogue's rows, aot/kernels/conv2d/fuse.py). */
AOT_INLINE int32_t aot_dwblock_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x, int32_t x_rs,
                                          int32_t x_cs, const int8_t* w, const int32_t* rows,
                                          int32_t nrow, int32_t npix, int32_t c_n,
                                          int32_t kh_n, int32_t kw_n, int32_t sh, int32_t sw,
                                          int32_t P, int32_t cb, int32_t dbl, int32_t uw,
                                          int32_t lo, int32_t hi) {
  aot_dwblock_rows((int32_t*)0, 0, y, y_ps, rows, lo, hi, x, x_rs, x_cs, w, nrow, npix, c_n,
                   kh_n, kw_n, sh, sw, P, cb, dbl, uw);
  return 0;
}

#endif /* AOT_DWBLOCK_H */
