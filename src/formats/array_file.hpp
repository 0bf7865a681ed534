#pragma once
// Float arrays on disk for `predict`: .npy or .csv, chosen by the file extension.
// A .csv file reads as a 2-D array [rows, columns] (a header row, if any, is skipped); writing an
// array of rank > 2 to .csv flattens everything after the first axis into columns, and rank 1
// becomes one column. Errors are tickinfer::Error naming the file.
#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::formats {

struct HostArray {
  std::vector<int64_t> shape;  // row-major; shape[0] is the row (sample) axis
  std::vector<float> data;
};

enum class ArrayFileKind { Npy, Csv };

// The kind for `path` from its extension (case-insensitive); Error for anything else.
ArrayFileKind array_file_kind(const std::string& path);
HostArray load_array(const std::string& path);
void save_array(const std::string& path, const HostArray& array);

std::string shape_text(const std::vector<int64_t>& shape);  // "[8, 32, 10]"

}  // namespace tickinfer::formats
