#pragma once
// NumPy .npy files holding float arrays: what `predict` reads and writes, and what the fixture
// script produces for expected outputs.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, dtype '<f4' (little-endian float32),
// '<f8' (float64, narrowed to float32 on read: values beyond float range become +-inf) or the
// integers '|i1', '<i2', '<i4' (quantized model inputs; int32 beyond 2^24 loses precision),
// fortran_order False, and a C-order shape of any rank (rank 0 is one element). Everything else
// is refused with tickinfer::Error naming the source and the problem: bad magic, unsupported
// version or dtype (quoted), Fortran order, a malformed header dict, a shape whose size
// overflows, data shorter or longer than the shape says. The parser checks sizes before it
// allocates, so hostile input cannot make it crash or allocate more than the input's size.
//
// Writing always produces version 1.0, '<f4', C order, header padded to 64 bytes as NumPy does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::formats {

struct NpyArray {
  std::vector<int64_t> shape;  // C order; empty for a 0-d array
  std::vector<float> data;     // product(shape) values, row-major
  std::string dtype;           // the file's descr, e.g. "<f4" or "|i1"
};

// Parses a whole .npy file held in memory. `source` names it in error messages.
NpyArray parse_npy(const void* bytes, size_t size, std::string_view source = "<memory>");
// Reads and parses `path`. Throws tickinfer::Error (naming the path) if it cannot be read.
NpyArray read_npy(const std::string& path);

// The bytes of a version 1.0 '<f4' file holding `data` in `shape`. Throws tickinfer::Error if
// data.size() != product(shape) or a dimension is negative.
std::string serialize_npy(const std::vector<int64_t>& shape, const std::vector<float>& data);
// Writes serialize_npy(shape, data) to `path`. Throws tickinfer::Error naming the path on failure.
void write_npy(const std::string& path, const std::vector<int64_t>& shape,
               const std::vector<float>& data);

}  // namespace tickinfer::formats
