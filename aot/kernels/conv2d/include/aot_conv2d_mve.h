/* Helium (MVE) versions of conv2d's helpers: the im2col patch path and the
   requantizing epilogues (aot_conv2d.h includes it when the core has integer
   MVE; aot/kernels/conv2d/helium.py schedules onto it). */
#ifndef AOT_CONV2D_MVE_H
#define AOT_CONV2D_MVE_H

#include <string.h>

#include "aot_kernel_fixedpoint.h"
#include "aot_kernel_mve.h"

/* Bytes of the int8 im2col buffer of aot_mve_conv_patch_s8 (on the stack). */
#define AOT_MVE_PATCH_BYTES 512

/* aot_conv_s8 for kernel rows shorter than a vector (few channels, e.g. a
   first layer with C = 1) and contiguous columns: each pixel's kh_n kernel
   rows are copied once into one contiguous patch (int8 im2col for a chunk of
   pixels), so every dot product runs over kh_n*kw_n*c_n bytes in full
   vectors instead of kh_n tail-predicated steps. */
AOT_INLINE int32_t aot_mve_conv_patch_s8(int32_t* acc, int32_t acc_ps, const int8_t* x,
                                         int32_t x_rs, const int8_t* w, int32_t npix,
                                         int32_t oc, int32_t kh_n, int32_t kw_n, int32_t c_n,
                                         int32_t sw, int32_t dh) {
  int8_t patch[AOT_MVE_PATCH_BYTES];
  const int32_t row = kw_n * c_n, len = kh_n * row;
  int32_t chunk = AOT_MVE_PATCH_BYTES / len, p0;
  chunk = chunk >= npix ? npix : chunk > 1 ? chunk & ~1 : chunk;
  for (p0 = 0; p0 < npix; p0 += chunk) {
    const int32_t n = npix - p0 < chunk ? npix - p0 : chunk;
    int32_t p, kh;
    for (p = 0; p < n; ++p) {
      for (kh = 0; kh < kh_n; ++kh) {
        memcpy(patch + p * len + kh * row, x + kh * dh * x_rs + (p0 + p) * sw * c_n,
               (size_t)row);
      }
    }
    for (p = 0; p + 2 <= n; p += 2) {
      const int8_t* a = patch + p * len;
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 2 <= oc; o += 2) {
        int32_t s[4] = {0, 0, 0, 0};
        aot_mve_dot2x2_s8(s, a, a + len, w + o * len, w + (o + 1) * len, len);
        out[o] = s[0];
        out[o + 1] = s[1];
        out[acc_ps + o] = s[2];
        out[acc_ps + o + 1] = s[3];
      }
      for (; o < oc; ++o) {
        out[o] = aot_mve_dot1_s8(0, a, w + o * len, len);
        out[acc_ps + o] = aot_mve_dot1_s8(0, a + len, w + o * len, len);
      }
    }
    for (; p < n; ++p) {
      const int8_t* a = patch + p * len;
      int32_t* out = acc + (p0 + p) * acc_ps;
      int32_t o;
      for (o = 0; o + 2 <= oc; o += 2) {
        int32_t s[2] = {0, 0};
        aot_mve_dot1x2_s8(s, a, w + o * len, w + (o + 1) * len, len);
        out[o] = s[0];
        out[o + 1] = s[1];
      }
      for (; o < oc; ++o) {
        out[o] = aot_mve_dot1_s8(0, a, w + o * len, len);
      }
    }
  }
  return 0;
}

/* The requantizing epilogue on Helium, four outputs per step, exactly
   aot_requant + aot_clamp_s8: the 64-bit sum k + x*m - [x < 0]*2^31 is kept
   as two 32-bit halves (VMULH/VMUL give x*m; the carry of adding k_lo and
   the borrow of the sign correction go into the high half), then the high
   half is shifted right by e1 per lane and clamped.  Over npix pixels,
   channels outside, so each group's four table rows and biases are loaded
   (and its shifts negated) once for all the pixels of the row.  Writes the
   first n - n % 4 outputs of each pixel; the caller does the rest. */
AOT_INLINE void aot_mve_requant_rows_s8(int8_t* y, int32_t y_ps, const int32_t* acc,
                                        int32_t acc_ps, const int32_t* bias,
                                        const int32_t* table, int32_t npix, int32_t n,
                                        int32_t lo, int32_t hi) {
  const int32x4_t vlo = vdupq_n_s32(lo > -128 ? lo : -128);
  const int32x4_t vhi = vdupq_n_s32(hi < 127 ? hi : 127);
  int32_t c, p;
  for (c = 0; c + 4 <= n; c += 4) {
    const int32x4x4_t t = vld4q_s32(table + 4 * c); /* m, k_lo, k_hi, e1 */
    const int32x4_t b = vld1q_s32(bias + c), sh = vnegq_s32(t.val[3]);
    for (p = 0; p < npix; ++p) {
      const int32x4_t x = vaddq_s32(vld1q_s32(acc + p * acc_ps + c), b);
      const uint32x4_t plo = vreinterpretq_u32_s32(vmulq_s32(x, t.val[0]));
      const uint32x4_t lo1 = vaddq_u32(plo, vreinterpretq_u32_s32(t.val[1]));
      int32x4_t h = vaddq_s32(vmulhq_s32(x, t.val[0]), t.val[2]);
      /* carry out of the low half: the sum wrapped below its first term */
      h = vaddq_m_n_s32(h, h, 1, vcmphiq_u32(plo, lo1));
      /* subtracting 2^31 (x < 0) borrows when the low half's top bit is 0 */
      h = vsubq_s32(h, vreinterpretq_s32_u32(
          vshrq_n_u32(vbicq_u32(vreinterpretq_u32_s32(x), lo1), 31)));
      h = vshlq_s32(h, sh);
      vstrbq_s32(y + p * y_ps + c, vminq_s32(vmaxq_s32(h, vlo), vhi));
    }
  }
}

/* aot_mbqm(x, m, s) on four lanes, bit-exact: the wrapping left shift
   (VSHL), SRDHM as VQRDMULH ((2*x*m + 2^31) >> 32 saturated, which is
   (x*m + 2^30) >> 31 with the same single saturating case), and the right
   shift rounding half away from zero as VRSHL (rounding half up) of x - 1
   for negative x (saturating, so INT32_MIN stays, where both agree).  s is
   a compile-time constant at every call. */
AOT_INLINE int32x4_t aot_mve_mbqm4(int32x4_t x, int32_t m, int32_t s) {
  if (s > 0) {
    x = vshlq_r_s32(x, s);
  }
  x = vqrdmulhq_n_s32(x, m);
  if (s < 0) {
    x = vqaddq_s32(x, vshrq_n_s32(x, 31));
    x = vrshlq_n_s32(x, s);
  }
  return x;
}

/* aot_requant_add_row_s8 on Helium, four outputs per step over npix
   pixels, channels outside (each group's table rows and biases loaded
   once per row): the convolution's requantized outputs (the steps of
   aot_mve_requant_rows_s8, clamped to [lo1, hi1]) and the residual input
   (VLDRB.S32) each offset, shifted left by ls and rescaled
   (aot_mve_mbqm4), summed, rescaled to the output, offset and clamped to
   [lo, hi], all in vector registers; stored with a narrowing VSTRB.
   Writes the first n - n % 4 outputs of each pixel; the caller does the
   rest. */
AOT_INLINE void aot_mve_requant_add_rows_s8(int8_t* y, int32_t y_ps, const int32_t* acc,
                                            int32_t acc_ps, const int32_t* bias,
                                            const int32_t* table, const int8_t* res,
                                            int32_t res_ps, int32_t npix, int32_t n,
                                            int32_t lo1, int32_t hi1, int32_t c_off,
                                            int32_t c_m, int32_t c_s, int32_t r_off,
                                            int32_t r_m, int32_t r_s, int32_t ls, int32_t o_m,
                                            int32_t o_s, int32_t o_off, int32_t lo, int32_t hi) {
  const int32x4_t vlo1 = vdupq_n_s32(lo1 > -128 ? lo1 : -128);
  const int32x4_t vhi1 = vdupq_n_s32(hi1 < 127 ? hi1 : 127);
  int32_t c, p;
  for (c = 0; c + 4 <= n; c += 4) {
    const int32x4x4_t t = vld4q_s32(table + 4 * c); /* m, k_lo, k_hi, e1 */
    const int32x4_t b = vld1q_s32(bias + c), sh = vnegq_s32(t.val[3]);
    for (p = 0; p < npix; ++p) {
      const int32x4_t x = vaddq_s32(vld1q_s32(acc + p * acc_ps + c), b);
      const uint32x4_t plo = vreinterpretq_u32_s32(vmulq_s32(x, t.val[0]));
      const uint32x4_t lo2 = vaddq_u32(plo, vreinterpretq_u32_s32(t.val[1]));
      int32x4_t h = vaddq_s32(vmulhq_s32(x, t.val[0]), t.val[2]);
      int32x4_t u, v, o;
      h = vaddq_m_n_s32(h, h, 1, vcmphiq_u32(plo, lo2));
      h = vsubq_s32(h, vreinterpretq_s32_u32(
          vshrq_n_u32(vbicq_u32(vreinterpretq_u32_s32(x), lo2), 31)));
      h = vminq_s32(vmaxq_s32(vshlq_s32(h, sh), vlo1), vhi1);
      u = aot_mve_mbqm4(vshlq_r_s32(vaddq_n_s32(h, c_off), ls), c_m, c_s);
      v = aot_mve_mbqm4(vshlq_r_s32(vaddq_n_s32(vldrbq_s32(res + p * res_ps + c), r_off), ls),
                        r_m, r_s);
      o = vaddq_n_s32(aot_mve_mbqm4(vaddq_s32(u, v), o_m, o_s), o_off);
      o = vminq_s32(vmaxq_s32(o, vdupq_n_s32(lo)), vdupq_n_s32(hi));
      vstrbq_s32(y + p * y_ps + c, o);
    }
  }
}

#endif /* AOT_CONV2D_MVE_H */
