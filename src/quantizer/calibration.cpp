// Range observation on calibration samples (see calibration.hpp).
#include "quantizer/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "quantizer/calibration_lstm.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

void check_samples(const Program& program, const std::vector<SampleSet>& inputs, const char* what) {
  if (inputs.size() != program.inputs.size()) {
    throw Error(std::string(what) + ": the model has " + std::to_string(program.inputs.size()) + " inputs but " +
                std::to_string(inputs.size()) + " sample files were given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = program.tensors[static_cast<size_t>(program.inputs[i])];
    const auto want = static_cast<size_t>(element_count(t.shape));
    if (inputs[i].per_sample != want) {
      throw Error(std::string(what) + ": input '" + t.name + "' takes " + std::to_string(want) + " values per sample, the samples have " +
                  std::to_string(inputs[i].per_sample));
    }
    if (inputs[i].count != inputs[0].count) {
      throw Error(std::string(what) + ": the sample sets of the inputs hold different numbers of samples");
    }
    if (inputs[i].count == 0) throw Error(std::string(what) + ": no samples");
  }
}

std::vector<TensorRange> calibrate(const Program& float_program, const std::vector<SampleSet>& inputs,
                                   const CalibrationOptions& options) {
  check_samples(float_program, inputs, "calibration");
  if (options.method == CalibrationMethod::Percentile && !(options.percentile > 50.0 && options.percentile <= 100.0)) {
    throw Error("calibration: percentile must be in (50, 100], got " + std::to_string(options.percentile));
  }
  InterpreterOptions io;
  io.keep_all_tensors = true;
  io.reset_variables_each_invoke = !options.carry_state;
  Interpreter interp(std::make_shared<const Program>(float_program), io);
  const Program& p = interp.program();
  LstmCellObserver cells(p, options.carry_state);

  // Tensors to watch: float activations (inputs included), not constants or recurrent state.
  std::vector<int> watched;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const Tensor& x = p.tensors[t];
    if (x.type == DType::F32 && !x.is_constant() && !x.is_variable) watched.push_back(static_cast<int>(t));
  }
  std::vector<TensorRange> ranges(p.tensors.size());
  const bool keep_values = options.method == CalibrationMethod::Percentile;
  std::vector<std::vector<float>> values(keep_values ? p.tensors.size() : 0);

  for (size_t s = 0; s < inputs[0].count; ++s) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::memcpy(interp.input_data(i), inputs[i].sample(s), inputs[i].per_sample * sizeof(float));
    }
    interp.invoke();
    cells.observe([&](int t) { return interp.tensor_data(t); });
    for (int t : watched) {
      const auto* v = static_cast<const float*>(interp.tensor_data(t));
      const auto n = static_cast<size_t>(element_count(p.tensors[static_cast<size_t>(t)].shape));
      if (n == 0) continue;
      const auto [lo, hi] = std::minmax_element(v, v + n);
      TensorRange& r = ranges[static_cast<size_t>(t)];
      if (!r.observed) {
        r = {*lo, *hi, true};
      } else {
        r.min = std::min(r.min, *lo);
        r.max = std::max(r.max, *hi);
      }
      if (keep_values) values[static_cast<size_t>(t)].insert(values[static_cast<size_t>(t)].end(), v, v + n);
    }
  }
  if (keep_values) {
    // Nearest-rank percentiles of all values seen; the range keeps 0 inside as quantization will.
    const double q = options.percentile / 100.0;
    for (int t : watched) {
      auto& v = values[static_cast<size_t>(t)];
      if (v.empty()) continue;
      const auto rank = [&](double f) {
        // 1e-9 keeps f * n = 100.00000000000001 (from 1 - 0.99) from taking the next rank.
        return static_cast<size_t>(std::clamp(std::ceil(f * static_cast<double>(v.size()) - 1e-9) - 1.0, 0.0,
                                              static_cast<double>(v.size() - 1)));
      };
      const size_t hi = rank(q), lo = rank(1.0 - q);
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(hi), v.end());
      const float vmax = v[hi];
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
      const float vmin = v[lo];
      ranges[static_cast<size_t>(t)].min = vmin;
      ranges[static_cast<size_t>(t)].max = vmax;
      std::vector<float>().swap(v);
    }
  }
  const std::vector<float> cell = cells.max_abs_cell();
  for (size_t t = 0; t < cell.size(); ++t) {
    if (cell[t] > 0.0f) ranges[t] = {-cell[t], cell[t], true};
  }
  return ranges;
}

}  // namespace tickinfer::quantizer
