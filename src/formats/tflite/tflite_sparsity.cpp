#include "formats/tflite/tflite_sparsity.hpp"

#include <cstring>

#include "tflite_generated.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

class Decoder {
 public:
  Decoder(const SparseLayout& layout, const std::vector<int>& shape, size_t esize, const std::string& where)
      : l_(layout), shape_(shape), esize_(esize), where_(where) {}

  std::vector<uint8_t> run(const uint8_t* values, size_t bytes) {
    check_orders();
    check_levels();
    if (bytes != leaves_ * esize_) {
      fail("the buffer holds " + std::to_string(bytes) + " bytes, but the metadata lists " + std::to_string(leaves_) +
           " values of " + std::to_string(esize_) + " bytes");
    }
    uint64_t elements = 1;
    for (int d : shape_) elements *= static_cast<uint64_t>(d);
    out_.assign(elements * esize_, 0);
    values_ = values;
    coords_.assign(l_.traversal_order.size(), 0);
    visit(0, 0);
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": sparsity: " + what); }

  // traversal_order: the n dense dimensions first (a permutation of 0..n-1), then the k block
  // dimensions (of n..n+k-1); block_map: k distinct dense dimensions, each split evenly.
  void check_orders() {
    const size_t n = shape_.size(), k = l_.block_map.size(), levels = l_.traversal_order.size();
    if (n == 0) fail("a sparse tensor needs rank 1 or more");
    if (k > n) fail(std::to_string(k) + " block dimensions for rank " + std::to_string(n));
    if (levels != n + k) {
      fail("traversal_order has " + std::to_string(levels) + " entries, but rank " + std::to_string(n) + " with " +
           std::to_string(k) + " block dimensions needs " + std::to_string(n + k));
    }
    if (l_.dims.size() != levels) {
      fail("dim_metadata has " + std::to_string(l_.dims.size()) + " entries for " + std::to_string(levels) + " traversal levels");
    }
    std::vector<bool> seen(levels, false);
    for (size_t i = 0; i < levels; ++i) {
      const int t = l_.traversal_order[i];
      const bool ok = i < n ? t >= 0 && static_cast<size_t>(t) < n : static_cast<size_t>(t) >= n && static_cast<size_t>(t) < levels;
      if (!ok || seen[static_cast<size_t>(t)]) {
        fail("traversal_order entry " + std::to_string(i) + " (" + std::to_string(t) +
             ") is not a permutation of the dense dimensions followed by the block dimensions");
      }
      seen[static_cast<size_t>(t)] = true;
    }
    sizes_.assign(levels, 0);
    for (size_t d = 0; d < n; ++d) sizes_[d] = shape_[d];
    block_.assign(k, 1);
    std::vector<bool> blocked(n, false);
    for (size_t j = 0; j < k; ++j) {
      const int d = l_.block_map[j];
      if (d < 0 || static_cast<size_t>(d) >= n || blocked[static_cast<size_t>(d)]) {
        fail("block_map entry " + std::to_string(j) + " (" + std::to_string(d) + ") is not a distinct dense dimension");
      }
      blocked[static_cast<size_t>(d)] = true;
      size_t level = 0;
      while (static_cast<size_t>(l_.traversal_order[level]) != n + j) ++level;
      const SparseDimension& bd = l_.dims[level];
      if (bd.csr || bd.dense_size <= 0 || shape_[static_cast<size_t>(d)] % bd.dense_size != 0) {
        fail("block dimension " + std::to_string(j) + " must be DENSE with a size that divides dimension " + std::to_string(d) +
             " (" + std::to_string(shape_[static_cast<size_t>(d)]) + ")");
      }
      block_[j] = bd.dense_size;
      sizes_[n + j] = bd.dense_size;
      sizes_[static_cast<size_t>(d)] = shape_[static_cast<size_t>(d)] / bd.dense_size;
    }
  }

  // Per level: DENSE sizes match the shape; CSR segments start at 0, never decrease, end at the
  // index count and have one entry per position of the level above; indices lie inside the
  // dimension and increase within each segment.
  void check_levels() {
    uint64_t positions = 1;
    for (size_t level = 0; level < l_.dims.size(); ++level) {
      const SparseDimension& dim = l_.dims[level];
      const int64_t size = sizes_[static_cast<size_t>(l_.traversal_order[level])];
      const std::string at = "level " + std::to_string(level) + " (dimension " + std::to_string(l_.traversal_order[level]) + ")";
      if (!dim.csr) {
        if (dim.dense_size != size) {
          fail(at + ": DENSE dense_size " + std::to_string(dim.dense_size) + " does not match the size " + std::to_string(size));
        }
        positions *= static_cast<uint64_t>(size);
        continue;
      }
      if (dim.segments.size() != positions + 1) {
        fail(at + ": array_segments has " + std::to_string(dim.segments.size()) + " entries, " + std::to_string(positions + 1) +
             " expected");
      }
      if (dim.segments.front() != 0) fail(at + ": array_segments starts at " + std::to_string(dim.segments.front()) + ", not 0");
      if (dim.segments.back() != static_cast<int64_t>(dim.indices.size())) {
        fail(at + ": array_segments ends at " + std::to_string(dim.segments.back()) + ", but array_indices has " +
             std::to_string(dim.indices.size()) + " entries");
      }
      // Monotone from 0 to the index count first, so every segment lies inside array_indices.
      for (size_t p = 0; p + 1 < dim.segments.size(); ++p) {
        if (dim.segments[p + 1] < dim.segments[p]) fail(at + ": array_segments decreases at entry " + std::to_string(p + 1));
      }
      for (size_t p = 0; p + 1 < dim.segments.size(); ++p) {
        const int64_t begin = dim.segments[p], end = dim.segments[p + 1];
        if (end - begin > size) fail(at + ": segment " + std::to_string(p) + " lists more indices than the dimension has");
        for (int64_t i = begin; i < end; ++i) {
          const int64_t x = dim.indices[static_cast<size_t>(i)];
          if (x < 0 || x >= size) {
            fail(at + ": array_indices[" + std::to_string(i) + "] = " + std::to_string(x) + " is outside the dimension of size " +
                 std::to_string(size));
          }
          if (i > begin && x <= dim.indices[static_cast<size_t>(i - 1)]) {
            fail(at + ": array_indices do not increase within segment " + std::to_string(p));
          }
        }
      }
      positions = dim.indices.size();
    }
    leaves_ = positions;
  }

  void visit(size_t level, uint64_t prev) {
    if (level == l_.dims.size()) return emit();
    const SparseDimension& dim = l_.dims[level];
    if (!dim.csr) {
      for (int64_t i = 0; i < dim.dense_size; ++i) {
        coords_[level] = i;
        visit(level + 1, prev * static_cast<uint64_t>(dim.dense_size) + static_cast<uint64_t>(i));
      }
      return;
    }
    for (int64_t p = dim.segments[prev]; p < dim.segments[prev + 1]; ++p) {
      coords_[level] = dim.indices[static_cast<size_t>(p)];
      visit(level + 1, static_cast<uint64_t>(p));
    }
  }

  void emit() {
    const size_t n = shape_.size();
    std::vector<int64_t> orig(n, 0);
    for (size_t i = 0; i < n; ++i) orig[static_cast<size_t>(l_.traversal_order[i])] = coords_[i];
    for (size_t i = n; i < coords_.size(); ++i) {
      const size_t j = static_cast<size_t>(l_.traversal_order[i]) - n;
      const size_t d = static_cast<size_t>(l_.block_map[j]);
      orig[d] = orig[d] * block_[j] + coords_[i];
    }
    uint64_t flat = 0;
    for (size_t d = 0; d < n; ++d) flat = flat * static_cast<uint64_t>(shape_[d]) + static_cast<uint64_t>(orig[d]);
    std::memcpy(out_.data() + flat * esize_, values_ + next_ * esize_, esize_);
    ++next_;
  }

  const SparseLayout& l_;
  const std::vector<int>& shape_;
  size_t esize_;
  const std::string& where_;
  std::vector<int64_t> sizes_;   // per expanded dimension (n outer, then k block)
  std::vector<int64_t> block_;   // per block dimension
  uint64_t leaves_ = 0, next_ = 0;
  std::vector<int64_t> coords_;  // per traversal level
  const uint8_t* values_ = nullptr;
  std::vector<uint8_t> out_;
};

template <class Vec>
void append_values(const Vec* v, std::vector<int64_t>& out) {
  if (v && v->values()) {
    for (auto x : *v->values()) out.push_back(static_cast<int64_t>(x));
  }
}

std::vector<int64_t> index_vector(tflite::SparseIndexVector type, const void* table, const std::string& what,
                                  const std::string& where) {
  std::vector<int64_t> out;
  switch (type) {
    case tflite::SparseIndexVector::Int32Vector: append_values(static_cast<const tflite::Int32Vector*>(table), out); break;
    case tflite::SparseIndexVector::Uint16Vector: append_values(static_cast<const tflite::Uint16Vector*>(table), out); break;
    case tflite::SparseIndexVector::Uint8Vector: append_values(static_cast<const tflite::Uint8Vector*>(table), out); break;
    default: throw Error(where + ": sparsity: a SPARSE_CSR level has no " + what + " (or one of an unknown index type)");
  }
  return out;
}

}  // namespace

std::vector<uint8_t> densify(const SparseLayout& layout, const std::vector<int>& shape, size_t esize, const uint8_t* values,
                             size_t bytes, const std::string& where) {
  return Decoder(layout, shape, esize, where).run(values, bytes);
}

SparseLayout read_sparsity(const tflite::SparsityParameters& s, const std::string& where) {
  SparseLayout l;
  if (s.traversal_order()) l.traversal_order.assign(s.traversal_order()->begin(), s.traversal_order()->end());
  if (s.block_map()) l.block_map.assign(s.block_map()->begin(), s.block_map()->end());
  if (!s.dim_metadata()) throw Error(where + ": sparsity: no dim_metadata");
  for (const tflite::DimensionMetadata* m : *s.dim_metadata()) {
    SparseDimension d;
    if (m->format() == tflite::DimensionType::DENSE) {
      d.dense_size = m->dense_size();
    } else if (m->format() == tflite::DimensionType::SPARSE_CSR) {
      d.csr = true;
      d.segments = index_vector(m->array_segments_type(), m->array_segments(), "array_segments", where);
      d.indices = index_vector(m->array_indices_type(), m->array_indices(), "array_indices", where);
    } else {
      throw Error(where + ": sparsity: dimension format " + std::to_string(static_cast<int>(m->format())) + " is unknown");
    }
    l.dims.push_back(std::move(d));
  }
  return l;
}

}  // namespace tickinfer::formats
