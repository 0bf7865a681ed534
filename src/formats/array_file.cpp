#include "formats/array_file.hpp"

#include <algorithm>
#include <cctype>

#include "formats/csv.hpp"
#include "formats/npy.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {
bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}
}  // namespace

ArrayFileKind array_file_kind(const std::string& path) {
  if (ends_with_ci(path, ".npy")) return ArrayFileKind::Npy;
  if (ends_with_ci(path, ".csv")) return ArrayFileKind::Csv;
  throw Error("'" + path + "': unsupported file type (use a .npy or .csv file)");
}

HostArray load_array(const std::string& path) {
  HostArray out;
  if (array_file_kind(path) == ArrayFileKind::Npy) {
    auto npy = formats::read_npy(path);
    out.shape = std::move(npy.shape);
    out.data = std::move(npy.data);
  } else {
    auto csv = formats::read_csv(path);
    out.shape = {static_cast<int64_t>(csv.rows), static_cast<int64_t>(csv.cols)};
    out.data = std::move(csv.values);
  }
  return out;
}

void save_array(const std::string& path, const HostArray& array) {
  if (array_file_kind(path) == ArrayFileKind::Npy) {
    formats::write_npy(path, array.shape, array.data);
    return;
  }
  const size_t rows = array.shape.empty() ? 1 : static_cast<size_t>(array.shape[0]);
  const size_t cols = rows == 0 ? 0 : array.data.size() / rows;
  formats::write_csv(path, rows, cols, array.data);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] < 0 ? std::string("None") : std::to_string(shape[i]);  // variable length
  }
  return s + "]";
}

}  // namespace tickinfer::formats
