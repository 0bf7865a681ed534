#pragma once
// TFLite sparse tensors (Tensor.sparsity, written by the converter's EXPERIMENTAL_SPARSITY
// optimization for pruned constant weights) decoded to their dense form at load, so every op
// sees ordinary constant data; the loader also folds DENSIFY of such a constant away
// (formats/tflite/tflite_file.cpp).
//
// The encoding (schema.fbs SparsityParameters): the dense tensor of rank n, with k of its
// dimensions split into blocks (block_map[j] = the dense dimension that block dimension n + j
// splits), is traversed in traversal_order (n + k entries: the n outer dimensions first, then the
// k block dimensions). dim_metadata has one entry per traversal level: DENSE (all dense_size
// coordinates) or SPARSE_CSR (for each position of the levels before, the coordinates
// array_indices[array_segments[p] .. array_segments[p+1]) ). The buffer holds the values of the
// leaves, in traversal order; everything not listed is 0 (raw zero bytes, as TFLite's own
// densify writes them).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tflite {
struct SparsityParameters;
}

namespace tickinfer::formats {

struct SparseDimension {
  bool csr = false;                       // SPARSE_CSR; else DENSE
  int64_t dense_size = 0;                 // DENSE
  std::vector<int64_t> segments, indices;  // SPARSE_CSR
};

struct SparseLayout {
  std::vector<int> traversal_order, block_map;
  std::vector<SparseDimension> dims;  // one per traversal level
};

// The dense row-major bytes of a tensor of `shape` and element size `esize` whose kept values
// are `values` (`bytes` long). Every count, segment and index is checked against the shape
// before anything is written; a malformed layout throws Error "<where>: sparsity: <problem>".
std::vector<uint8_t> densify(const SparseLayout& layout, const std::vector<int>& shape, size_t esize,
                             const uint8_t* values, size_t bytes, const std::string& where);

// The flatbuffer table as a SparseLayout; throws Error "<where>: sparsity: <problem>" for an
// unknown dimension format or a SPARSE_CSR level without its segment or index vector.
SparseLayout read_sparsity(const tflite::SparsityParameters& sparsity, const std::string& where);

}  // namespace tickinfer::formats
