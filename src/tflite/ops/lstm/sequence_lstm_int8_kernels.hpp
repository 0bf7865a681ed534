#pragma once
// The elementwise parts of one integer (8x8_16) LSTM step, as small kernels with a plain scalar
// reference and an AVX2 variant that equals it bit for bit (tests/quant_lstm_kernels_test.cpp).
// Picked once at prepare; noexcept, no allocation, any n >= 0, no alignment needed.
#include <cstdint>
#include <functional>
#include <string>

#include "kernels/isa_variants.hpp"
#include "tflite/prepared_op.hpp"
#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace tickinfer::tfl::ops::lstm {

// A gate's pre-activations are TFLite's two accumulating matmul requantizations with double
// rounding (MultiplyByQuantizedMultiplier, gemmlowp style), int32 additions wrapping:
//   gate = sat16(MBQM(bias_h + acc_h, mh, sh) + sat16(MBQM(bias_x + acc_x, mx, sx)))
// The input term does not depend on the state, so the LSTM makes it for a chunk of steps at once
// (gate_input) and each step adds the recurrent term to it (gate_recurrent).

// gx[k] = sat16(MBQM(bias_x[k] + acc_x[k], mx, sx)).
using Int8GateInputFn = void (*)(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx,
                                 int16_t* gx) noexcept;

// gate[k] = sat16(MBQM(bias_h[k] + acc_h[k], mh, sh) + gx[k]).
using Int8GateRecurrentFn = void (*)(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n,
                                     int32_t mh, int sh, int16_t* gate) noexcept;

// The same with the recurrent term already requantized: gate[k] = sat16(th[k] + gx[k]). For a
// state at its zero point (every window's first step) W_h h is a constant, so th is too.
using Int8GateConstHFn = void (*)(const int32_t* th, const int16_t* gx, int n, int16_t* gate) noexcept;

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

void int8_gate_input_scalar(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx,
                            int16_t* gx) noexcept;
void int8_gate_recurrent_scalar(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n, int32_t mh,
                                int sh, int16_t* gate) noexcept;
void int8_gate_const_h_scalar(const int32_t* th, const int16_t* gx, int n, int16_t* gate) noexcept;
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
void int8_gate_input_avx2(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx,
                          int16_t* gx) noexcept;
void int8_gate_recurrent_avx2(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n, int32_t mh,
                              int sh, int16_t* gate) noexcept;
void int8_gate_const_h_avx2(const int32_t* th, const int16_t* gx, int n, int16_t* gate) noexcept;
void int8_cell_avx2(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                    int16_t clip, int16_t* c) noexcept;
// The AVX-512 set: the AVX2 gate kernels, the cell update on 16 lanes, the activations computed
// on 32 lanes (fx16_avx512.hpp), the table form as AVX2's (sequence_lstm_int8_activations_avx512.cpp).
void int8_cell_avx512(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift,
                      int16_t clip, int16_t* c) noexcept;
void int8_activate_computed_avx512(const fx16::Activation& f, int16_t* x, int n) noexcept;
void int8_hidden_double_computed_avx512(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                        int shift, int32_t zp, int8_t* h) noexcept;
void int8_hidden_single_computed_avx512(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                        int shift, int32_t zp, int8_t* h) noexcept;
#endif

struct Int8LstmKernels {
  ::tickinfer::kernels::Isa isa;
  const char* name;  // "scalar", "avx2", "avx512"
  Int8GateInputFn gate_input;
  Int8GateRecurrentFn gate_recurrent;
  Int8GateConstHFn gate_const_h;
  Int8CellFn cell;
  Int8Activations table, computed;  // computed.name == nullptr in the scalar set
};
// The family's table: scalar (the reference loops), avx2 and avx512; portable falls back to
// scalar (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
const Int8LstmKernels& int8_lstm_kernels(::tickinfer::kernels::Isa isa);

// The activation form: `wanted` unless Auto (Computed where k has it); Auto times `step` (one
// whole LSTM step run with the given form: the gemvs, the activations and the cell, since the
// tables' 128 KB each also evict the gate weights the next step reads) for both forms in
// interleaved rounds (kernels/sparse_timing.hpp) and keeps "table" only when it takes at most
// 97 % of the computed form's time (the tables' cache cost to other ops is not in the timing);
// `note` then gets the two medians. Prepare time only.
struct Int8ActivationChoice {
  const Int8Activations* form = nullptr;
  std::string note;
};
Int8ActivationChoice choose_int8_activations(const Int8LstmKernels& k, ActivationForm wanted,
                                             const std::function<void(const Int8Activations&)>& step);

}  // namespace tickinfer::tfl::ops::lstm
