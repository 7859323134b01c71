/* Helium (MVE) versions of depthwise_conv2d's row helpers (aot_depthwise.h
   includes it when the core has integer MVE): eight channels x two pixels
   per step of the accumulation, and the fused row requantized in vector
   registers. */
#ifndef AOT_DEPTHWISE_MVE_H
#define AOT_DEPTHWISE_MVE_H

#include "aot_kernel_fixedpoint.h"
#include "aot_kernel_mve.h"

/* One step of the depthwise helper: the accumulators of channels [c, c+8)
   (two int32 vectors) of pixels xp and, when `two`, xq, over all taps.  MVE
   has no lane-wise integer multiply-accumulate, so each tap is a VMUL and a
   VADD per four channels; the weights (VLDRB.S32: four int8 widened to int32
   lanes) are loaded once for both pixels. */
AOT_INLINE void aot_mve_dw8(int32_t* out, int32_t out_q, const int8_t* xp, const int8_t* xq,
                            int32_t two, int32_t x_rs, int32_t x_cs, const int8_t* w,
                            int32_t c_n, int32_t kh_n, int32_t kw_n, int32_t dh, int32_t dw) {
  int32x4_t s0 = vdupq_n_s32(0), s1 = s0, t0 = s0, t1 = s0;
  int32_t kh, kw;
  AOT_UNROLL("GCC unroll 8")
  for (kh = 0; kh < kh_n; ++kh) {
    AOT_UNROLL("GCC unroll 8")
    for (kw = 0; kw < kw_n; ++kw) {
      const int32_t off = kh * dh * x_rs + kw * dw * x_cs;
      const int8_t* wk = w + (kh * kw_n + kw) * c_n;
      const int32x4_t w0 = vldrbq_s32(wk), w1 = vldrbq_s32(wk + 4);
      s0 = vaddq_s32(s0, vmulq_s32(vldrbq_s32(xp + off), w0));
      s1 = vaddq_s32(s1, vmulq_s32(vldrbq_s32(xp + off + 4), w1));
      if (two) {
        t0 = vaddq_s32(t0, vmulq_s32(vldrbq_s32(xq + off), w0));
        t1 = vaddq_s32(t1, vmulq_s32(vldrbq_s32(xq + off + 4), w1));
      }
    }
  }
  vst1q_s32(out, s0);
  vst1q_s32(out + 4, s1);
  if (two) {
    vst1q_s32(out + out_q, t0);
    vst1q_s32(out + out_q + 4, t1);
  }
}

/* The last c_n % 8 channels (up to two vectors of four, the last one under a
   tail predicate: lanes past c_n are neither loaded nor stored). */
AOT_INLINE void aot_mve_dw_tail(int32_t* out, const int8_t* xp, int32_t left, int32_t x_rs,
                                int32_t x_cs, const int8_t* w, int32_t c_n, int32_t kh_n,
                                int32_t kw_n, int32_t dh, int32_t dw) {
  int32_t c;
  for (c = 0; c < left; c += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(left - c));
    int32x4_t s = vdupq_n_s32(0);
    int32_t kh, kw;
    for (kh = 0; kh < kh_n; ++kh) {
      for (kw = 0; kw < kw_n; ++kw) {
        const int32_t off = kh * dh * x_rs + kw * dw * x_cs + c;
        s = vaddq_s32(s, vmulq_s32(vldrbq_z_s32(xp + off, p),
                                   vldrbq_z_s32(w + (kh * kw_n + kw) * c_n + c, p)));
      }
    }
    vstrwq_p_s32(out + c, s, p);
  }
}

/* aot_depthwise_s8 (multiplier 1) on Helium: eight channels x two pixels per
   step, so each tap costs 2 + 4 loads, 4 VMUL and 4 VADD for 16 products. */
AOT_INLINE int32_t aot_mve_depthwise_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                        int32_t x_rs, int32_t x_cs, const int8_t* w,
                                        int32_t npix, int32_t c_n, int32_t kh_n, int32_t kw_n,
                                        int32_t sw, int32_t dh, int32_t dw) {
  int32_t p;
  for (p = 0; p < npix; p += 2) {
    const int32_t two = p + 1 < npix;
    const int8_t* xp = x + p * sw * x_cs;
    const int8_t* xq = two ? xp + sw * x_cs : xp;  /* never past the input */
    int32_t* out = acc + p * acc_ps;
    int32_t c;
    for (c = 0; c + 8 <= c_n; c += 8) {
      aot_mve_dw8(out + c, acc_ps, xp + c, xq + c, two, x_rs, x_cs, w + c, c_n, kh_n, kw_n, dh,
                  dw);
    }
    if (c < c_n) {
      aot_mve_dw_tail(out + c, xp + c, c_n - c, x_rs, x_cs, w + c, c_n, kh_n, kw_n, dh, dw);
      if (two) {
        aot_mve_dw_tail(out + acc_ps + c, xq + c, c_n - c, x_rs, x_cs, w + c, c_n, kh_n, kw_n,
                        dh, dw);
      }
    }
  }
  return 0;
}

/* aot_dw_requant on the four channels of a group of the fused helper's
   blocked rows (r: four 2*bias, four m, four kh, four e, each field one
   vector load when it is needed, so few Q registers stay live); VRMULH is
   SMMLAR without the accumulator, so kh is added after it (exact: the rows
   keep the sum within int32).  Clamped to [lo, hi] within the int8 range. */
AOT_INLINE int32x4_t aot_mve_dw_requant4(int32x4_t acc, const int32_t* r, int32_t lo,
                                         int32_t hi) {
  const int32x4_t x2 = vaddq_s32(vaddq_s32(acc, acc), vld1q_s32(r));
  int32x4_t q = vaddq_s32(vrmulhq_s32(x2, vld1q_s32(r + 4)), vld1q_s32(r + 8));
  q = vaddq_s32(q, vshrq_n_s32(x2, 31));
  q = vshlq_s32(q, vnegq_s32(vld1q_s32(r + 12)));
  q = vmaxq_s32(q, vdupq_n_s32(lo > -128 ? lo : -128));
  return vminq_s32(q, vdupq_n_s32(hi < 127 ? hi : 127));
}

/* aot_depthwise_requant_s8 on Helium: four channels x two pixels per step
   on int32 lanes (each tap a weight load shared by both pixels, two VMUL
   and two VADD; when the pixels' stride equals the dilation, pixel q's tap
   is pixel p's next one, so each input column of a kernel row is loaded
   once for both), requantized in vector registers (aot_mve_dw_requant4) and
   stored with narrowing VSTRB; no accumulator row in memory.  The shared
   columns' loads walk pointers (post-increment VLDRB where the step fits its
   immediate): with the addresses written as offsets GCC added each one
   before its load and reloaded the weights' base from the literal pool
   (376,716 estimated M55 cycles per KWS depthwise layer against 267,489;
   walking pointers gained nothing on the stride-2 layers).  An empty asm per
   tap that takes the sums and pointers keeps GCC from computing every tap's
   product first and adding them as a tree (eight Q registers: it spilled
   them).  The last c_n % 4 channels: aot_mve_dw_tail and the scalar
   aot_dw_requant. */
AOT_INLINE int32_t aot_mve_depthwise_requant_s8(int8_t* y, int32_t y_ps, const int8_t* x,
                                                int32_t x_rs, int32_t x_cs, const int8_t* w,
                                                const int32_t* rows, int32_t npix, int32_t c_n,
                                                int32_t kh_n, int32_t kw_n, int32_t sw,
                                                int32_t dh, int32_t dw, int32_t lo, int32_t hi) {
  int32_t p;
  for (p = 0; p < npix; p += 2) {
    const int32_t two = p + 1 < npix;
    const int8_t* xp = x + p * sw * x_cs;
    const int8_t* xq = two ? xp + sw * x_cs : xp;  /* never past the input */
    int8_t* yp = y + p * y_ps;
    int32_t c;
    for (c = 0; c + 4 <= c_n; c += 4) {
      int32x4_t s = vdupq_n_s32(0), t = s;
      int32_t kh, kw;
      if (two && sw == dw) {
        /* pixel q's tap kw is pixel p's tap kw + 1: each column loaded once */
        const int8_t* wk = w + c;
        AOT_UNROLL("GCC unroll 8")
        for (kh = 0; kh < kh_n; ++kh) {
          const int8_t* xr = xp + kh * dh * x_rs + c;
          int32x4_t col = vldrbq_s32(xr);
          AOT_UNROLL("GCC unroll 8")
          for (kw = 0; kw < kw_n; ++kw) {
            const int32x4_t wv = vldrbq_s32(wk);
            int32x4_t next;
            xr += dw * x_cs;
            next = vldrbq_s32(xr);
            wk += c_n;
            s = vaddq_s32(s, vmulq_s32(col, wv));
            t = vaddq_s32(t, vmulq_s32(next, wv));
            col = next;
            __asm__ volatile("" : "+w"(s), "+w"(t), "+w"(col), "+r"(xr), "+r"(wk));
          }
        }
      } else if (two) {
        AOT_UNROLL("GCC unroll 8")
        for (kh = 0; kh < kh_n; ++kh) {
          AOT_UNROLL("GCC unroll 8")
          for (kw = 0; kw < kw_n; ++kw) {
            const int32_t off = kh * dh * x_rs + kw * dw * x_cs + c;
            const int32x4_t wk = vldrbq_s32(w + (kh * kw_n + kw) * c_n + c);
            s = vaddq_s32(s, vmulq_s32(vldrbq_s32(xp + off), wk));
            t = vaddq_s32(t, vmulq_s32(vldrbq_s32(xq + off), wk));
            __asm__ volatile("" : "+w"(s), "+w"(t));
          }
        }
      } else { /* an odd last pixel: its sums only */
        const int8_t* wk = w + c;
        AOT_UNROLL("GCC unroll 8")
        for (kh = 0; kh < kh_n; ++kh) {
          const int8_t* xr = xp + kh * dh * x_rs + c;
          AOT_UNROLL("GCC unroll 8")
          for (kw = 0; kw < kw_n; ++kw) {
            const int32x4_t wv = vldrbq_s32(wk);
            const int32x4_t xv = vldrbq_s32(xr);
            wk += c_n;
            xr += dw * x_cs;
            s = vaddq_s32(s, vmulq_s32(xv, wv));
            __asm__ volatile("" : "+w"(s), "+r"(xr), "+r"(wk));
          }
        }
      }
      vstrbq_s32(yp + c, aot_mve_dw_requant4(s, rows + 4 * c, lo, hi));
      if (two) {
        vstrbq_s32(yp + y_ps + c, aot_mve_dw_requant4(t, rows + 4 * c, lo, hi));
      }
    }
    if (c < c_n) {
      int32_t sums[4], j, q;
      for (q = 0; q <= two; ++q) {
        aot_mve_dw_tail(sums, (q ? xq : xp) + c, c_n - c, x_rs, x_cs, w + c, c_n, kh_n, kw_n,
                        dh, dw);
        for (j = 0; j < c_n - c; ++j) {
          const int32_t* r = rows + 4 * c + j;  /* c is a multiple of 4 */
          yp[q * y_ps + c + j] = (int8_t)aot_clamp_s8(
              aot_dw_requant(sums[j], r[0], r[4], r[8], r[12]), lo, hi);
        }
      }
    }
  }
  return 0;
}

#endif /* AOT_DEPTHWISE_MVE_H */
