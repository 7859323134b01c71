/* SVDF (stateful), int8 with an int16 or int8 state, and float32: the whole
   kernel as one helper, called by a kernel whose loop IR is that call
   (aot/kernels/svdf/__init__.py), so the C and the LLVM paths run this same
   code (the LLVM one as bitcode, aot/codegen/llvm_helpers.py).  The shapes and
   quantization parameters are constants of the call: after inlining, the
   compiler sees the same loops as a kernel written for them.  Arithmetic as
   aot.reference.ops.svdf; sums wrap as int32 (added in uint32_t so that
   wrapping is defined). */
#ifndef AOT_SVDF_H
#define AOT_SVDF_H

#include <math.h>
#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"

/* Element i of a state or time-weight array of 1 or 2 bytes per element. */
AOT_INLINE int32_t aot_svdf_at(const void* p, int32_t bytes, int32_t i) {
  return bytes == 2 ? (int32_t)((const int16_t*)p)[i] : (int32_t)((const int8_t*)p)[i];
}

AOT_INLINE void aot_svdf_put(void* p, int32_t bytes, int32_t i, int32_t v) {
  if (bytes == 2) {
    ((int16_t*)p)[i] = (int16_t)v;
  } else {
    ((int8_t*)p)[i] = (int8_t)v;
  }
}

/* x: batch x depth; state: batch x filters x memory elements of state_bytes
   (1 or 2) bytes, updated in place; wf: filters x depth; wt: filters x memory
   of state_bytes; bias: units = filters / rank values; y: batch x units.
   (m1, s1) requantize a feature dot product into the state, (m2, s2) a unit's
   sum into y.  A new state sample is saturated to [state_min, state_max], then
   offset by the state's zero point and wrapped into the state type (TFLM's
   order; the wrap goes through unsigned arithmetic). */
AOT_INLINE int32_t aot_svdf_s8(const int8_t* restrict x, void* restrict state,
                               int8_t* restrict y, const int8_t* restrict wf,
                               const void* restrict wt, const int32_t* restrict bias,
                               int32_t state_bytes, int32_t batch, int32_t depth,
                               int32_t filters, int32_t memory, int32_t rank,
                               int32_t input_offset, int32_t m1, int32_t s1, int32_t m2,
                               int32_t s2, int32_t output_offset, int32_t state_zero_point,
                               int32_t state_min, int32_t state_max) {
  const int32_t units = filters / rank;
  int32_t i;
  int32_t b;
  /* Every filter's memory moves one sample towards the oldest; the newest
     sample of each filter is written below. */
  for (i = 0; i < batch * filters * memory - 1; ++i) {
    aot_svdf_put(state, state_bytes, i, aot_svdf_at(state, state_bytes, i + 1));
  }
  for (b = 0; b < batch; ++b) {
    int32_t f;
    int32_t u;
    for (f = 0; f < filters; ++f) {
      const int8_t* restrict w = wf + f * depth;
      const int8_t* restrict xb = x + b * depth;
      uint32_t dot = 0u;
      int32_t k;
      int32_t v;
      for (k = 0; k < depth; ++k) {
        dot += (uint32_t)(((int32_t)xb[k] + input_offset) * (int32_t)w[k]);
      }
      v = aot_min_i32(aot_max_i32(aot_mbqm((int32_t)dot, m1, s1), state_min), state_max);
      if (state_zero_point != 0) {
        const uint32_t span_mask = state_bytes == 2 ? 0xFFFFu : 0xFFu;
        v = (int32_t)(((uint32_t)(v + state_zero_point) - (uint32_t)state_min) & span_mask)
            + state_min;
      }
      aot_svdf_put(state, state_bytes, (b * filters + f) * memory + memory - 1, v);
    }
    for (u = 0; u < units; ++u) {
      uint32_t acc = (uint32_t)bias[u];
      int32_t r;
      int32_t v;
      for (r = 0; r < rank; ++r) {
        const int32_t f = u * rank + r;
        const int32_t s0 = (b * filters + f) * memory;
        uint32_t sum = 0u;
        int32_t m;
        for (m = 0; m < memory; ++m) {
          sum += (uint32_t)((aot_svdf_at(state, state_bytes, s0 + m) - state_zero_point)
                            * aot_svdf_at(wt, state_bytes, f * memory + m));
        }
        acc += sum;
      }
      v = aot_mbqm((int32_t)acc, m2, s2) + output_offset;
      y[b * units + u] = (int8_t)aot_min_i32(aot_max_i32(v, -128), 127);
    }
  }
  return 0;
}

/* Float32 SVDF, then the fused activation: 0 none, 1 relu, 2 relu6, 3 relu_n1_to_1. */
AOT_INLINE int32_t aot_svdf_f32(const float* restrict x, float* restrict state,
                                float* restrict y, const float* restrict wf,
                                const float* restrict wt, const float* restrict bias,
                                int32_t batch, int32_t depth, int32_t filters,
                                int32_t memory, int32_t rank, int32_t activation) {
  const int32_t units = filters / rank;
  int32_t i;
  int32_t b;
  for (i = 0; i < batch * filters * memory - 1; ++i) {
    state[i] = state[i + 1];
  }
  for (b = 0; b < batch; ++b) {
    int32_t f;
    int32_t u;
    for (f = 0; f < filters; ++f) {
      const float* restrict w = wf + f * depth;
      const float* restrict xb = x + b * depth;
      float dot = 0.0f;
      int32_t k;
      for (k = 0; k < depth; ++k) {
        dot += xb[k] * w[k];
      }
      state[(b * filters + f) * memory + memory - 1] = dot;
    }
    for (u = 0; u < units; ++u) {
      float acc = bias[u];
      int32_t r;
      for (r = 0; r < rank; ++r) {
        const int32_t f = u * rank + r;
        const float* restrict s = state + (b * filters + f) * memory;
        const float* restrict w = wt + f * memory;
        float sum = 0.0f;
        int32_t m;
        for (m = 0; m < memory; ++m) {
          sum += s[m] * w[m];
        }
        acc += sum;
      }
      if (activation == 1) {
        acc = fmaxf(acc, 0.0f);
      } else if (activation == 2) {
        acc = fminf(fmaxf(acc, 0.0f), 6.0f);
      } else if (activation == 3) {
        acc = fminf(fmaxf(acc, -1.0f), 1.0f);
      }
      y[b * units + u] = acc;
    }
  }
  return 0;
}

#endif /* AOT_SVDF_H */
