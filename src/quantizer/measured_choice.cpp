// The measured fp32 pass of `--mode auto` (see measured_choice.hpp).
#include "quantizer/measured_choice.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>

#include "kernels/sparse_timing.hpp"
#include "tflite/interpreter.hpp"

namespace tickinfer::quantizer {

namespace {

// One invoke per call on the samples in turn (float inputs copied in, integer inputs left as they
// are: the time does not depend on their values), state reset as for each validation sample, or
// carried (ticks: a recurrent product of a zero state is skipped, so a reset would time less work).
class TimedProgram {
 public:
  TimedProgram(const Program& p, const std::vector<SampleSet>& samples, bool carry_state)
      : interp_(std::make_shared<const Program>(p), options(carry_state)), samples_(samples) {}
  void operator()() {
    for (size_t i = 0; i < samples_.size() && i < interp_.num_inputs(); ++i) {
      if (interp_.input_tensor(i).type == DType::F32) {
        std::memcpy(interp_.input_data(i), samples_[i].sample(next_ % samples_[i].count),
                    samples_[i].per_sample * sizeof(float));
      }
    }
    ++next_;
    interp_.invoke();  // resets the state first unless it carries (options)
  }

 private:
  static tfl::InterpreterOptions options(bool carry_state) {
    tfl::InterpreterOptions o;
    o.reset_variables_each_invoke = !carry_state;
    return o;
  }
  tfl::Interpreter interp_;
  const std::vector<SampleSet>& samples_;
  size_t next_ = 0;
};

// Median ns per invoke of programs a and b, timed alternately (kernels::time_interleaved).
std::pair<double, double> time_pair(const Program& a, const Program& b, const std::vector<SampleSet>& samples,
                                    const MeasureOptions& options) {
  TimedProgram ta(a, samples, options.carry_state), tb(b, samples, options.carry_state);
  const kernels::PairTiming t = kernels::time_interleaved([&] { ta(); }, [&] { tb(); }, options.runs);
  return {t.a_ns, t.b_ns};
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
  QuantizedProgram chosen = build(r.precisions);
  for (size_t l : order) {
    if (r.precisions[l] == Precision::F32) continue;
    std::vector<Precision> with_fp32 = r.precisions;
    with_fp32[l] = Precision::F32;
    QuantizedProgram candidate = build(with_fp32);
    MeasuredStep step;
    step.layer = l;
    step.from = r.precisions[l];
    std::tie(step.ns_quantized, step.ns_fp32) = time_pair(chosen.program, candidate.program, samples, options);
    step.error_fp32 = evaluator.evaluate(candidate).output.max_rel();
    step.kept_fp32 = step.ns_fp32 < step.ns_quantized * (1.0 - options.margin) && step.error_fp32 <= max_error;
    if (step.kept_fp32) {
      r.precisions = std::move(with_fp32);
      chosen = std::move(candidate);
    }
    r.steps.push_back(step);
  }
  std::tie(r.ns_chosen, r.ns_float) = time_pair(chosen.program, float_program, samples, options);
  return r;
}

}  // namespace tickinfer::quantizer
