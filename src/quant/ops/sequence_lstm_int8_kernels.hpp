#pragma once
// The elementwise parts of one integer (8x8_16) LSTM step, as small kernels with a plain scalar
// reference and an AVX2 variant that equals it bit for bit (tests/quant_lstm_kernels_test.cpp).
// Picked once at prepare; noexcept, no allocation, any n >= 0, no alignment needed.
#include <cstdint>

namespace tickinfer::quant::ops::lstm {

struct Int8GateScales {
  int32_t mx = 0, mh = 0;  // multipliers of the input and recurrent matmuls
  int sx = 0, sh = 0;      // their shifts (positive = left)
};

// One gate's n pre-activations, TFLite's two accumulating matmul requantizations with double
// rounding (MultiplyByQuantizedMultiplier, gemmlowp style):
//   t = sat16(MBQM(bias_x + acc_x, mx, sx)); gate = sat16(MBQM(bias_h + acc_h, mh, sh) + t)
// (int32 additions wrap).
using Int8GateFn = void (*)(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h,
                            const int32_t* bias_h, int n, Int8GateScales s, int16_t* gate) noexcept;

// Cell update (UpdateLstmCellInteger): c = sat16(rdivpot(f c, 15) + rdivpot(i g, shift)), then
// clipped to [-clip, clip] when clip > 0. i == nullptr means CIFG: i = 32767 - f. rdivpot rounds
// half away from zero; each product term is narrowed to int16 (wrapping) before the sum.
using Int8CellFn = void (*)(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                            int16_t clip, int16_t* c) noexcept;

void int8_gate_scalar(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h,
                      const int32_t* bias_h, int n, Int8GateScales s, int16_t* gate) noexcept;
void int8_cell_scalar(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                      int16_t clip, int16_t* c) noexcept;
#if defined(TICKINFER_HAVE_X86)
void int8_gate_avx2(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h,
                    const int32_t* bias_h, int n, Int8GateScales s, int16_t* gate) noexcept;
void int8_cell_avx2(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                    int16_t clip, int16_t* c) noexcept;
#endif

struct Int8LstmKernels {
  const char* name;  // "scalar", "avx2"
  Int8GateFn gate;
  Int8CellFn cell;
};
// "scalar" (and "portable") = the reference loops; "avx2"/"avx512"/"" = AVX2 when the CPU has it.
const Int8LstmKernels& int8_lstm_kernels(const char* isa);

}  // namespace tickinfer::quant::ops::lstm
