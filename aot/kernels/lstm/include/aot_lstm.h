/* UNIDIRECTIONAL_SEQUENCE_LSTM, int8 and 16x8 (int16 data and hidden state,
   int8 weights, int64 biases): the whole kernel as one helper, called by a
   kernel whose loop IR is that call (aot/kernels/lstm/__init__.py), so the C
   and the LLVM paths run this same code (the LLVM one as bitcode,
   aot/codegen/llvm_helpers.py); the shapes and parameters are constants of the
   call.  Gates in the order input, forget, cell, output; TFLM's integer
   arithmetic (aot.reference.ops.lstm). */
#ifndef AOT_LSTM_H
#define AOT_LSTM_H

#include "aot_kernel_target.h"
#include "aot_kernel_fixedpoint.h"

/* TFLM's int16 logistic on an already rescaled input; Q0.15 result. */
AOT_INLINE int32_t aot_lstm_sigmoid(const int32_t* table, int32_t v) {
  const int32_t a = v < 0 ? -v : v;
  const int32_t uh = a >> 9;
  const int32_t idx = uh < 254 ? uh : 254;
  const int32_t ua = table[idx];
  const int32_t ub = table[idx + 1];
  int32_t res = uh >= 255 ? (0x7FFF << 10) : (ua << 9) + (a & 0x1FF) * (ub - ua);
  res = v >= 0 ? res + (1 << 9) : (1 << 25) - res + (1 << 9) - 1;
  return res >> 10;
}

/* TFLM's int16 tanh on an already rescaled input; Q0.15 result. */
AOT_INLINE int32_t aot_lstm_tanh(const int32_t* table, int32_t v) {
  const int32_t a = v < 0 ? -v : v;
  const int32_t uh = a >> 8;
  const int32_t idx = uh < 254 ? uh : 254;
  const int32_t ua = table[idx];
  const int32_t ub = table[idx + 1];
  int32_t res = uh >= 255 ? (0xFFFF << 8) : (ua << 8) + (a & 0xFF) * (ub - ua);
  res = v >= 0 ? res - (1 << 23) + (1 << 7) : -res + (1 << 23) + (1 << 7) - 1;
  return res >> 8;
}

/* Element k of the data (int16 when wide, else int8). */
AOT_INLINE int32_t aot_lstm_at(const void* p, int32_t wide, int32_t k) {
  return wide ? (int32_t)((const int16_t*)p)[k] : (int32_t)((const int8_t*)p)[k];
}

/* One row of a fully connected gate layer, requantized to the gates' int16
   Q3.12: int8 data sums in int32 with an int32 bias; int16 data (wide) sums
   16x8 in int64 with an int64 bias and requantizes with the 64-bit multiply. */
AOT_INLINE int32_t aot_lstm_fc(const void* restrict x, int32_t wide,
                               const int8_t* restrict w, int32_t n, int32_t offset,
                               const void* restrict bias, int32_t row, int32_t mult,
                               int32_t shift) {
  int32_t k;
  if (wide) {
    int64_t acc = bias ? ((const int64_t*)bias)[row] : 0;
    for (k = 0; k < n; ++k) {
      acc += (int64_t)(aot_lstm_at(x, 1, k) + offset) * (int32_t)w[k];
    }
    acc = aot_mbqm64(acc, mult, shift);
    return (int32_t)(acc < -32768 ? -32768 : acc > 32767 ? 32767 : acc);
  } else {
    uint32_t acc = bias ? (uint32_t)((const int32_t*)bias)[row] : 0u;
    for (k = 0; k < n; ++k) {
      acc += (uint32_t)((aot_lstm_at(x, 0, k) + offset) * (int32_t)w[k]);
    }
    return aot_min_i32(aot_max_i32(aot_mbqm((int32_t)acc, mult, shift), -32768), 32767);
  }
}

/* The four gates' pre-activations of one step into gates (int16 Q3.12): the
   input layer, then the recurrent one.  Under GCC a function of its own
   (AOT_LSTM_GATES: not inlined; its one call's constants still reach it by
   GCC's interprocedural constant propagation), so that its dot products
   keep their loop bounds in registers: inlined into aot_lstm, GCC reloaded
   one from the stack per multiply-accumulate. */
#if defined(__GNUC__) && !defined(__clang__)
#define AOT_LSTM_GATES static __attribute__((noinline))
#else
#define AOT_LSTM_GATES AOT_INLINE
#endif
AOT_LSTM_GATES void aot_lstm_gates(const void* restrict xt, const void* restrict h,
                                   int32_t wide, const int8_t* restrict wi,
                                   const int8_t* restrict wr, const void* restrict bias,
                                   const int32_t* restrict mi, const int32_t* restrict si,
                                   const int32_t* restrict mr, const int32_t* restrict sr,
                                   int16_t* restrict gates, int32_t depth, int32_t n_cell,
                                   int32_t x_offset, int32_t h_offset) {
  int32_t g;
  for (g = 0; g < 4 * n_cell; ++g) {
    gates[g] = (int16_t)aot_lstm_fc(xt, wide, wi + g * depth, depth, x_offset, bias, g,
                                    mi[g], si[g]);
  }
  for (g = 0; g < 4 * n_cell; ++g) {
    const int32_t r = aot_lstm_fc(h, wide, wr + g * n_cell, n_cell, h_offset, 0, g,
                                  mr[g], sr[g]);
    gates[g] = (int16_t)aot_min_i32(aot_max_i32(gates[g] + r, -32768), 32767);
  }
}

/* x: the input sequence (steps x batch x depth when time_major, else batch x
   steps x depth); hidden (batch x n_cell, the data's type) and cell (int16)
   are updated in place; y as x with n_cell per step.  wi and wr: the four
   gates' input and recurrent weights, bias: the four gates' biases (int32, or
   int64 when wide), (mi, si) and (mr, sr) the per-row requantization of the
   input and recurrent layers, table TFLM's sigmoid table, gates a scratch
   array of 4 * n_cell (the kernel's, of constant size).  tanh_shift >= 0
   scales the cell state up by 3 * 2^tanh_shift into tanh's input, < 0 down by
   a rounding shift of -tanh_shift after the factor 3; qclip > 0 clips it. */
AOT_INLINE int32_t aot_lstm(const void* restrict x, void* restrict hidden,
                            int16_t* restrict cell, void* restrict y,
                            const int8_t* restrict wi, const int8_t* restrict wr,
                            const void* restrict bias, const int32_t* restrict mi,
                            const int32_t* restrict si, const int32_t* restrict mr,
                            const int32_t* restrict sr, const int32_t* restrict table,
                            int16_t* restrict gates, int32_t wide, int32_t time_major, int32_t batch, int32_t steps,
                            int32_t depth, int32_t n_cell, int32_t x_offset,
                            int32_t h_offset, int32_t h_zero_point, int32_t m_fc,
                            int32_t s_fc, int32_t m_ig, int32_t s_ig, int32_t m_h,
                            int32_t s_h, int32_t qclip, int32_t tanh_shift, int32_t h_min,
                            int32_t h_max) {
  const int32_t bytes = wide ? 2 : 1;
  int32_t t;
  int32_t b;
  for (t = 0; t < steps; ++t) {
    for (b = 0; b < batch; ++b) {
      const int32_t xi = time_major ? (t * batch + b) * depth : (b * steps + t) * depth;
      const int32_t yi = time_major ? (t * batch + b) * n_cell : (b * steps + t) * n_cell;
      const void* xt = (const char*)x + xi * bytes;
      void* h = (char*)hidden + b * n_cell * bytes;
      int16_t* restrict c = cell + b * n_cell;
      int32_t n;
      aot_lstm_gates(xt, h, wide, wi, wr, bias, mi, si, mr, sr, gates, depth, n_cell,
                     x_offset, h_offset);
      for (n = 0; n < n_cell; ++n) {
        const int32_t in_gate = aot_lstm_sigmoid(table, gates[n] * 3);
        const int32_t forget = aot_lstm_sigmoid(table, gates[n_cell + n] * 3);
        const int32_t cell_in = aot_lstm_tanh(table, gates[2 * n_cell + n] * 3);
        const int32_t out_gate = aot_lstm_sigmoid(table, gates[3 * n_cell + n] * 3);
        const int32_t fc = aot_min_i32(aot_max_i32(
            aot_mbqm(forget * (int32_t)c[n], m_fc, s_fc), -32768), 32767);
        const int32_t ig = aot_min_i32(aot_max_i32(
            aot_mbqm(in_gate * cell_in, m_ig, s_ig), -32768), 32767);
        int32_t cn = aot_min_i32(aot_max_i32(fc + ig, -32768), 32767);
        int32_t hn;
        if (qclip > 0) {
          cn = aot_min_i32(aot_max_i32(cn, -qclip), qclip);
        }
        c[n] = (int16_t)cn;
        if (tanh_shift >= 0) {
          hn = aot_lstm_tanh(table, cn * (3 << tanh_shift));
        } else {
          hn = aot_lstm_tanh(table, (cn * 3 + (1 << (-tanh_shift - 1))) >> -tanh_shift);
        }
        hn = aot_mbqm(hn * out_gate, m_h, s_h) + h_zero_point;
        gates[n] = (int16_t)aot_min_i32(aot_max_i32(hn, h_min), h_max);
      }
      for (n = 0; n < n_cell; ++n) {
        if (wide) {
          ((int16_t*)h)[n] = gates[n];
          ((int16_t*)y)[yi + n] = gates[n];
        } else {
          ((int8_t*)h)[n] = (int8_t)gates[n];
          ((int8_t*)y)[yi + n] = (int8_t)gates[n];
        }
      }
    }
  }
  return 0;
}

#endif /* AOT_LSTM_H */
