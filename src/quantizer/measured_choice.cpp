// The measured fp32 pass of `--mode auto` (see measured_choice.hpp).
#include "quantizer/measured_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>

#include "tflite/interpreter.hpp"

namespace tickinfer::quantizer {

namespace {

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Float inputs from the samples (integer inputs keep what they hold: the time does not depend
// on their values), sample `s`.
void feed(tfl::Interpreter& interp, const std::vector<SampleSet>& samples, size_t s) {
  for (size_t i = 0; i < samples.size() && i < interp.num_inputs(); ++i) {
    if (interp.input_tensor(i).type == DType::F32) {
      std::memcpy(interp.input_data(i), samples[i].sample(s % samples[i].count), samples[i].per_sample * sizeof(float));
    }
  }
}

// Median ns per invoke of programs a and b, invoked alternately on the same samples, so that a
// slow patch of a shared core falls on both.
std::pair<double, double> time_pair(const Program& a, const Program& b, const std::vector<SampleSet>& samples,
                                    int runs) {
  tfl::Interpreter ia(std::make_shared<const Program>(a)), ib(std::make_shared<const Program>(b));
  std::vector<double> ta, tb;
  const auto once = [&](tfl::Interpreter& interp, size_t s, std::vector<double>* out) {
    feed(interp, samples, s);
    interp.reset_state();
    const auto t0 = std::chrono::steady_clock::now();
    interp.invoke();
    const auto t1 = std::chrono::steady_clock::now();
    if (out) out->push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  };
  for (int r = 0; r < std::max(runs / 10, 1); ++r) {  // warm-up: caches, branch predictors
    once(ia, static_cast<size_t>(r), nullptr);
    once(ib, static_cast<size_t>(r), nullptr);
  }
  for (int r = 0; r < runs; ++r) {
    once(ia, static_cast<size_t>(r), &ta);
    once(ib, static_cast<size_t>(r), &tb);
  }
  return {median(ta), median(tb)};
}

}  // namespace

MeasuredChoice keep_fp32_where_faster(const Program& float_program, const std::vector<Layer>& layers,
                                      const std::vector<TensorRange>& ranges, const Evaluator& evaluator,
                                      std::vector<Precision> precisions, double max_error,
                                      const QuantizeOptions& quantize, const std::vector<SampleSet>& samples,
                                      const MeasureOptions& options) {
  MeasuredChoice r;
  r.precisions = std::move(precisions);
  const auto build = [&](const std::vector<Precision>& plan) {
    return quantize_program(float_program, layers, plan, ranges, quantize);
  };
  // The layers with the most work first: their fp32 form decides the most time.
  std::vector<size_t> order(layers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return layers[x].macs > layers[y].macs; });
  for (size_t l : order) {
    if (r.precisions[l] == Precision::F32) continue;
    std::vector<Precision> with_fp32 = r.precisions;
    with_fp32[l] = Precision::F32;
    const QuantizedProgram now = build(r.precisions), candidate = build(with_fp32);
    MeasuredStep step;
    step.layer = l;
    step.from = r.precisions[l];
    std::tie(step.ns_quantized, step.ns_fp32) = time_pair(now.program, candidate.program, samples, options.runs);
    step.error_fp32 = evaluator.evaluate(candidate).output.max_rel();
    step.kept_fp32 = step.ns_fp32 < step.ns_quantized * (1.0 - options.margin) && step.error_fp32 <= max_error;
    if (step.kept_fp32) r.precisions = std::move(with_fp32);
    r.steps.push_back(step);
  }
  std::tie(r.ns_chosen, r.ns_float) = time_pair(build(r.precisions).program, float_program, samples, options.runs);
  return r;
}

}  // namespace tickinfer::quantizer
