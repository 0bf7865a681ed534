// Per-layer error of a quantized program and the calibration coverage check (see evaluation.hpp).
#include "quantizer/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

namespace {

// Copies tensor t's values as float (dequantizing int8 / int16) after an invoke.
void read_as_float(const Interpreter& interp, int t, std::vector<float>& out) {
  const Tensor& x = interp.program().tensors[static_cast<size_t>(t)];
  const size_t n = static_cast<size_t>(element_count(x.shape));
  out.resize(n);
  const void* d = interp.tensor_data(t);
  switch (x.type) {
    case DType::F32:
      std::memcpy(out.data(), d, n * sizeof(float));
      return;
    case DType::I8: {
      const float s = x.quant.scale.at(0);
      const auto zp = static_cast<int32_t>(x.quant.zero_point.at(0));
      for (size_t k = 0; k < n; ++k) out[k] = s * static_cast<float>(static_cast<const int8_t*>(d)[k] - zp);
      return;
    }
    default:
      throw Error("tensor '" + x.name + "' of type " + dtype_name(x.type) + " cannot be compared with float");
  }
}

void set_inputs(Interpreter& interp, const std::vector<SampleSet>& inputs, size_t s) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = interp.input_tensor(i);
    const float* v = inputs[i].sample(s);
    if (t.type == DType::F32) {
      std::memcpy(interp.input_data(i), v, inputs[i].per_sample * sizeof(float));
    } else if (t.type == DType::I8) {
      // Integer-input programs: quantize as the converter's QUANTIZE would.
      const float scale = t.quant.scale.at(0);
      const auto zp = static_cast<float>(t.quant.zero_point.at(0));
      auto* q = static_cast<int8_t*>(interp.input_data(i));
      for (size_t k = 0; k < inputs[i].per_sample; ++k) q[k] = static_cast<int8_t>(std::clamp(std::round(v[k] / scale) + zp, -128.0f, 127.0f));
    } else {
      throw Error("input '" + t.name + "' of type " + dtype_name(t.type) + " cannot be fed float samples");
    }
  }
}

}  // namespace

Evaluator::Evaluator(const Program& float_program, const std::vector<Layer>& layers, std::vector<SampleSet> validation,
                     bool carry_state)
    : float_program_(float_program), layers_(layers), validation_(std::move(validation)), carry_state_(carry_state) {
  check_samples(float_program, validation_, "validation");
  for (const Layer& l : layers_) watched_.push_back(l.output);
  for (int t : float_program.outputs) watched_.push_back(t);
  reference_.resize(watched_.size());
  InterpreterOptions io;
  io.keep_all_tensors = true;
  io.reset_variables_each_invoke = !carry_state_;
  Interpreter interp(std::make_shared<const Program>(float_program), io);
  std::vector<float> v;
  for (size_t s = 0; s < samples(); ++s) {
    set_inputs(interp, validation_, s);
    interp.invoke();
    for (size_t k = 0; k < watched_.size(); ++k) {
      read_as_float(interp, watched_[k], v);
      reference_[k].insert(reference_[k].end(), v.begin(), v.end());
    }
  }
}

Evaluation Evaluator::evaluate(const QuantizedProgram& q) const {
  InterpreterOptions io;
  io.keep_all_tensors = true;
  io.reset_variables_each_invoke = !carry_state_;
  Interpreter interp(std::make_shared<const Program>(q.program), io);
  std::vector<ErrorStats> stats(watched_.size());
  std::vector<float> v;
  for (size_t s = 0; s < samples(); ++s) {
    set_inputs(interp, validation_, s);
    interp.invoke();
    for (size_t k = 0; k < watched_.size(); ++k) {
      const int mapped = q.tensor_map.at(static_cast<size_t>(watched_[k]));
      if (mapped < 0) continue;
      read_as_float(interp, mapped, v);
      const float* ref = reference_[k].data() + s * v.size();
      for (size_t e = 0; e < v.size(); ++e) {
        stats[k].max_abs = std::max(stats[k].max_abs, static_cast<double>(std::abs(v[e] - ref[e])));
        stats[k].max_ref = std::max(stats[k].max_ref, static_cast<double>(std::abs(ref[e])));
      }
    }
  }
  Evaluation e;
  e.layers.assign(stats.begin(), stats.begin() + static_cast<std::ptrdiff_t>(layers_.size()));
  for (size_t k = layers_.size(); k < stats.size(); ++k) {
    // The model's relative error is the worst output's.
    if (stats[k].max_rel() >= e.output.max_rel()) e.output = stats[k];
  }
  return e;
}

std::vector<CoverageFinding> Evaluator::coverage(const std::vector<SampleSet>& calibration,
                                                 const std::vector<TensorRange>& ranges, double threshold) const {
  std::vector<CoverageFinding> found;
  const Program& p = float_program_;
  for (size_t i = 0; i < p.inputs.size() && i < calibration.size(); ++i) {
    const Tensor& t = p.tensors[static_cast<size_t>(p.inputs[i])];
    const size_t features = t.shape.empty() ? 1 : static_cast<size_t>(t.shape.back());
    const auto per_feature = [&](const SampleSet& set, size_t f, auto&& visit) {
      for (size_t s = 0; s < set.count; ++s) {
        for (size_t e = f; e < set.per_sample; e += features) visit(set.sample(s)[e]);
      }
    };
    for (size_t f = 0; f < features; ++f) {
      CoverageFinding c;
      c.subject = "input '" + t.name + "' feature " + std::to_string(f);
      c.cal_min = c.seen_min = INFINITY;
      c.cal_max = c.seen_max = -INFINITY;
      per_feature(calibration[i], f, [&](float x) { c.cal_min = std::min(c.cal_min, x); c.cal_max = std::max(c.cal_max, x); });
      size_t n = 0, out = 0;
      per_feature(validation_[i], f, [&](float x) {
        ++n;
        out += (x < c.cal_min || x > c.cal_max) ? 1 : 0;
        c.seen_min = std::min(c.seen_min, x);
        c.seen_max = std::max(c.seen_max, x);
      });
      c.outside = n ? static_cast<double>(out) / static_cast<double>(n) : 0.0;
      if (c.outside > threshold) found.push_back(c);
    }
  }
  for (size_t l = 0; l < layers_.size(); ++l) {
    const TensorRange& r = ranges.at(static_cast<size_t>(layers_[l].output));
    if (!r.observed) continue;
    CoverageFinding c;
    c.subject = "layer '" + layers_[l].label + "' output";
    c.cal_min = r.min;
    c.cal_max = r.max;
    c.seen_min = INFINITY;
    c.seen_max = -INFINITY;
    size_t out = 0;
    for (float x : reference_[l]) {
      out += (x < r.min || x > r.max) ? 1 : 0;
      c.seen_min = std::min(c.seen_min, x);
      c.seen_max = std::max(c.seen_max, x);
    }
    c.outside = reference_[l].empty() ? 0.0 : static_cast<double>(out) / static_cast<double>(reference_[l].size());
    if (c.outside > threshold) found.push_back(c);
  }
  return found;
}

}  // namespace tickinfer::quantizer
