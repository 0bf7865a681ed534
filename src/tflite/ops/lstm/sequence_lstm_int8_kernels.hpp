#pragma once
// The elementwise parts of one integer (8x8_16) LSTM step, as small kernels with a plain scalar
// reference and an AVX2 variant that equals it bit for bit (tests/quant_lstm_kernels_test.cpp).
// Picked once at prepare; noexcept, no allocation, any n >= 0, no alignment needed.
#include <cstdint>
#include <string>

#include "kernels/isa_variants.hpp"
#include "tflite/prepared_op.hpp"
#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace tickinfer::tfl::ops::lstm {

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

// The same with the recurrent term already requantized: gate = sat16(th[k] + sat16(MBQM(bias_x +
// acc_x, mx, sx))), th[k] = MBQM(bias_h + acc_h, mh, sh) computed once. For a state at its zero
// point (every window's first step) W_h h is a constant, so th is too, and half the work goes.
using Int8GateConstHFn = void (*)(const int32_t* acc_x, const int32_t* bias_x, const int32_t* th, int n,
                                  int32_t mx, int sx, int16_t* gate) noexcept;

// Cell update (UpdateLstmCellInteger): c = sat16(rdivpot(f c, 15) + rdivpot(i g, shift)), then
// clipped to [-clip, clip] when clip > 0. i == nullptr means CIFG: i = 32767 - f. rdivpot rounds
// half away from zero; each product term is narrowed to int16 (wrapping) before the sum.
using Int8CellFn = void (*)(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                            int16_t clip, int16_t* c) noexcept;

// x[k] = f(x[k]) in place: the gates' logistic / tanh.
using Int8ActivateFn = void (*)(const fx16::Activation& f, int16_t* x, int n) noexcept;

// Hidden state (CwiseMul with a quantized multiplier): h[k] = int8(clamp(MBQM(o[k] * t(c[k]), m,
// shift) + zp, -128, 127)), t the cell-state tanh; MBQM rounds once or twice by the variant.
using Int8HiddenFn = void (*)(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                              int shift, int32_t zp, int8_t* h) noexcept;

// The kernels that apply the activations, in one of two forms with the same results: "table"
// looks every value up in the function's 65536-entry table (two loads and a store per element),
// "computed" evaluates the fixed-point function in vector lanes (about 90 instructions per 16
// elements, 19 of them vpmulhrsw: on the first Zen, with one 256-bit multiply pipe, 1.9 against
// 0.6 ns per element; bench/quant_lstm_bench.cpp). Which pays is a property of the core, not of
// the instruction set, so the LSTM measures both at prepare (choose_int8_activations).
struct Int8Activations {
  const char* name = nullptr;  // "table", "computed"; nullptr: the set has no such form
  Int8ActivateFn activate = nullptr;
  Int8HiddenFn hidden_double = nullptr, hidden_single = nullptr;
};

void int8_gate_scalar(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h,
                      const int32_t* bias_h, int n, Int8GateScales s, int16_t* gate) noexcept;
void int8_gate_const_h_scalar(const int32_t* acc_x, const int32_t* bias_x, const int32_t* th, int n, int32_t mx,
                              int sx, int16_t* gate) noexcept;
void int8_cell_scalar(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                      int16_t clip, int16_t* c) noexcept;
void int8_activate_scalar(const fx16::Activation& f, int16_t* x, int n) noexcept;
void int8_hidden_double_scalar(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                               int32_t zp, int8_t* h) noexcept;
void int8_hidden_single_scalar(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                               int32_t zp, int8_t* h) noexcept;
#if defined(TICKINFER_HAVE_X86)
void int8_activate_computed_avx2(const fx16::Activation& f, int16_t* x, int n) noexcept;
void int8_hidden_double_computed_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                      int shift, int32_t zp, int8_t* h) noexcept;
void int8_hidden_single_computed_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                      int shift, int32_t zp, int8_t* h) noexcept;
void int8_hidden_double_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept;
void int8_hidden_single_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept;
void int8_gate_avx2(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h,
                    const int32_t* bias_h, int n, Int8GateScales s, int16_t* gate) noexcept;
void int8_gate_const_h_avx2(const int32_t* acc_x, const int32_t* bias_x, const int32_t* th, int n, int32_t mx,
                            int sx, int16_t* gate) noexcept;
void int8_cell_avx2(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                    int16_t clip, int16_t* c) noexcept;
#endif

struct Int8LstmKernels {
  ::tickinfer::kernels::Isa isa;
  const char* name;  // "scalar", "avx2"
  Int8GateFn gate;
  Int8CellFn cell;
  Int8GateConstHFn gate_const_h;
  Int8Activations table, computed;  // computed.name == nullptr in the scalar set
};
// The family's table: scalar (the reference loops) and avx2; portable falls back to scalar and
// avx512 to avx2 (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
const Int8LstmKernels& int8_lstm_kernels(::tickinfer::kernels::Isa isa);

// The activation form for an LSTM of n_cell cells: `wanted` unless Auto (Computed where k has
// it); Auto times both forms of k on one step's activations (three logistics, two tanh, the
// hidden state) in interleaved rounds (kernels/sparse_timing.hpp) and keeps "computed" when it
// takes at most 97 % of the table's time; `note` then gets the two medians. Prepare time only.
struct Int8ActivationChoice {
  const Int8Activations* form = nullptr;
  std::string note;
};
Int8ActivationChoice choose_int8_activations(const Int8LstmKernels& k, ActivationForm wanted, int n_cell,
                                             const fx16::Activation& tanh_cell);

}  // namespace tickinfer::tfl::ops::lstm
