/* TFLite Micro's fixed-point arithmetic (gemmlowp rounding) for the
   requantizing epilogues and softmax of the generated kernels.  It
   reproduces aot/reference/ops/quant.py and fixedpoint.py exactly, written
   so that no step is undefined behaviour in C99: left shifts of negative
   values go through uint32_t/uint64_t, and the one overflowing product
   (INT32_MIN * INT32_MIN) is handled before it happens.  Right shifts of
   negative values rely on arithmetic shifting, which every supported
   compiler (gcc, clang, arm-none-eabi-gcc) does.  The functions are static
   inline, so each kernel file gets its own copy and no .c file is needed. */
#ifndef AOT_KERNEL_FIXEDPOINT_H
#define AOT_KERNEL_FIXEDPOINT_H

#include "aot_kernel_target.h"

/* TFLM's SaturatingRoundingDoublingHighMul: (a*b + nudge) / 2^31 truncated,
   nudge = +-2^30 by the sign of a*b.  For both signs that equals
   floor((a*b + 2^30) / 2^31), one 64-bit multiply-add and a shift (SMLAL
   on Cortex-M); INT32_MIN * INT32_MIN saturates. */
static inline int32_t aot_srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) {
    return INT32_MAX;
  }
  return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* x / 2^exponent rounded to nearest, ties away from zero (0 <= exponent <= 31). */
static inline int32_t aot_rdbpot(int32_t x, int32_t exponent) {
  const int32_t mask = (int32_t)((1u << exponent) - 1u);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * 2^left (wrapping to int32, as the C++ reference's shift does). */
static inline int32_t aot_shl32(int32_t x, int32_t left) {
  return (int32_t)((uint32_t)x << left);
}

/* MultiplyByQuantizedMultiplier for int32 accumulators: real scale
   multiplier * 2^(shift - 31), two roundings (gemmlowp). */
static inline int32_t aot_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  return aot_rdbpot(aot_srdhm(aot_shl32(x, left), multiplier), right);
}

/* MultiplyByQuantizedMultiplier for int64 accumulators (int16x8): the Q31
   multiplier reduced to Q15, one rounding. */
static inline int64_t aot_mbqm64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000
      ? (((int64_t)multiplier + (1 << 15)) >> 16) : 0x7FFF;
  const int32_t total_shift = 15 - shift;
  const int64_t round = (int64_t)1 << (total_shift - 1);
  return (x * reduced + round) >> total_shift;
}

/* aot_mbqm(x, m, -(e1 + 1)) in one rounding, for m in (2^30, 2^31) and a
   right shift e1 + 1 >= 1, with k = k_hi * 2^32 + k_lo = 2^30 + 2^(31 + e1)
   (plus the output offset times 2^(32 + e1) when folded; see
   aot.kernels.conv2d.compute.fast_requant_tables for the derivation): one SMLAL,
   the sign correction and a shift of the high word. */
static inline int32_t aot_requant(int32_t x, int32_t m, int32_t k_lo, int32_t k_hi, int32_t e1) {
#if defined(AOT_DSP_ASM)
  /* two SMLALs: x*m, then [x < 0] * INT32_MIN (GCC's own sequence for the
     sign correction takes six instructions) */
  uint32_t lo = (uint32_t)k_lo;
  int32_t hi = k_hi;
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(x), "r"(m));
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"((uint32_t)x >> 31), "r"(INT32_MIN));
  return hi >> e1;
#else
  const int64_t k = (int64_t)(((uint64_t)(uint32_t)k_hi << 32) | (uint32_t)k_lo);
  const int64_t q = (int64_t)x * m + k
      + (int64_t)(int32_t)((uint32_t)x >> 31) * (int64_t)INT32_MIN;
  return (int32_t)(q >> 32) >> e1;
#endif
}

/* aot_requant(acc + bias, m, k_lo, k_hi, e - 1) for the fused depthwise helper
   and the int8 add's rescales, from the channel's row (b2, m, kh, e) = (2*bias, ...)
   (aot/kernels/conv2d/fuse.py derives the identity and builds the rows only
   where |acc + bias| < 2^30 and the values stay within int32):
   with x2 = 2*(acc + bias), (floor((kh*2^32 + x2*m + 2^31) / 2^32) - [x2 < 0]) >> e.
   With the DSP extension: ADD (x2 with LSL #1), SMMLAR, ADD with ASR #31, ASR. */
static inline int32_t aot_dw_requant(int32_t acc, int32_t b2, int32_t m, int32_t kh, int32_t e) {
  const int32_t x2 = (int32_t)((uint32_t)acc * 2u + (uint32_t)b2);
  int32_t q;
#if defined(AOT_DSP_ASM)
  __asm__("smmlar %0, %1, %2, %3" : "=r"(q) : "r"(x2), "r"(m), "r"(kh));
#else
  q = (int32_t)(((int64_t)kh * 4294967296LL + (int64_t)x2 * m + 2147483648LL) >> 32);
#endif
  return (q + (x2 >> 31)) >> e;
}

/* v clamped to [lo, hi] within the int8 range (SSAT with the DSP extension). */
static inline int32_t aot_clamp_s8(int32_t v, int32_t lo, int32_t hi) {
#if defined(AOT_HAVE_DSP)
  v = __ssat(v, 8);
  if (lo > -128) {
    v = v > lo ? v : lo;
  }
  if (hi < 127) {
    v = v < hi ? v : hi;
  }
  return v;
#else
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
#endif
}

/* gemmlowp SaturatingRoundingMultiplyByPOT with a run-time exponent. */
static inline int32_t aot_srmbpot(int32_t x, int32_t exponent) {
  int32_t threshold;
  if (exponent == 0) {
    return x;
  }
  if (exponent < 0) {
    return aot_rdbpot(x, -exponent);
  }
  threshold = (int32_t)(((int64_t)1 << (31 - exponent)) - 1);
  if (x > threshold) {
    return INT32_MAX;
  }
  if (x < -threshold) {
    return INT32_MIN;
  }
  return aot_shl32(x, exponent);
}

static inline int32_t aot_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t aot_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

/* exp(a) for a in [-1/4, 0) in Q0.31. */
static inline int32_t aot_exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668;
  const int32_t one_third = 715827883;
  const int32_t x = (int32_t)((uint32_t)a + (1u << 28));
  const int32_t x2 = aot_srdhm(x, x);
  const int32_t x3 = aot_srdhm(x2, x);
  const int32_t x4 = aot_srdhm(x2, x2);
  const int32_t x4_over_4 = aot_rdbpot(x4, 2);
  const int32_t poly = aot_rdbpot(
      (int32_t)((uint32_t)aot_srdhm((int32_t)((uint32_t)x4_over_4 + (uint32_t)x3), one_third)
                + (uint32_t)x2), 1);
  return (int32_t)((uint32_t)constant_term
                   + (uint32_t)aot_srdhm(constant_term, (int32_t)((uint32_t)x + (uint32_t)poly)));
}

/* exp(a) for a <= 0 with `integer_bits` integer bits; result Q0.31. */
static inline int32_t aot_exp_on_negative_values(int32_t a, int32_t integer_bits) {
  static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                    39332535, 720401, 242};
  const int32_t frac = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (frac - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod = (a & mask) - one_quarter;
  const int32_t remainder = (int32_t)((uint32_t)a_mod - (uint32_t)a);
  int32_t result = aot_exp_quarter(aot_srmbpot(a_mod, integer_bits));
  int32_t k;
  for (k = -2; k <= 4; ++k) {
    if (integer_bits > k && frac + k >= 0 && frac + k < 31) {
      if (remainder & ((int32_t)1 << (frac + k))) {
        result = aot_srdhm(result, barrel[k + 2]);
      }
    }
  }
  if (integer_bits > 5) {
    if (a < -((int32_t)1 << (36 - integer_bits))) {
      result = 0;
    }
  }
  return a == 0 ? INT32_MAX : result;
}

/* (a + b) / 2 rounded away from zero, in int64. */
static inline int32_t aot_rounding_half_sum(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a + (int64_t)b;
  const int64_t t = s + (s >= 0 ? 1 : -1);
  return (int32_t)(t / 2);
}

/* 1 / (1 + a) for Q0.31 a in [0, 1): Newton-Raphson, result Q0.31. */
static inline int32_t aot_one_over_one_plus_x(int32_t a) {
  const int32_t half_denominator = aot_rounding_half_sum(a, INT32_MAX);
  int32_t x = (int32_t)(1515870810u + (uint32_t)aot_srdhm(half_denominator, -1010580540));
  int i;
  for (i = 0; i < 3; ++i) {
    const int32_t hdx = aot_srdhm(half_denominator, x);
    const int32_t one_minus = (int32_t)((uint32_t)((int32_t)1 << 29) - (uint32_t)hdx);
    x = (int32_t)((uint32_t)x + (uint32_t)aot_srmbpot(aot_srdhm(x, one_minus), 2));
  }
  return aot_srmbpot(x, 1);
}

static inline int32_t aot_clz32(uint32_t x) {
  int32_t n = 0;
  if (x == 0) {
    return 32;
  }
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}

/* RoundingDivideByPOT for exponents up to 62 (the int8 softmax's last shift can pass 31). */
static inline int32_t aot_rdbpot_wide(int32_t x, int32_t exponent) {
  const int64_t mask = ((int64_t)1 << exponent) - 1;
  const int64_t remainder = (int64_t)x & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> exponent) + (remainder > threshold ? 1 : 0));
}

/* GetReciprocal's two results for x > 0 with `integer_digits` integer bits:
   1/x as Q0.31 (aot_reciprocal) and the number of bits over one (aot_reciprocal_bits). */
static inline int32_t aot_reciprocal(int32_t x, int32_t integer_digits) {
  const int32_t headroom_plus_one = aot_clz32((uint32_t)x);
  (void)integer_digits;
  if (headroom_plus_one >= 32) {
    return INT32_MAX;
  }
  return aot_one_over_one_plus_x(
      (int32_t)(((uint32_t)x << headroom_plus_one) - 0x80000000u));
}

static inline int32_t aot_reciprocal_bits(int32_t x, int32_t integer_digits) {
  return integer_digits - aot_clz32((uint32_t)x);
}

static inline int32_t aot_sat32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

/* int32 arithmetic that wraps (through uint32), as TFLM's int32 ADD, SUB
   and MUL do in practice; signed overflow is undefined in C. */
static inline int32_t aot_add32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t aot_sub32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}

static inline int32_t aot_mul32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* log(x) for fixed-point x >= 1 with `input_bits` integer bits, as a raw
   value with `output_bits` (TFLite's log_x_for_x_greater_than_or_equal_to_1):
   x = 2^z r two ways (from x and from x / sqrt 2), the smaller mantissa kept,
   log r by a rational approximation around sqrt(sqrt(1/2)), z log 2 + log r
   accumulated with output_bits + 1 integer bits.  Same steps as
   aot.quant.fixedpoint.log_x_for_x_greater_than_or_equal_to_1. */
static inline int32_t aot_log_x_ge_1(int32_t x, int32_t input_bits, int32_t output_bits) {
  const int32_t acc_bits = output_bits + 1;
  const int32_t sqrt_sqrt_half = 1805811301;
  const int32_t quarter = aot_srmbpot(536870912, -acc_bits);
  const int32_t za_head = aot_clz32((uint32_t)x);
  const int32_t r_a = aot_srmbpot(aot_srdhm(aot_srmbpot(x, za_head - 1), 1518500250), 1);
  const int32_t za_adj = aot_sat32(
      (int64_t)aot_srmbpot(input_bits - za_head, 31 - acc_bits) + quarter);
  const int32_t z_b = aot_srdhm(x, 1518500250);
  const int32_t zb_head = aot_clz32((uint32_t)z_b) - 1;
  const int32_t r_b = aot_srmbpot(x, zb_head);
  const int32_t zb_adj = aot_sat32(
      (int64_t)aot_srmbpot(input_bits - zb_head, 31 - acc_bits) - quarter);
  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t z_adj = za_adj > zb_adj ? za_adj : zb_adj;
  const int32_t p = aot_rounding_half_sum(r, sqrt_sqrt_half);
  int32_t q = aot_add32(r, -sqrt_sqrt_half);
  int32_t sq;
  int32_t num;
  int32_t denom;
  q = aot_add32(q, q);
  sq = aot_srdhm(q, q);
  num = aot_add32(aot_srdhm(q, r), aot_srdhm(aot_srdhm(q, sq), 117049297));
  denom = aot_add32(
      aot_srdhm(p, aot_add32(aot_add32(1057819769, q), aot_srdhm(127690142, sq))),
      aot_srdhm(638450708, q));
  return aot_srmbpot(
      aot_add32(aot_srdhm(z_adj, 1488522236),
                aot_srdhm(aot_srmbpot(num, -acc_bits), aot_one_over_one_plus_x(denom))),
      acc_bits - output_bits);
}

/* GetInvSqrtQuantizedMultiplierExp with reverse shift -1: 1/sqrt(acc) as a
   multiplier (*mult) and a shift (*shift, <= 0) for acc >= 0.  acc is scaled
   by powers of four into [2^26, 2^29), then five Newton steps
   x <- 3/2 x - acc/2 x^3 in Q3.28 from x = 1, times 1/sqrt(2); a negative
   shift is folded into the multiplier.  0 and 1 give (INT32_MAX, 0). */
static inline void aot_inv_sqrt_q(int32_t acc, int32_t *mult, int32_t *shift) {
  int32_t s = 11;
  int32_t pairs;
  int32_t half_input;
  int32_t x = (int32_t)1 << 28;
  int32_t i;
  if (acc <= 1) {
    *mult = INT32_MAX;
    *shift = 0;
    return;
  }
  while (acc >= ((int32_t)1 << 29)) {
    acc /= 4;
    ++s;
  }
  pairs = (aot_clz32((uint32_t)acc) - 1) / 2 - 1;
  s -= pairs;
  acc = aot_shl32(acc, 2 * pairs);
  half_input = aot_rdbpot(acc >> 1, 1);
  for (i = 0; i < 5; ++i) {
    const int32_t x3 = aot_srmbpot(aot_srdhm(aot_srdhm(x, x), x), 6);
    const int32_t d = (int32_t)((uint32_t)aot_srdhm(((int32_t)1 << 28) + ((int32_t)1 << 27), x)
                                - (uint32_t)aot_srdhm(half_input, x3));
    x = aot_srmbpot(d, 3);
  }
  x = aot_srdhm(x, 1518500250);
  if (s < 0) {
    x = aot_shl32(x, -s);
    s = 0;
  }
  *mult = x;
  *shift = -s;
}

/* Both results of aot_inv_sqrt_q in one value (one stage of a kernel):
   the multiplier in the low 32 bits, the shift in the high ones. */
static inline int64_t aot_inv_sqrt_packed(int32_t acc) {
  int32_t mult;
  int32_t shift;
  aot_inv_sqrt_q(acc, &mult, &shift);
  return (int64_t)(((uint64_t)(uint32_t)shift << 32) | (uint32_t)mult);
}

static inline int32_t aot_lo32(int64_t v) { return (int32_t)(uint32_t)((uint64_t)v); }
static inline int32_t aot_hi32(int64_t v) { return (int32_t)(uint32_t)((uint64_t)v >> 32); }

/* aot_reciprocal in the low 32 bits and aot_reciprocal_bits in the high ones
   (one stage of a kernel: the int8 softmax computes them once per row). */
static inline int64_t aot_reciprocal_packed(int32_t x, int32_t integer_digits) {
  const int32_t recip = aot_reciprocal(x, integer_digits);
  const int32_t bits = aot_reciprocal_bits(x, integer_digits);
  return (int64_t)(((uint64_t)(uint32_t)bits << 32) | (uint32_t)recip);
}

#endif /* AOT_KERNEL_FIXEDPOINT_H */
