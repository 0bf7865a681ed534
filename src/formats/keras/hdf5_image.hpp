#pragma once
// Read-only access to an HDF5 file held in memory (the `model.weights.h5` entry of a .keras
// archive, or a whole legacy .h5 model), through libhdf5's core driver: no temporary files.
//
// libhdf5 is not thread-safe, so an Hdf5Image holds one process-wide mutex from construction to
// destruction: keep it short-lived (load time only). Every libhdf5 failure, and every size that
// does not fit the bounds below, becomes tickinfer::Error naming the label and the object path.
// Automatic HDF5 error printing is switched off.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/graph.hpp"

namespace tickinfer::formats {

class Hdf5Image {
 public:
  // Copies nothing itself (libhdf5 copies `data`); `data` must stay valid only during the call.
  // Throws Error "<label>: not a readable HDF5 file" when libhdf5 rejects the image.
  Hdf5Image(const void* data, size_t size, std::string label);
  ~Hdf5Image();
  Hdf5Image(const Hdf5Image&) = delete;
  Hdf5Image& operator=(const Hdf5Image&) = delete;

  const std::string& label() const { return label_; }

  // True if `path` ("a/b/c", relative to the root) names a group or dataset reached only through
  // hard links (soft and external links are treated as absent: an external link would make
  // libhdf5 open another file).
  bool has_object(const std::string& path) const;

  // A string attribute of the object at `path` ("" = root), as a list: scalar -> 1 element,
  // 1-D -> its elements. Fixed-length and variable-length strings are both accepted; an empty
  // array of any type yields an empty list. Returns nullopt if the attribute does not exist.
  std::optional<std::vector<std::string>> string_attribute(const std::string& path,
                                                           const std::string& name) const;

  // Reads a float32 dataset. Throws "<ctx>: weight '<path>' has dtype float64; only float32 is
  // supported" for other types, and on shapes above the bounds (rank <= 8, >= 1 per dimension,
  // total across this image <= 1 GiB) or storage smaller than the declared shape.
  Weight read_float_dataset(const std::string& path, const std::string& ctx);

 private:
  std::unique_lock<std::mutex> lock_;  // declared first: released after every handle is closed
  std::string label_;
  size_t image_size_ = 0;
  int64_t file_ = -1;                  // hid_t of the open file
  int64_t values_read_ = 0;            // float32 values read so far (bounded to 1 GiB)
};

}  // namespace tickinfer::formats
