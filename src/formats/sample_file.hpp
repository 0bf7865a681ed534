#pragma once
// Sample sets for calibration and validation (`tickinfer quantize --calibration/--validation`):
// N samples of one model input, from a .npy file shaped [N, ...sample shape] or [N, elements],
// or a .csv file with one row per sample holding the sample's values flattened (row-major). A
// CSV header row is allowed and skipped. Non-finite values are refused (a NaN in calibration
// would poison every observed range). Errors are tickinfer::Error naming the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quantizer/sample_set.hpp"

namespace tickinfer::formats {

using quantizer::SampleSet;

// `array_shape`/`data`: an array as read from a file; `sample_shape`: one sample without the
// batch axis. Accepts [N, ...sample_shape] and [N, elements].
SampleSet samples_from_array(const std::vector<int64_t>& array_shape, std::vector<float> data,
                             const std::vector<int>& sample_shape, std::string_view source);

// Reads `path` (.npy or .csv by extension, case-insensitive).
SampleSet read_samples(const std::string& path, const std::vector<int>& sample_shape);

}  // namespace tickinfer::formats
