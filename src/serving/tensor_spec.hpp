#pragma once
// A served tensor's name and per-row shape: what requests are checked against and what the
// request log records of each input and output.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::serving {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;  // without the batch dimension
  size_t size = 1;             // product of shape
};

}  // namespace tickinfer::serving
