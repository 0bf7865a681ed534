#pragma once
// N samples of one model input, one flattened sample after another: calibration and validation
// data for the quantizer (read from files by formats/sample_file.hpp).
#include <cstddef>
#include <vector>

namespace tickinfer::quantizer {

struct SampleSet {
  size_t count = 0;          // N
  size_t per_sample = 0;     // elements of one sample
  std::vector<float> values; // count * per_sample, sample-major
  const float* sample(size_t i) const { return values.data() + i * per_sample; }
};

}  // namespace tickinfer::quantizer
