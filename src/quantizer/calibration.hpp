#pragma once
// Observed value ranges of every float activation of a program, from running it on calibration
// samples (the interpreter keeps every tensor so each can be read after invoke).
//   minmax:     [min, max] over every value of every sample (what the TFLite converter records);
//   percentile: [P(100 - p), P(p)] of all values, e.g. p = 99.99 ignores the rarest outliers so
//               they do not stretch the int8 grid of everything else.
#include <cstddef>
#include <vector>

#include "quantizer/tflite_names.hpp"
#include "quantizer/sample_set.hpp"

namespace tickinfer::quantizer {

enum class CalibrationMethod { MinMax, Percentile };

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::MinMax;
  double percentile = 99.99;  // percentile method: in (50, 100]
  // Recurrent state (LSTM) carries over from one calibration sample to the next, as in the TFLite
  // converter's calibration run; false: zeroed per sample, as each window runs in inference.
  bool carry_state = true;
};

// Observed range of a float activation. For an LSTM's cell_state variable tensor: [-m, m] with
// m = max |c| over every step (calibration_lstm.hpp).
struct TensorRange {
  float min = 0.0f, max = 0.0f;
  bool observed = false;  // false for constants and tensors the program never writes
};

// One sample set per program input (same order), all with the same count. Throws
// tickinfer::Error when the sets do not fit the program's inputs.
std::vector<TensorRange> calibrate(const Program& float_program, const std::vector<SampleSet>& inputs,
                                   const CalibrationOptions& options = {});

// Checks the sample sets against the program's float inputs (count and per-sample size).
void check_samples(const Program& program, const std::vector<SampleSet>& inputs, const char* what);

}  // namespace tickinfer::quantizer
