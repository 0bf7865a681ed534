// One quantizer run (see quantize_session.hpp).
#include "quantizer/quantize_session.hpp"

#include <chrono>
#include <cstring>
#include <memory>

#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

namespace {

// Each layer's share of the quantized program's run time: every op timed on its own
// (invoke_range) over `runs` invokes, ops attributed to layers by label (inserted QUANTIZE /
// DEQUANTIZE ops carry the label of the layer that needs them).
std::vector<double> measure_shares(const QuantizedProgram& q, const std::vector<Layer>& layers,
                                   const std::vector<SampleSet>& samples, int runs, bool carry_state) {
  Interpreter interp(std::make_shared<const Program>(q.program));
  const Program& p = interp.program();
  std::vector<double> ns(interp.num_ops(), 0.0);
  for (int r = 0; r < runs; ++r) {
    const size_t s = static_cast<size_t>(r) % samples[0].count;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (interp.input_tensor(i).type == DType::F32) {
        std::memcpy(interp.input_data(i), samples[i].sample(s), samples[i].per_sample * sizeof(float));
      }
    }
    if (!carry_state) interp.reset_state();  // invoke_range never resets; ticks carry the state, as they run
    for (size_t op = 0; op < interp.num_ops(); ++op) {
      const auto t0 = std::chrono::steady_clock::now();
      interp.invoke_range(op, op + 1);
      const auto t1 = std::chrono::steady_clock::now();
      ns[op] += static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    }
  }
  std::vector<double> share(layers.size(), 0.0);
  double total = 0.0;
  for (size_t op = 0; op < ns.size(); ++op) {
    for (size_t l = 0; l < layers.size(); ++l) {
      if (layers[l].label == p.ops[op].label) {
        share[l] += ns[op];
        total += ns[op];
        break;
      }
    }
  }
  if (total > 0.0) {
    for (double& s : share) s /= total;
  }
  return share;
}

std::vector<double> mac_shares(const std::vector<Layer>& layers) {
  double total = 0.0;
  for (const Layer& l : layers) total += static_cast<double>(l.macs);
  std::vector<double> share;
  for (const Layer& l : layers) share.push_back(total > 0.0 ? static_cast<double>(l.macs) / total : 0.0);
  return share;
}

}  // namespace

QuantizeReport quantize_model(const Program& float_program, const std::vector<SampleSet>& calibration,
                              const std::vector<SampleSet>& validation, const QuantizeRequest& request) {
  QuantizeReport r;
  QuantizeOptions options = request.quantize;
  options.gru_own_arithmetic = request.gru_arithmetic == QuantizeRequest::GruArithmetic::ByMode
                                   ? request.mode != QuantizeMode::Dynamic
                                   : request.gru_arithmetic == QuantizeRequest::GruArithmetic::Own;
  r.layers = find_layers(float_program);
  r.ranges = calibrate(float_program, calibration, request.calibration);
  const Evaluator evaluator(float_program, r.layers, validation, request.one_step_per_call);
  switch (request.mode) {
    case QuantizeMode::Dynamic:
      for (const Layer& l : r.layers) r.precisions.push_back(nearest_allowed(l, Precision::Int8Dynamic));
      for (size_t l = 0; l < r.layers.size(); ++l) {
        if (!r.layers[l].has_weights) r.precisions[l] = Precision::F32;
      }
      break;
    case QuantizeMode::Int8:
      for (const Layer& l : r.layers) r.precisions.push_back(nearest_allowed(l, Precision::Int8));
      break;
    case QuantizeMode::Bf16:
      for (const Layer& l : r.layers) {
        r.precisions.push_back(l.has_weights ? nearest_allowed(l, Precision::BF16) : Precision::F32);
      }
      break;
    case QuantizeMode::Auto: {
      AutoResult a = choose_precisions(float_program, r.layers, r.ranges, evaluator, request.max_error, options);
      r.precisions = std::move(a.precisions);
      r.steps = std::move(a.steps);
      r.met = a.met;
      if (request.timing_runs > 0) {
        MeasuredChoice m = keep_fp32_where_faster(float_program, r.layers, r.ranges, evaluator, std::move(r.precisions),
                                                  request.max_error, options, validation,
                                                  {request.timing_runs, request.fp32_margin, request.one_step_per_call});
        r.precisions = std::move(m.precisions);
        r.measured = std::move(m.steps);
        r.choice_measured = true;
        r.ns_chosen = m.ns_chosen;
        r.ns_float = m.ns_float;
      }
      break;
    }
  }
  r.result = quantize_program(float_program, r.layers, r.precisions, r.ranges, options);
  r.evaluation = evaluator.evaluate(r.result);
  r.coverage = evaluator.coverage(calibration, r.ranges, request.coverage_threshold);
  if (request.timing_runs > 0) {
    r.latency_share = measure_shares(r.result, r.layers, validation, request.timing_runs, request.one_step_per_call);
    r.latency_measured = true;
  } else {
    r.latency_share = mac_shares(r.layers);
  }
  return r;
}

}  // namespace tickinfer::quantizer
