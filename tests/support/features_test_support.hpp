#pragma once
// Shared by the features_* tests: fixture paths, a float64 .npy reader for the reference
// arrays, and the tolerance rule the references are compared with.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "source_paths.hpp"

namespace tickinfer::features::test {

inline std::string fixture_dir() {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return std::string(env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures") + "/features";
}

struct F8Array {
  std::size_t rows = 0, cols = 0;
  std::vector<double> data;
  double at(std::size_t r, std::size_t c) const { return data[r * cols + c]; }
};

// Reads a 2-D '<f8' C-order .npy written by numpy.save (versions 1.0 and 2.0).
inline F8Array read_npy_f8(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string b = ss.str();
  if (b.size() < 12 || b.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error("not npy: " + path);
  std::size_t hlen, off;
  if (b[6] == 1) {
    hlen = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
    off = 10;
  } else {
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<std::size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    off = 12;
  }
  const std::string h = b.substr(off, hlen);
  if (h.find("'<f8'") == std::string::npos || h.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error("expected a C-order <f8 array: " + path);
  const auto p = h.find("'shape': (");
  F8Array a;
  std::sscanf(h.c_str() + p + 10, "%zu, %zu", &a.rows, &a.cols);
  a.data.resize(a.rows * a.cols);
  if (b.size() != off + hlen + a.data.size() * 8) throw std::runtime_error("size mismatch: " + path);
  std::memcpy(a.data.data(), b.data() + off + hlen, a.data.size() * 8);
  return a;
}

// Both NaN, or equal within `rel` relative to the larger magnitude (with an absolute floor `abs`
// for values that are zero in one implementation and a rounding residue in the other).
inline bool close(double a, double b, double rel, double abs) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + abs;
}

}  // namespace tickinfer::features::test
