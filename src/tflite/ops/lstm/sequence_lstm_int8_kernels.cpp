// Scalar reference of the integer LSTM's elementwise step kernels, and the choice of variant.
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "kernels/sparse_timing.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {
inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t clamp16(int32_t v) { return std::min(32767, std::max(-32768, v)); }
}  // namespace

void int8_gate_input_scalar(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx,
                            int16_t* gx) noexcept {
  for (int k = 0; k < n; ++k) {
    gx[k] = static_cast<int16_t>(
        clamp16(multiply_by_quantized_multiplier<Rounding::Double>(wrapping_add(bias_x[k], acc_x[k]), mx, sx)));
  }
}

void int8_gate_recurrent_scalar(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n, int32_t mh,
                                int sh, int16_t* gate) noexcept {
  for (int k = 0; k < n; ++k) {
    const int32_t th = multiply_by_quantized_multiplier<Rounding::Double>(wrapping_add(bias_h[k], acc_h[k]), mh, sh);
    gate[k] = static_cast<int16_t>(clamp16(wrapping_add(th, gx[k])));
  }
}

void int8_gate_const_h_scalar(const int32_t* th, const int16_t* gx, int n, int16_t* gate) noexcept {
  for (int k = 0; k < n; ++k) gate[k] = static_cast<int16_t>(clamp16(wrapping_add(th[k], gx[k])));
}

void int8_cell_scalar(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift, int16_t clip,
                      int16_t* c) noexcept {
  for (int k = 0; k < n; ++k) {
    const auto kept = static_cast<int16_t>(fx16::rounding_divide_by_pot(int32_t{f[k]} * c[k], 15));
    const int16_t in_gate = i ? i[k] : static_cast<int16_t>(32767 - f[k]);
    const auto added = static_cast<int16_t>(fx16::rounding_divide_by_pot(int32_t{in_gate} * g[k], shift));
    int32_t v = clamp16(int32_t{kept} + added);
    if (clip > 0) v = std::min<int32_t>(clip, std::max<int32_t>(-clip, v));
    c[k] = static_cast<int16_t>(v);
  }
}

// The table indexed from its middle, four lookups per turn: two loads and a store per element
// and nothing else, the loop's bound by memory operations.
void int8_activate_scalar(const fx16::Activation& f, int16_t* x, int n) noexcept {
  const int16_t* middle = f.table->data() + 32768;
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    const int16_t a = middle[x[k]], b = middle[x[k + 1]], c = middle[x[k + 2]], d = middle[x[k + 3]];
    x[k] = a;
    x[k + 1] = b;
    x[k + 2] = c;
    x[k + 3] = d;
  }
  for (; k < n; ++k) x[k] = middle[x[k]];
}

namespace {
template <Rounding R>
void hidden(const int16_t* o, const int16_t* c, const fx16::Activation& f, int n, int32_t m, int shift, int32_t zp,
            int8_t* h) noexcept {
  const fx16::Table& t = *f.table;
  for (int k = 0; k < n; ++k) {
    const int32_t prod = int32_t{o[k]} * t[static_cast<size_t>(int32_t{c[k]} + 32768)];
    const int32_t v = multiply_by_quantized_multiplier<R>(prod, m, shift) + zp;
    h[k] = static_cast<int8_t>(std::min(127, std::max(-128, v)));
  }
}
}  // namespace

void int8_hidden_double_scalar(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                               int32_t zp, int8_t* h) noexcept {
  hidden<Rounding::Double>(o, c, t, n, m, shift, zp, h);
}
void int8_hidden_single_scalar(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                               int32_t zp, int8_t* h) noexcept {
  hidden<Rounding::Single>(o, c, t, n, m, shift, zp, h);
}

const Int8LstmKernels& int8_lstm_kernels(::tickinfer::kernels::Isa isa) {
  using ::tickinfer::kernels::Isa;
  static const Int8LstmKernels scalar{Isa::Scalar, "scalar", int8_gate_input_scalar, int8_gate_recurrent_scalar,
                                      int8_gate_const_h_scalar, int8_cell_scalar,
                                      {"table", int8_activate_scalar, int8_hidden_double_scalar, int8_hidden_single_scalar},
                                      {}};
  ::tickinfer::kernels::IsaVariants<const Int8LstmKernels*> table;
  table.scalar = &scalar;
#if defined(TICKINFER_HAVE_X86)
  static const Int8LstmKernels avx2{
      Isa::Avx2, "avx2", int8_gate_input_avx2, int8_gate_recurrent_avx2, int8_gate_const_h_avx2, int8_cell_avx2,
      {"table", int8_activate_scalar, int8_hidden_double_avx2, int8_hidden_single_avx2},
      {"computed", int8_activate_computed_avx2, int8_hidden_double_computed_avx2, int8_hidden_single_computed_avx2}};
  table.avx2 = &avx2;
  static const Int8LstmKernels avx512{
      Isa::Avx512, "avx512", int8_gate_input_avx2, int8_gate_recurrent_avx2, int8_gate_const_h_avx2, int8_cell_avx512,
      {"table", int8_activate_scalar, int8_hidden_double_avx2, int8_hidden_single_avx2},
      {"computed", int8_activate_computed_avx512, int8_hidden_double_computed_avx512, int8_hidden_single_computed_avx512}};
  table.avx512 = &avx512;
#endif
  return *table.pick(isa);
}

Int8ActivationChoice choose_int8_activations(const Int8LstmKernels& k, ActivationForm wanted,
                                             const std::function<void(const Int8Activations&)>& step) {
  if (!k.computed.name || wanted == ActivationForm::Table) return {&k.table, ""};
  if (wanted == ActivationForm::Computed) return {&k.computed, ""};
  const ::tickinfer::kernels::PairTiming t =
      ::tickinfer::kernels::time_interleaved([&] { step(k.table); }, [&] { step(k.computed); }, 9);
  // The tables only where they are clearly faster: their 128 KB evict weights that other ops
  // (the next layer, the head) read, a cost the step's own timing does not see (lstm_tiny's int8
  // file on Zen 4: tables 2.4 % faster per step, the whole plan 3 % faster computed).
  const bool computed = !(t.a_ns <= ::tickinfer::kernels::kSparseMargin * t.b_ns);
  char b[160];
  std::snprintf(b, sizeof b, "activation forms measured per step: table %.0f ns, computed %.0f ns", t.a_ns, t.b_ns);
  return {computed ? &k.computed : &k.table, b};
}

}  // namespace tickinfer::tfl::ops::lstm
