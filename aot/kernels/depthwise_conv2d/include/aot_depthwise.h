/* depthwise_conv2d's int8 row helpers (multiplier 1): the row intrinsic
   aot_depthwise_s8 and aot_depthwise_requant_s8, the row's accumulation fused
   with its requantizing epilogue (aot/kernels/conv2d/intrin.py and
   aot/kernels/conv2d/fuse.py schedule onto them), built on aot_kernel_int8.h
   and conv2d's epilogue rows (aot_conv2d.h); Helium versions in
   aot_depthwise_mve.h.  See docs/kernels.md. */
#ifndef AOT_DEPTHWISE_H
#define AOT_DEPTHWISE_H

#include "aot_kernel_int8.h"
#include "aot_conv2d.h"
#if defined(AOT_HAVE_MVE)
#include "aot_depthwise_mve.h"
#endif

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
    /* c < (c_n & ~3), not c + 4 <= c_n: GCC then knows where the tail starts
       (otherwise it warned of the tail loop as invoking undefined behaviour) */
    for (c = 0; c < (c_n & ~3); c += 4) {
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
    /* (a bound GCC sees is a multiple of 4: with c + 4 <= c_n it could
       not tell where the tail starts and warned of the tail loop) */
    for (; c < (c_n & ~3); c += 4) {
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

/* One output of channel c from the fused helper's rows, blocked by four
   channels (aot/kernels/conv2d/fuse.py: each group of four channels holds
   four 2*bias, four m, four kh, four e). */
AOT_INLINE int8_t aot_dw_out_s8(int32_t acc, const int32_t* rows, int32_t c, int32_t lo,
                                int32_t hi) {
  const int32_t* r = rows + 16 * (c >> 2) + (c & 3);
  return (int8_t)aot_clamp_s8(aot_dw_requant(acc, r[0], r[4], r[8], r[12]), lo, hi);
}

#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
/* Both outputs of a channel of aot_dw_pair_requant_s8: the row loaded once,
   before the byte stores (which may alias it, so GCC would reload it). */
#define AOT_DW_OUT2(S, T, J)                                                      \
  do {                                                                            \
    const int32_t b2_ = rows[J], m_ = rows[4 + (J)];                              \
    const int32_t kh_ = rows[8 + (J)], e_ = rows[12 + (J)];                       \
    const int32_t u_ = aot_clamp_s8(aot_dw_requant(S, b2_, m_, kh_, e_), lo, hi); \
    const int32_t v_ = aot_clamp_s8(aot_dw_requant(T, b2_, m_, kh_, e_), lo, hi); \
    yp[J] = (int8_t)u_;                                                           \
    yp[y_ps + (J)] = (int8_t)v_;                                                  \
  } while (0)

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) \
    && !defined(__OPTIMIZE_SIZE__) && !defined(AOT_NO_ASM)
/* The 3x3 taps of a 2 pixel x 4 channel block with a shared column (pixel
   q's tap kw is pixel p's tap kw + 1) in GCC inline assembly, half the
   channels at a time: AOT_HAVE_DW3X3_ASM says it exists.  In C the block's
   eight sums, the four widened halves of a column and a weight word and
   both pointers are fourteen live values, and GCC spilled a sum and both
   pointers in every tap; one half (channels 0 and 2, the SXTB16 of each
   word, or 1 and 3, its ROR #8 form) keeps four sums, and the three weight
   words and four columns of a kernel row fit the seven registers left: 13
   in all, as aot_dot3x2_wide_s8 (a frame pointer leaves 13).  Each word is
   loaded once per half, the seven loads of a row back to back (pipelined),
   then widened, then twelve SMLAxy.  AOT_NO_ASM turns it off; clang and
   size-optimized builds keep the C loop. */
#define AOT_HAVE_DW3X3_ASM 1

/* One kernel row of one half: KH the row's index (immediate arithmetic for
   the assembler), ROR "" or ", ror #8". */
#define AOT_DW3X3_ROW(KH, ROR)                                                    \
  "ldr %[x0], [%[x], #" KH "*%c[R]]\n\t"                                          \
  "ldr %[w0], [%[w], #(" KH "*3+0)*%c[C]]\n\t"                                    \
  "ldr %[x1], [%[x], #" KH "*%c[R]+%c[D]]\n\t"                                    \
  "ldr %[w1], [%[w], #(" KH "*3+1)*%c[C]]\n\t"                                    \
  "ldr %[x2], [%[x], #" KH "*%c[R]+2*%c[D]]\n\t"                                  \
  "ldr %[w2], [%[w], #(" KH "*3+2)*%c[C]]\n\t"                                    \
  "ldr %[x3], [%[x], #" KH "*%c[R]+3*%c[D]]\n\t"                                  \
  "sxtb16 %[x0], %[x0]" ROR "\n\t"                                                \
  "sxtb16 %[w0], %[w0]" ROR "\n\t"                                                \
  "smlabb %[s0], %[x0], %[w0], %[s0]\n\t"                                         \
  "sxtb16 %[x1], %[x1]" ROR "\n\t"                                                \
  "smlatt %[s1], %[x0], %[w0], %[s1]\n\t"                                         \
  "sxtb16 %[w1], %[w1]" ROR "\n\t"                                                \
  "smlabb %[t0], %[x1], %[w0], %[t0]\n\t"                                         \
  "sxtb16 %[x2], %[x2]" ROR "\n\t"                                                \
  "smlatt %[t1], %[x1], %[w0], %[t1]\n\t"                                         \
  "sxtb16 %[w2], %[w2]" ROR "\n\t"                                                \
  "smlabb %[s0], %[x1], %[w1], %[s0]\n\t"                                         \
  "sxtb16 %[x3], %[x3]" ROR "\n\t"                                                \
  "smlatt %[s1], %[x1], %[w1], %[s1]\n\t"                                         \
  "smlabb %[t0], %[x2], %[w1], %[t0]\n\t"                                         \
  "smlatt %[t1], %[x2], %[w1], %[t1]\n\t"                                         \
  "smlabb %[s0], %[x2], %[w2], %[s0]\n\t"                                         \
  "smlatt %[s1], %[x2], %[w2], %[s1]\n\t"                                         \
  "smlabb %[t0], %[x3], %[w2], %[t0]\n\t"                                         \
  "smlatt %[t1], %[x3], %[w2], %[t1]\n\t"

/* AOT_DW3X3_ROW for pixels twice the dilation apart (stride 2, dilation
   1: VWW's stride-2 layers): pixel q's taps are columns 2, 3 and 4, five
   columns in all; the fifth is loaded into x0 once column 0 is used. */
#define AOT_DW3X3_ROW_S2(KH, ROR)                                                 \
  "ldr %[x0], [%[x], #" KH "*%c[R]]\n\t"                                          \
  "ldr %[w0], [%[w], #(" KH "*3+0)*%c[C]]\n\t"                                    \
  "ldr %[x1], [%[x], #" KH "*%c[R]+%c[D]]\n\t"                                    \
  "ldr %[w1], [%[w], #(" KH "*3+1)*%c[C]]\n\t"                                    \
  "ldr %[x2], [%[x], #" KH "*%c[R]+2*%c[D]]\n\t"                                  \
  "ldr %[w2], [%[w], #(" KH "*3+2)*%c[C]]\n\t"                                    \
  "ldr %[x3], [%[x], #" KH "*%c[R]+3*%c[D]]\n\t"                                  \
  "sxtb16 %[x0], %[x0]" ROR "\n\t"                                                \
  "sxtb16 %[w0], %[w0]" ROR "\n\t"                                                \
  "smlabb %[s0], %[x0], %[w0], %[s0]\n\t"                                         \
  "sxtb16 %[x1], %[x1]" ROR "\n\t"                                                \
  "smlatt %[s1], %[x0], %[w0], %[s1]\n\t"                                         \
  "sxtb16 %[w1], %[w1]" ROR "\n\t"                                                \
  "smlabb %[s0], %[x1], %[w1], %[s0]\n\t"                                         \
  "sxtb16 %[x2], %[x2]" ROR "\n\t"                                                \
  "smlatt %[s1], %[x1], %[w1], %[s1]\n\t"                                         \
  "sxtb16 %[w2], %[w2]" ROR "\n\t"                                                \
  "smlabb %[t0], %[x2], %[w0], %[t0]\n\t"                                         \
  "sxtb16 %[x3], %[x3]" ROR "\n\t"                                                \
  "smlatt %[t1], %[x2], %[w0], %[t1]\n\t"                                         \
  "ldr %[x0], [%[x], #" KH "*%c[R]+4*%c[D]]\n\t"                                  \
  "smlabb %[s0], %[x2], %[w2], %[s0]\n\t"                                         \
  "smlatt %[s1], %[x2], %[w2], %[s1]\n\t"                                         \
  "smlabb %[t0], %[x3], %[w1], %[t0]\n\t"                                         \
  "sxtb16 %[x0], %[x0]" ROR "\n\t"                                                \
  "smlatt %[t1], %[x3], %[w1], %[t1]\n\t"                                         \
  "smlabb %[t0], %[x0], %[w2], %[t0]\n\t"                                         \
  "smlatt %[t1], %[x0], %[w2], %[t1]\n\t"

/* s0, s1 (pixel p) and t0, t1 (pixel q) = the sums of channels j and j + 2
   over the 3x3 taps, from x (pixel p's first tap) and w (the channels'
   first weights); the half's SXTB16 form ROR.  R = dh * x_rs, D = dw * x_cs
   (= the pixels' stride; twice it with AOT_DW3X3_ROW_S2) and C = c_n are
   immediates (aot_dw3x3_fits); ROW one of the two row macros. */
#define AOT_DW3X3_HALF(ROW, ROR)                                                  \
  __asm__ volatile(ROW("0", ROR) ROW("1", ROR) ROW("2", ROR)                      \
                   : [s0] "+r"(s0), [s1] "+r"(s1), [t0] "+r"(t0), [t1] "+r"(t1),  \
                     [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2),              \
                     [x3] "=&r"(x3), [w0] "=&r"(w0), [w1] "=&r"(w1),              \
                     [w2] "=&r"(w2)                                               \
                   : [x] "r"(xp), [w] "r"(w), [R] "n"(r_), [D] "n"(d_),           \
                     [C] "n"(c_)                                                  \
                   : "memory")

/* One kernel row of one half for three pixels (p, q, r: sums s, t, u), the
   five columns in a, b, c: each column and weight word loaded and widened
   once, eighteen SMLAxy. */
#define AOT_DW3X3_ROW3(KH, ROR)                                                   \
  "ldr %[a], [%[x], #" KH "*%c[R]]\n\t"                                           \
  "ldr %[k], [%[w], #(" KH "*3+0)*%c[C]]\n\t"                                     \
  "ldr %[b], [%[x], #" KH "*%c[R]+%c[D]]\n\t"                                     \
  "ldr %[c], [%[x], #" KH "*%c[R]+2*%c[D]]\n\t"                                   \
  "sxtb16 %[a], %[a]" ROR "\n\t"                                                  \
  "sxtb16 %[k], %[k]" ROR "\n\t"                                                  \
  "smlabb %[s0], %[a], %[k], %[s0]\n\t"                                           \
  "sxtb16 %[b], %[b]" ROR "\n\t"                                                  \
  "smlatt %[s1], %[a], %[k], %[s1]\n\t"                                           \
  "sxtb16 %[c], %[c]" ROR "\n\t"                                                  \
  "smlabb %[t0], %[b], %[k], %[t0]\n\t"                                           \
  "smlatt %[t1], %[b], %[k], %[t1]\n\t"                                           \
  "smlabb %[u0], %[c], %[k], %[u0]\n\t"                                           \
  "smlatt %[u1], %[c], %[k], %[u1]\n\t"                                           \
  "ldr %[k], [%[w], #(" KH "*3+1)*%c[C]]\n\t"                                     \
  "ldr %[a], [%[x], #" KH "*%c[R]+3*%c[D]]\n\t"                                   \
  "sxtb16 %[k], %[k]" ROR "\n\t"                                                  \
  "smlabb %[s0], %[b], %[k], %[s0]\n\t"                                           \
  "sxtb16 %[a], %[a]" ROR "\n\t"                                                  \
  "smlatt %[s1], %[b], %[k], %[s1]\n\t"                                           \
  "smlabb %[t0], %[c], %[k], %[t0]\n\t"                                           \
  "smlatt %[t1], %[c], %[k], %[t1]\n\t"                                           \
  "smlabb %[u0], %[a], %[k], %[u0]\n\t"                                           \
  "smlatt %[u1], %[a], %[k], %[u1]\n\t"                                           \
  "ldr %[k], [%[w], #(" KH "*3+2)*%c[C]]\n\t"                                     \
  "ldr %[b], [%[x], #" KH "*%c[R]+4*%c[D]]\n\t"                                   \
  "sxtb16 %[k], %[k]" ROR "\n\t"                                                  \
  "smlabb %[s0], %[c], %[k], %[s0]\n\t"                                           \
  "sxtb16 %[b], %[b]" ROR "\n\t"                                                  \
  "smlatt %[s1], %[c], %[k], %[s1]\n\t"                                           \
  "smlabb %[t0], %[a], %[k], %[t0]\n\t"                                           \
  "smlatt %[t1], %[a], %[k], %[t1]\n\t"                                           \
  "smlabb %[u0], %[b], %[k], %[u0]\n\t"                                           \
  "smlatt %[u1], %[b], %[k], %[u1]\n\t"

/* AOT_DW3X3_HALF for three pixels: 6 sums, 4 temporaries, 2 pointers. */
#define AOT_DW3X3_HALF3(ROR)                                                      \
  __asm__ volatile(AOT_DW3X3_ROW3("0", ROR) AOT_DW3X3_ROW3("1", ROR)              \
                   AOT_DW3X3_ROW3("2", ROR)                                       \
                   : [s0] "+r"(s0), [s1] "+r"(s1), [t0] "+r"(t0), [t1] "+r"(t1),  \
                     [u0] "+r"(u0), [u1] "+r"(u1), [a] "=&r"(a), [b] "=&r"(b),    \
                     [c] "=&r"(c), [k] "=&r"(k)                                   \
                   : [x] "r"(xp), [w] "r"(w), [R] "n"(r_), [D] "n"(d_),           \
                     [C] "n"(c_)                                                  \
                   : "memory")

/* The immediates fit LDR's offsets (0..4095 bytes) for `cols` columns
   (4 for two pixels, 5 for three; 8 * c < 4096 with c < 512).  (Written
   with unsigned bounds: with signed ones GCC 12 allocated the 3-pixel loop
   differently and spilled in it, +2% cycles on KWS's depthwise layers.) */
AOT_INLINE int32_t aot_dw3x3_fits(int32_t r, int32_t d, int32_t c, int32_t cols) {
  return (uint32_t)r < 2048u && (uint32_t)d < 1024u && (uint32_t)c < 512u
         && 2 * r + (cols - 1) * d < 4096;
}
#endif

/* aot_depthwise_requant_s8's DSP loop over the channels of two pixels (xq =
   xp + q_cs, yq = yp + y_ps): 2 pixel x 4 channel blocks as in
   aot_depthwise_s8, each block's eight sums requantized from registers
   (aot_dw_requant), the channel's row loaded once for both pixels; when the
   pixels' stride equals the dilation (`shared`), pixel q's tap is pixel p's
   next one, so each input column is loaded and widened once (KWS 342,939 ->
   333,389 estimated M4 cycles per depthwise layer).  Run out of line (the
   two copies below), like aot_requant_pairs_s8 (the shapes reach them by
   GCC's IPA constant propagation): inlined into the row loop, the caller's
   values and the epilogue's left too few registers for the eight sums and
   GCC spilled them in the tap loop (8.2 estimated cycles per MAC on KWS
   against 5.7 for the two calls); an empty asm per tap keeps GCC from
   hoisting the next taps' loads, which spilled too. */
AOT_INLINE void aot_dw_pair_loop(int8_t* yp, int32_t y_ps, const int8_t* xp, int32_t q_cs,
                                 int32_t x_rs, int32_t x_cs, const int8_t* w,
                                 const int32_t* rows, int32_t c_n, int32_t kh_n, int32_t kw_n,
                                 int32_t dh, int32_t dw, int32_t lo, int32_t hi, int32_t shared) {
  const int8_t* const wend = w + (c_n & ~3);
#if defined(AOT_HAVE_DW3X3_ASM)
  const int32_t r_ = dh * x_rs, d_ = dw * x_cs, c_ = c_n;
  /* the shared column, or pixels two columns apart (q_cs == 2 * d_) */
  const int32_t two = !shared && __builtin_constant_p(q_cs) && q_cs == 2 * d_;
  if ((shared || two) && __builtin_constant_p(kh_n) && __builtin_constant_p(kw_n)
      && kh_n == 3 && kw_n == 3 && __builtin_constant_p(r_) && __builtin_constant_p(d_)
      && __builtin_constant_p(c_) && aot_dw3x3_fits(r_, d_, c_, two ? 5 : 4)) {
    while (w != wend) {
      int32_t s0 = 0, s1 = 0, t0 = 0, t1 = 0, x0, x1, x2, x3, w0, w1, w2;
      if (two) {
        AOT_DW3X3_HALF(AOT_DW3X3_ROW_S2, "");
      } else {
        AOT_DW3X3_HALF(AOT_DW3X3_ROW, "");
      }
      AOT_DW_OUT2(s0, t0, 0);
      AOT_DW_OUT2(s1, t1, 2);
      s0 = s1 = t0 = t1 = 0;
      if (two) {
        AOT_DW3X3_HALF(AOT_DW3X3_ROW_S2, ", ror #8");
      } else {
        AOT_DW3X3_HALF(AOT_DW3X3_ROW, ", ror #8");
      }
      AOT_DW_OUT2(s0, t0, 1);
      AOT_DW_OUT2(s1, t1, 3);
      w += 4;
      xp += 4;
      yp += 4;
      rows += 16;
    }
    return;
  }
#endif
  while (w != wend) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0, kh, kw;
    if (shared) {
      /* pixel q's tap kw is pixel p's tap kw + 1: each column widened once */
      AOT_UNROLL("GCC unroll 8")
      for (kh = 0; kh < kh_n; ++kh) {
        const int8_t* xr = xp + kh * dh * x_rs;
        const uint32_t cv = aot_load32(xr);
        int32_t ce = __sxtb16((int32_t)cv), co = aot_sxtb16_ror8(cv);
        AOT_UNROLL("GCC unroll 8")
        for (kw = 0; kw < kw_n; ++kw) {
          const uint32_t wv = aot_load32(w + (kh * kw_n + kw) * c_n);
          const int32_t we = __sxtb16((int32_t)wv), wo = aot_sxtb16_ror8(wv);
          uint32_t nv;
          s0 = __smlabb(ce, we, s0);
          s2 = __smlatt(ce, we, s2);
          s1 = __smlabb(co, wo, s1);
          s3 = __smlatt(co, wo, s3);
          nv = aot_load32(xr + (kw + 1) * dw * x_cs);
          ce = __sxtb16((int32_t)nv);
          co = aot_sxtb16_ror8(nv);
          t0 = __smlabb(ce, we, t0);
          t2 = __smlatt(ce, we, t2);
          t1 = __smlabb(co, wo, t1);
          t3 = __smlatt(co, wo, t3);
          __asm__ volatile("" ::: "memory");
        }
      }
    } else {
      AOT_UNROLL("GCC unroll 8")
      for (kh = 0; kh < kh_n; ++kh) {
        AOT_UNROLL("GCC unroll 8")
        for (kw = 0; kw < kw_n; ++kw) {
          const int32_t off = kh * dh * x_rs + kw * dw * x_cs;
          const uint32_t wv = aot_load32(w + (kh * kw_n + kw) * c_n);
          const int32_t we = __sxtb16((int32_t)wv), wo = aot_sxtb16_ror8(wv);
          const uint32_t xv = aot_load32(xp + off);
          const uint32_t yv = aot_load32(xp + q_cs + off);
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
          __asm__ volatile("" ::: "memory");
        }
      }
    }
    AOT_DW_OUT2(s0, t0, 0);
    AOT_DW_OUT2(s1, t1, 1);
    AOT_DW_OUT2(s2, t2, 2);
    AOT_DW_OUT2(s3, t3, 3);
    w += 4;
    xp += 4;
    yp += 4;
    rows += 16;
  }
}
#undef AOT_DW_OUT2

/* The pair loop, one out-of-line copy per column case (q_cs == dw * x_cs
   or not), so that each copy is specialized on its own: in one copy for
   both, GCC did not specialize it where a kernel file held depthwise layers
   of both strides (VWW's stride-2 layers were 2-4% slower). */
static __attribute__((noinline, unused)) void aot_dw_pair_requant_s8(
    int8_t* yp, int32_t y_ps, const int8_t* xp, int32_t q_cs, int32_t x_rs, int32_t x_cs,
    const int8_t* w, const int32_t* rows, int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t dh,
    int32_t dw, int32_t lo, int32_t hi) {
  aot_dw_pair_loop(yp, y_ps, xp, q_cs, x_rs, x_cs, w, rows, c_n, kh_n, kw_n, dh, dw, lo, hi, 0);
}

static __attribute__((noinline, unused)) void aot_dw_pair_shared_requant_s8(
    int8_t* yp, int32_t y_ps, const int8_t* xp, int32_t x_rs, int32_t x_cs, const int8_t* w,
    const int32_t* rows, int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t dh, int32_t dw,
    int32_t lo, int32_t hi) {
  aot_dw_pair_loop(yp, y_ps, xp, dw * x_cs, x_rs, x_cs, w, rows, c_n, kh_n, kw_n, dh, dw, lo,
                   hi, 1);
}

/* The same for one pixel (an odd last pixel of a row): 1 pixel x 4 channel blocks. */
static __attribute__((noinline, unused)) void aot_dw_one_requant_s8(
    int8_t* yp, const int8_t* xp, int32_t x_rs, int32_t x_cs, const int8_t* w,
    const int32_t* rows, int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t dh, int32_t dw,
    int32_t lo, int32_t hi) {
  const int8_t* const wend = w + (c_n & ~3);
  while (w != wend) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, kh, kw;
    AOT_UNROLL("GCC unroll 8")
    for (kh = 0; kh < kh_n; ++kh) {
      AOT_UNROLL("GCC unroll 8")
      for (kw = 0; kw < kw_n; ++kw) {
        const uint32_t wv = aot_load32(w + (kh * kw_n + kw) * c_n);
        const uint32_t xv = aot_load32(xp + kh * dh * x_rs + kw * dw * x_cs);
        const int32_t xe = __sxtb16((int32_t)xv), we = __sxtb16((int32_t)wv);
        const int32_t xo = aot_sxtb16_ror8(xv), wo = aot_sxtb16_ror8(wv);
        s0 = __smlabb(xe, we, s0);
        s2 = __smlatt(xe, we, s2);
        s1 = __smlabb(xo, wo, s1);
        s3 = __smlatt(xo, wo, s3);
      }
    }
    {
      const int8_t u0 = aot_dw_out_s8(s0, rows, 0, lo, hi);
      const int8_t u1 = aot_dw_out_s8(s1, rows, 1, lo, hi);
      const int8_t u2 = aot_dw_out_s8(s2, rows, 2, lo, hi);
      const int8_t u3 = aot_dw_out_s8(s3, rows, 3, lo, hi);
      yp[0] = u0;
      yp[1] = u1;
      yp[2] = u2;
      yp[3] = u3;
    }
    w += 4;
    xp += 4;
    yp += 4;
    rows += 16;
  }
}

#if defined(AOT_HAVE_DW3X3_ASM)
/* The three outputs of a channel of aot_dw_triple_shared_requant_s8 (as AOT_DW_OUT2). */
#define AOT_DW_OUT3(S, T, U, J)                                                   \
  do {                                                                            \
    const int32_t b2_ = rows[J], m_ = rows[4 + (J)];                              \
    const int32_t kh_ = rows[8 + (J)], e_ = rows[12 + (J)];                       \
    const int32_t o0_ = aot_clamp_s8(aot_dw_requant(S, b2_, m_, kh_, e_), lo, hi); \
    const int32_t o1_ = aot_clamp_s8(aot_dw_requant(T, b2_, m_, kh_, e_), lo, hi); \
    const int32_t o2_ = aot_clamp_s8(aot_dw_requant(U, b2_, m_, kh_, e_), lo, hi); \
    yp[J] = (int8_t)o0_;                                                          \
    yp[y_ps + (J)] = (int8_t)o1_;                                                 \
    yp[2 * y_ps + (J)] = (int8_t)o2_;                                             \
  } while (0)

/* Three pixels of a row with a shared column (the pixels' stride equals
   the dilation), for rows of an odd length (KWS's rows of 5 pixels: 3 + 2
   instead of 2 + 2 + 1): 3 pixel x 4 channel blocks of 3x3 taps in
   assembly, half the channels at a time (AOT_DW3X3_ROW3: 37 estimated M4
   cycles per 18 MACs, against 27 per 12 for the pair and about 11 per 4 for
   the lone pixel's C).  Other shapes, or without the constant immediates,
   take a pair and a lone pixel as before. */
static __attribute__((noinline, unused)) void aot_dw_triple_shared_requant_s8(
    int8_t* yp, int32_t y_ps, const int8_t* xp, int32_t x_rs, int32_t x_cs, const int8_t* w,
    const int32_t* rows, int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t dh, int32_t dw,
    int32_t lo, int32_t hi) {
  const int32_t r_ = dh * x_rs, d_ = dw * x_cs, c_ = c_n;
  if (__builtin_constant_p(kh_n) && __builtin_constant_p(kw_n) && kh_n == 3 && kw_n == 3
      && __builtin_constant_p(r_) && __builtin_constant_p(d_) && __builtin_constant_p(c_)
      && aot_dw3x3_fits(r_, d_, c_, 5)) {
    const int8_t* const wend = w + (c_n & ~3);
    while (w != wend) {
      int32_t s0 = 0, s1 = 0, t0 = 0, t1 = 0, u0 = 0, u1 = 0, a, b, c, k;
      AOT_DW3X3_HALF3("");
      AOT_DW_OUT3(s0, t0, u0, 0);
      AOT_DW_OUT3(s1, t1, u1, 2);
      s0 = s1 = t0 = t1 = u0 = u1 = 0;
      AOT_DW3X3_HALF3(", ror #8");
      AOT_DW_OUT3(s0, t0, u0, 1);
      AOT_DW_OUT3(s1, t1, u1, 3);
      w += 4;
      xp += 4;
      yp += 4;
      rows += 16;
    }
    return;
  }
  aot_dw_pair_shared_requant_s8(yp, y_ps, xp, x_rs, x_cs, w, rows, c_n, kh_n, kw_n, dh, dw, lo,
                                hi);
  aot_dw_one_requant_s8(yp + 2 * y_ps, xp + 2 * d_, x_rs, x_cs, w, rows, c_n, kh_n, kw_n, dh,
                        dw, lo, hi);
}
#undef AOT_DW_OUT3
#endif
#endif

/* aot_depthwise_s8 followed by aot_requant_row_s8 over the same pixels, without the
   row of accumulators in between (aot/kernels/conv2d/fuse.py rewrites the pair
   into this call), reading a row (2*bias, m, kh, e) per channel (blocked by four
   channels, aot_dw_out_s8):
     y[p*y_ps + c] = clamp_s8(aot_dw_requant(sum_{kh,kw} x[...] * w[...], row of c), lo, hi)
   With the DSP extension two pixels at a time (aot_dw_pair_shared_requant_s8
   or aot_dw_pair_requant_s8, an odd last pixel aot_dw_one_requant_s8; with
   the 3x3 assembly taps an odd row of shared columns starts with three,
   aot_dw_triple_shared_requant_s8);
   Helium: aot_mve_depthwise_requant_s8; elsewhere, and for the last c_n % 4
   channels, plain loops. */
AOT_INLINE int32_t aot_depthwise_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x, int32_t x_rs,
                                            int32_t x_cs, const int8_t* w, const int32_t* rows,
                                            int32_t npix, int32_t c_n, int32_t kh_n,
                                            int32_t kw_n, int32_t sw, int32_t dh, int32_t dw,
                                            int32_t lo, int32_t hi) {
  int32_t c0 = 0, q;
#if defined(AOT_HAVE_MVE)
  return aot_mve_depthwise_requant_s8(y, y_ps, x, x_rs, x_cs, w, rows, npix, c_n, kh_n, kw_n,
                                      sw, dh, dw, lo, hi);
#endif
#if defined(AOT_HAVE_DSP) && !defined(AOT_HAVE_MVE)
  c0 = c_n & ~3;
  if (c0 > 0) {
    int32_t p = 0;
#if defined(AOT_HAVE_DW3X3_ASM)
    if (sw == dw && (npix & 1) && npix >= 3) { /* an odd row: three pixels first */
      aot_dw_triple_shared_requant_s8(y, y_ps, x, x_rs, x_cs, w, rows, c_n, kh_n, kw_n, dh, dw,
                                      lo, hi);
      p = 3;
    }
#endif
    for (; p + 2 <= npix; p += 2) {
      if (sw == dw) { /* pixel q's tap kw is pixel p's tap kw + 1 */
        aot_dw_pair_shared_requant_s8(y + p * y_ps, y_ps, x + p * sw * x_cs, x_rs, x_cs, w,
                                      rows, c_n, kh_n, kw_n, dh, dw, lo, hi);
      } else {
        aot_dw_pair_requant_s8(y + p * y_ps, y_ps, x + p * sw * x_cs, sw * x_cs, x_rs, x_cs,
                               w, rows, c_n, kh_n, kw_n, dh, dw, lo, hi);
      }
    }
    if (p < npix) { /* the odd last pixel */
      aot_dw_one_requant_s8(y + p * y_ps, x + p * sw * x_cs, x_rs, x_cs, w, rows, c_n, kh_n,
                            kw_n, dh, dw, lo, hi);
    }
  }
#endif
  for (q = 0; q < npix; ++q) {
    const int8_t* xp = x + q * sw * x_cs;
    int8_t* yp = y + q * y_ps;
    int32_t c;
    for (c = c0; c < c_n; ++c) { /* the DSP loops wrote the first c0 channels */
      uint32_t s0 = 0;
      int32_t kh, kw;
      for (kh = 0; kh < kh_n; ++kh) {
        for (kw = 0; kw < kw_n; ++kw) {
          s0 += (uint32_t)((int32_t)xp[kh * dh * x_rs + kw * dw * x_cs + c]
                           * (int32_t)w[(kh * kw_n + kw) * c_n + c]);
        }
      }
      yp[c] = aot_dw_out_s8((int32_t)s0, rows, c, lo, hi);
    }
  }
  return 0;
}

#endif /* AOT_DEPTHWISE_H */
