// Calibration / validation sample sets from .npy and .csv files.
#include "formats/sample_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "formats/csv.hpp"
#include "formats/npy.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

bool ends_with(std::string s, std::string_view suffix) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

SampleSet samples_from_array(const std::vector<int64_t>& array_shape, std::vector<float> data,
                             const std::vector<int>& sample_shape, std::string_view source) {
  const std::vector<int64_t> want(sample_shape.begin(), sample_shape.end());
  int64_t elems = 1;
  for (int d : sample_shape) elems *= d;
  const std::vector<int64_t> rest = array_shape.empty()
                                        ? std::vector<int64_t>{}
                                        : std::vector<int64_t>(array_shape.begin() + 1, array_shape.end());
  const bool ok = !array_shape.empty() && (rest == want || (rest.size() == 1 && rest[0] == elems) ||
                                           (rest.empty() && elems == 1));
  if (!ok) {
    std::string e = "[N";
    for (int64_t d : want) e += ", " + std::to_string(d);
    e += "]";
    throw Error(std::string(source) + ": samples must be shaped " + e + " or [N, " + std::to_string(elems) +
                "] (one flattened sample per row), got " + shape_text(array_shape));
  }
  if (array_shape[0] == 0) throw Error(std::string(source) + ": no samples");
  for (size_t i = 0; i < data.size(); ++i) {
    if (!std::isfinite(data[i])) {
      throw Error(std::string(source) + ": sample " + std::to_string(i / static_cast<size_t>(elems)) + " value " +
                  std::to_string(i % static_cast<size_t>(elems)) + " is not finite");
    }
  }
  SampleSet s;
  s.count = static_cast<size_t>(array_shape[0]);
  s.per_sample = static_cast<size_t>(elems);
  s.values = std::move(data);
  return s;
}

SampleSet read_samples(const std::string& path, const std::vector<int>& sample_shape) {
  if (ends_with(path, ".npy")) {
    NpyArray a = read_npy(path);
    return samples_from_array(a.shape, std::move(a.data), sample_shape, path);
  }
  if (ends_with(path, ".csv")) {
    CsvTable t = read_csv(path);
    return samples_from_array({static_cast<int64_t>(t.rows), static_cast<int64_t>(t.cols)}, std::move(t.values),
                              sample_shape, path);
  }
  throw Error(path + ": sample files must be .npy or .csv");
}

}  // namespace tickinfer::formats
