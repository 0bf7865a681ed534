#pragma once
// How far a quantized program is from the float one on validation data, layer by layer, and
// where validation data leaves the calibrated ranges.
//
// Error measure (used for the per-layer table and for `--max-error`): over every validation
// sample and every element of a tensor,
//     max_abs = max |y_q - y_f|        max_rel = max_abs / max |y_f|
// i.e. the worst deviation relative to the tensor's own scale on that data. An elementwise
// |y_q - y_f| / |y_f| would explode wherever y_f crosses zero, which says nothing about a model
// whose outputs are probabilities or scores. For int8 tensors y_q is dequantized first. A layer's
// error is that of its output tensor with the whole program quantized (errors accumulate along
// the model); the model's error is the max over its outputs.
#include <string>
#include <vector>

#include "quantizer/calibration.hpp"
#include "quantizer/layers.hpp"
#include "quantizer/quantizer.hpp"
#include "quantizer/sample_set.hpp"

namespace tickinfer::quantizer {

struct ErrorStats {
  double max_abs = 0.0;
  double max_ref = 0.0;  // max |y_f|
  double max_rel() const { return max_ref > 0.0 ? max_abs / max_ref : max_abs; }
};

struct Evaluation {
  std::vector<ErrorStats> layers;  // one per layer
  ErrorStats output;               // over all model outputs
};

// A finding of the coverage check: the share of validation values outside the calibrated range.
struct CoverageFinding {
  std::string subject;  // "input 'x' feature 3" or "layer 'dense_1' output"
  double outside = 0.0; // fraction of validation values outside [cal_min, cal_max]
  float cal_min = 0.0f, cal_max = 0.0f, seen_min = 0.0f, seen_max = 0.0f;
};

class Evaluator {
 public:
  // Runs the float program once over `validation` and keeps every layer's and output's values.
  // carry_state: the recurrent state runs on from one sample to the next (the samples are the
  // ticks of a stream, for a program lowered one step per call), in the float run and in every
  // quantized one; false: zeroed per sample (each sample a whole window).
  Evaluator(const Program& float_program, const std::vector<Layer>& layers, std::vector<SampleSet> validation,
            bool carry_state = false);

  Evaluation evaluate(const QuantizedProgram& quantized) const;

  // Features (last-axis index) of each input and layer outputs whose validation values fall
  // outside the calibrated range more often than `threshold` (a fraction). Per input feature the
  // calibrated range is that of the calibration samples; per layer output, `ranges`.
  std::vector<CoverageFinding> coverage(const std::vector<SampleSet>& calibration,
                                        const std::vector<TensorRange>& ranges, double threshold) const;

  size_t samples() const { return validation_.empty() ? 0 : validation_[0].count; }

 private:
  const Program& float_program_;
  const std::vector<Layer>& layers_;
  std::vector<SampleSet> validation_;
  bool carry_state_;
  // reference_[k]: the float values of watched_[k] for every validation sample, sample-major.
  std::vector<int> watched_;
  std::vector<std::vector<float>> reference_;
};

}  // namespace tickinfer::quantizer
