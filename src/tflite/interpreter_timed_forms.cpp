// The choice between the bit-identical forms some ops have (PreparedOp::has_timed_forms), by
// timing whole invokes. An op's own timing cannot see what its form costs the others: the
// integer LSTM's 128 KB activation tables evict weights the other ops read. lstm_tiny's int8
// file on Zen 4 timed per step said tables 2.4 % faster on the AVX-512 set and even on the AVX2
// set, while its whole plan ran 3 % faster computed on the first and 3 % faster with tables on
// the second.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/sparse_timing.hpp"
#include "tflite/interpreter.hpp"

namespace tickinfer::tfl {

namespace {

// Varied input values for the timing, standard normal as standardized features are: floats as
// they are, int8/uint8 quantized with the tensor's scale and zero point (uniform random bytes
// would spread the gates over the activation tables as no feed does); other types zero. The
// same input every invoke would let the few table entries it touches stay cached, flattering
// the tables.
void fill_varied(const Tensor& t, size_t n, uint32_t seed, uint8_t* data) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const bool quantized = !t.quant.scale.empty() && t.quant.scale[0] > 0.0f;
  const double scale = quantized ? t.quant.scale[0] : 1.0;
  const double zp = quantized && !t.quant.zero_point.empty() ? static_cast<double>(t.quant.zero_point[0]) : 0.0;
  const double lo = t.type == DType::I8 ? -128.0 : 0.0, hi = t.type == DType::I8 ? 127.0 : 255.0;
  for (size_t i = 0; i < n; ++i) {
    const float v = normal(rng);
    if (t.type == DType::F32) {
      std::memcpy(data + 4 * i, &v, 4);
    } else if (t.type == DType::I8 || t.type == DType::U8) {
      // Clamped in double before the conversion: any scale and zero point a file holds (a tiny
      // scale gives an infinite quotient) stays defined.
      const double q = std::clamp(std::nearbyint(static_cast<double>(v) / scale) + zp, lo, hi);
      data[i] = static_cast<uint8_t>(static_cast<int32_t>(q));
    }
  }
}

constexpr int kInputSets = 16;

}  // namespace

// Every op with timed forms on form 0, then on form 1 (one form for all: what one op's form costs
// falls on the others), whole invokes on kInputSets varied inputs in turn (each form the same
// sets), in interleaved rounds (kernels/sparse_timing.hpp); the faster is kept, the tables on a
// tie. Not for interpreters that keep every tensor (calibration and per-layer error, where speed
// is not the point) nor where one invoke takes over kMaxInvokeNs (the op's own choice stays: 24
// invokes of a program that slow would cost more than the choice could save). The inputs are
// zeroed afterwards and the constructor resets the state; the other tensors hold what the last
// timed invoke left, as after any invoke.
void Interpreter::choose_timed_forms() {
  constexpr double kMaxInvokeNs = 5e6;
  if (options_.keep_all_tensors) return;
  std::vector<PreparedOp*> ops;
  for (auto& op : ops_) {
    if (op->has_timed_forms()) ops.push_back(op.get());
  }
  if (ops.empty()) return;
  const Program& p = *program_;
  struct Input {
    uint8_t* data;
    size_t bytes;
    std::vector<uint8_t> sets;  // kInputSets copies of `bytes`
  };
  std::vector<Input> inputs;
  for (int t : p.inputs) {
    const Tensor& in = p.tensors[static_cast<size_t>(t)];
    const size_t n = static_cast<size_t>(element_count(in.shape));
    if (n == 0) continue;
    Input x{static_cast<uint8_t*>(mem_.addr[static_cast<size_t>(t)]), n * dtype_size(in.type), {}};
    x.sets.assign(x.bytes * kInputSets, 0);
    for (int k = 0; k < kInputSets; ++k) fill_varied(in, n, 12345u + 7919u * static_cast<uint32_t>(k), x.sets.data() + x.bytes * k);
    inputs.push_back(std::move(x));
  }
  int next_set[2] = {0, 0};
  const auto with = [&](int form) {
    return [this, &ops, &inputs, &next_set, form] {
      for (PreparedOp* op : ops) op->use_form(form);
      const size_t k = static_cast<size_t>(next_set[form]++ % kInputSets);
      for (const Input& x : inputs) std::memcpy(x.data, x.sets.data() + x.bytes * k, x.bytes);
      invoke();
    };
  };
  const auto start = std::chrono::steady_clock::now();
  with(0)();
  const double first_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  if (first_ns <= kMaxInvokeNs) {
    const ::tickinfer::kernels::PairTiming t = ::tickinfer::kernels::time_interleaved(with(0), with(1), 9);
    const int chosen = t.b_ns < t.a_ns ? 1 : 0;
    char note[200];
    std::snprintf(note, sizeof note, "forms timed over whole invokes of the program: %s %.0f ns, %s %.0f ns",
                  ops[0]->timed_form_name(0), t.a_ns, ops[0]->timed_form_name(1), t.b_ns);
    for (PreparedOp* op : ops) {
      op->use_form(chosen);
      op->note_timed_forms(note);
    }
  } else {
    for (PreparedOp* op : ops) op->use_form(op->initial_form());
  }
  for (const Input& x : inputs) std::memset(x.data, 0, x.bytes);
}

}  // namespace tickinfer::tfl
