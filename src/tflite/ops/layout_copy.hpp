#pragma once
// The layout ops (CONCATENATION, SPLIT, PACK, UNPACK, PAD, STRIDED_SLICE, TRANSPOSE, GATHER,
// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND) only move elements. Prepare works out, for every
// element of every output, which input element it copies (or that it is padding); LayoutPlan
// turns that map into runs of consecutive elements, so eval is a few memcpy/memset calls
// (one per run) with no index arithmetic. An int8 input whose quantization differs from the
// output's is copied through a 256-entry requantization table instead.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tflite/kernels/lut.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {

struct CopyRun {
  int32_t src = -1;  // input slot, -1: padding
  int32_t dst = 0;   // output slot
  int64_t src_off = 0, dst_off = 0, len = 0;  // in elements
};

class LayoutPlan {
 public:
  LayoutPlan(std::vector<int> inputs, std::vector<int> outputs, size_t elem_bytes)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)), elem_(elem_bytes) {}
  // Output `dst` element `dst_off` copies input `src` element `src_off` (src -1: padding).
  // Calls in increasing dst_off order per output merge into runs.
  void add(int32_t src, int64_t src_off, int32_t dst, int64_t dst_off) {
    if (!runs_.empty()) {
      CopyRun& r = runs_.back();
      if (r.src == src && r.dst == dst && r.dst_off + r.len == dst_off && (src < 0 || r.src_off + r.len == src_off)) {
        ++r.len;
        return;
      }
    }
    runs_.push_back({src, dst, src_off, dst_off, 1});
  }
  void set_fill(const void* value) { std::memcpy(fill_.data(), value, elem_); }
  void set_lut(size_t input_slot, const kernels::LutS8& lut) {
    luts_.resize(inputs_.size());
    has_lut_.resize(inputs_.size(), false);
    luts_[input_slot] = lut;
    has_lut_[input_slot] = true;
  }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  size_t elem_bytes() const { return elem_; }
  const std::vector<CopyRun>& runs() const { return runs_; }
  const std::array<uint8_t, 8>& fill() const { return fill_; }
  bool has_lut(int32_t slot) const { return slot >= 0 && static_cast<size_t>(slot) < has_lut_.size() && has_lut_[slot]; }
  const kernels::LutS8& lut(int32_t slot) const { return luts_[static_cast<size_t>(slot)]; }

 private:
  std::vector<int> inputs_, outputs_;
  size_t elem_;
  std::vector<CopyRun> runs_;
  std::array<uint8_t, 8> fill_{};
  std::vector<kernels::LutS8> luts_;
  std::vector<bool> has_lut_;
};

class LayoutCopy final : public PreparedOp {
 public:
  LayoutCopy(LayoutPlan plan, std::string what) : plan_(std::move(plan)), what_(std::move(what)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const size_t e = plan_.elem_bytes();
    for (const CopyRun& r : plan_.runs()) {
      auto* dst = static_cast<uint8_t*>(mem.addr[static_cast<size_t>(plan_.outputs()[static_cast<size_t>(r.dst)])]) +
                  r.dst_off * static_cast<int64_t>(e);
      if (r.src < 0) {
        if (e == 1) {
          std::memset(dst, plan_.fill()[0], static_cast<size_t>(r.len));
        } else {
          // One element, then the filled prefix doubled: a few copies, not one call per element
          // (a float PAD of 16 rows x 32 channels took 2.5 us as 512 memcpy calls).
          std::memcpy(dst, plan_.fill().data(), e);
          const size_t total = static_cast<size_t>(r.len) * e;
          for (size_t done = e; done < total;) {
            const size_t n = std::min(done, total - done);
            std::memcpy(dst + done, dst, n);
            done += n;
          }
        }
        continue;
      }
      const auto* src = static_cast<const uint8_t*>(mem.addr[static_cast<size_t>(plan_.inputs()[static_cast<size_t>(r.src)])]) +
                        r.src_off * static_cast<int64_t>(e);
      if (plan_.has_lut(r.src)) {
        kernels::apply_lut_s8(plan_.lut(r.src), reinterpret_cast<const int8_t*>(src), reinterpret_cast<int8_t*>(dst), r.len);
      } else {
        std::memmove(dst, src, static_cast<size_t>(r.len) * e);
      }
    }
  }
  std::string describe() const override { return what_ + " (" + std::to_string(plan_.runs().size()) + " copies)"; }
  // One Gather per output, element by element from the runs (int8 only).
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if (plan_.elem_bytes() != 1) return false;
    const size_t n_in = plan_.inputs().size();
    bool any_table = false;
    for (size_t k = 0; k < n_in; ++k) any_table = any_table || plan_.has_lut(static_cast<int32_t>(k));
    std::vector<IntegerForm> out(plan_.outputs().size());
    for (size_t d = 0; d < out.size(); ++d) {
      out[d].kind = IntegerKind::Gather;
      out[d].inputs = plan_.inputs();
      out[d].output = plan_.outputs()[d];
      out[d].fill = static_cast<int8_t>(plan_.fill()[0]);
      if (!any_table) continue;
      out[d].input_tables.resize(n_in);
      for (size_t k = 0; k < n_in; ++k)
        for (int v = 0; v < 256; ++v)
          out[d].input_tables[k][static_cast<size_t>(v)] =
              plan_.has_lut(static_cast<int32_t>(k)) ? plan_.lut(static_cast<int32_t>(k)).table[v] : static_cast<int8_t>(v);
    }
    for (const CopyRun& r : plan_.runs()) {
      IntegerForm& f = out[static_cast<size_t>(r.dst)];
      const size_t end = static_cast<size_t>(r.dst_off + r.len);
      if (f.source_input.size() < end) f.source_input.resize(end, -1), f.source_element.resize(end, 0);
      for (int64_t k = 0; k < r.len; ++k) {
        f.source_input[static_cast<size_t>(r.dst_off + k)] = r.src;
        f.source_element[static_cast<size_t>(r.dst_off + k)] = static_cast<int32_t>(r.src < 0 ? 0 : r.src_off + k);
      }
    }
    for (IntegerForm& f : out) {
      f.count = static_cast<int64_t>(f.source_input.size());
      forms->push_back(std::move(f));
    }
    return true;
  }

 private:
  LayoutPlan plan_;
  std::string what_;
};

// Row-major strides of a shape.
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Advances a row-major position within `shape` (an odometer); returns false after the last one.
inline bool next_position(std::vector<int>& pos, const Shape& shape) {
  for (size_t d = pos.size(); d-- > 0;) {
    if (++pos[d] < shape[d]) return true;
    pos[d] = 0;
  }
  return false;
}

// Element size of the types the layout ops move; fails for others.
inline size_t layout_elem_bytes(const PrepareContext& ctx, const Tensor& t) {
  require_type(ctx, t, "input", {DType::F32, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::Bool,
                                 DType::F16, DType::BF16});
  return dtype_size(t.type);
}

// Layout families (one file each).
std::unique_ptr<PreparedOp> prepare_concat_split(const PrepareContext& ctx);  // Concatenation, Split, Pack, Unpack
std::unique_ptr<PreparedOp> prepare_index_map(const PrepareContext& ctx);     // Pad, StridedSlice, Transpose, ReverseV2, Gather
std::unique_ptr<PreparedOp> prepare_space_batch(const PrepareContext& ctx);   // SpaceToBatchNd, BatchToSpaceNd

}  // namespace tickinfer::tfl::ops
