// Ops whose operands are known only at eval, as the converter emits them inside recurrent loops
// (TFLite comparisons.cc, logical.cc, shape.cc, slice.cc, gather.cc):
//  LESS (float, int32, int64; broadcasting) and LOGICAL_AND -> bool;
//  SELECT_V2 (select.cc: cond ? x : y, the three broadcast to the output; float, int8), which the
//    converter writes for an attention mask;
//  SHAPE -> int32 / int64 (the interpreter folds it at prepare: every shape here is static);
//  SLICE with a runtime begin (the loop counter) and the output's static extent;
//  GATHER with runtime indices (x_t = x[t]). Shapes are static, so only index values vary: a
//    begin or an index outside the input is clamped into it (TFLite fails the invoke instead;
//    the converter's loops never produce one).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tflite/ops/broadcast.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace {

constexpr size_t kMaxRank = 8;

template <class T, class F>
class CompareOp final : public PreparedOp {
 public:
  CompareOp(int a, int b, int out, BroadcastPlan plan, std::string what)
      : a_(a), b_(b), out_(out), plan_(std::move(plan)), what_(std::move(what)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<const T>(a_);
    const T* z = mem.at<const T>(b_);
    bool* y = mem.at<bool>(out_);
    const F f{};
    for (int64_t i = 0; i < plan_.count; ++i) {
      y[i] = plan_.same ? f(x[i], z[i]) : f(x[plan_.index_a[static_cast<size_t>(i)]], z[plan_.index_b[static_cast<size_t>(i)]]);
    }
  }
  std::string describe() const override { return what_; }

 private:
  int a_, b_, out_;
  BroadcastPlan plan_;
  std::string what_;
};

struct LessF {
  template <class T>
  bool operator()(T a, T b) const noexcept { return a < b; }
};
// Bool tensors are read as bytes, any nonzero byte true (as TFLite's kernels treat them): a
// constant from a file may hold other byte values than 0 and 1, which are not valid `bool`s.
struct AndF {
  bool operator()(uint8_t a, uint8_t b) const noexcept { return a != 0 && b != 0; }
};

std::unique_ptr<PreparedOp> compare(const PrepareContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, out, "output", {DType::Bool});
  require_same_type(ctx, a, b);
  BroadcastPlan plan = plan_broadcast(ctx, a, b, out);
  const int ia = ctx.input_index(0), ib = ctx.input_index(1), io = ctx.output_index(0);
  if (ctx.op.code == OpCode::LogicalAnd) {
    require_type(ctx, a, "input", {DType::Bool});
    return std::make_unique<CompareOp<uint8_t, AndF>>(ia, ib, io, std::move(plan), "logical and");
  }
  require_type(ctx, a, "input", {DType::F32, DType::I32, DType::I64});
  if (!a.quant.empty() || !b.quant.empty()) ctx.fail("quantized comparisons are not supported");
  switch (a.type) {
    case DType::F32: return std::make_unique<CompareOp<float, LessF>>(ia, ib, io, std::move(plan), "float less");
    case DType::I32: return std::make_unique<CompareOp<int32_t, LessF>>(ia, ib, io, std::move(plan), "int32 less");
    default: return std::make_unique<CompareOp<int64_t, LessF>>(ia, ib, io, std::move(plan), "int64 less");
  }
}

// Source element of each output element for one operand: the broadcast plan's index map, or
// the identity when the operand has the output's shape.
std::vector<int32_t> source_index(const BroadcastPlan& plan, bool first) {
  if (!plan.same) return first ? plan.index_a : plan.index_b;
  std::vector<int32_t> id(static_cast<size_t>(plan.count));
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<int32_t>(i);
  return id;
}

// TFLite's select copies the chosen element's raw value: int8 operands are not requantized to
// the output's scale (select.cc; the converter gives x, y and the output one quantization).
template <class T>
class SelectOp final : public PreparedOp {
 public:
  SelectOp(int cond, int x, int y, int out, std::vector<int32_t> ic, std::vector<int32_t> ix, std::vector<int32_t> iy)
      : cond_(cond), x_(x), y_(y), out_(out), ic_(std::move(ic)), ix_(std::move(ix)), iy_(std::move(iy)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const uint8_t* c = mem.at<const uint8_t>(cond_);  // bytes, nonzero = true (see AndF)
    const T* x = mem.at<const T>(x_);
    const T* y = mem.at<const T>(y_);
    T* o = mem.at<T>(out_);
    for (size_t i = 0; i < ic_.size(); ++i) o[i] = c[ic_[i]] != 0 ? x[ix_[i]] : y[iy_[i]];
  }
  std::string describe() const override { return sizeof(T) == 1 ? "int8 select" : "float select"; }

 private:
  int cond_, x_, y_, out_;
  std::vector<int32_t> ic_, ix_, iy_;
};

// The form a causal or span mask takes (Keras MultiHeadAttention's SELECT_V2 of a constant mask,
// the scores, and one fill value): the condition expanded per output element at prepare into a
// whole-element bit mask, x read in place, y one value or read in place, and the choice a bitwise
// select, which vectorizes (the index-mapped loop above branched per element: 2 ns each on
// TransLOB's 100 x 100 scores). The raw values copied, as above.
template <class T>
class SelectConstantMask final : public PreparedOp {
  using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, uint32_t>;
  static_assert(sizeof(Bits) == sizeof(T));

 public:
  SelectConstantMask(int x, int y, int out, std::vector<Bits> mask, bool y_single)
      : x_(x), y_(y), out_(out), mask_(std::move(mask)), y_single_(y_single) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<const T>(x_);
    const T* y = mem.at<const T>(y_);
    T* o = mem.at<T>(out_);
    const size_t n = mask_.size();
    const Bits* m = mask_.data();
    if (y_single_) {
      Bits fill;
      std::memcpy(&fill, y, sizeof(T));
      for (size_t i = 0; i < n; ++i) {
        Bits xb;
        std::memcpy(&xb, x + i, sizeof(T));
        const Bits r = static_cast<Bits>((xb & m[i]) | (fill & static_cast<Bits>(~m[i])));
        std::memcpy(o + i, &r, sizeof(T));
      }
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      Bits xb, yb;
      std::memcpy(&xb, x + i, sizeof(T));
      std::memcpy(&yb, y + i, sizeof(T));
      const Bits r = static_cast<Bits>((xb & m[i]) | (yb & static_cast<Bits>(~m[i])));
      std::memcpy(o + i, &r, sizeof(T));
    }
  }
  std::string describe() const override {
    return std::string(sizeof(T) == 1 ? "int8" : "float") + " select, constant condition as a bit mask";
  }

 private:
  int x_, y_, out_;
  std::vector<Bits> mask_;
  bool y_single_;
};

bool is_identity(const std::vector<int32_t>& index) {
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] != static_cast<int32_t>(i)) return false;
  }
  return true;
}

template <class T>
std::unique_ptr<PreparedOp> select_of(const PrepareContext& ctx, const BroadcastPlan& cx, const BroadcastPlan& xy) {
  const Tensor& cond = ctx.input(0);
  const int c = ctx.input_index(0), ix = ctx.input_index(1), iy = ctx.input_index(2), o = ctx.output_index(0);
  std::vector<int32_t> ic = source_index(cx, true), ixs = source_index(xy, true), iys = source_index(xy, false);
  const bool y_single = num_elements(ctx.input(2)) == 1;
  if (cond.is_constant() && is_identity(ixs) && (y_single || is_identity(iys))) {
    using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, uint32_t>;
    const uint8_t* cv = const_data<uint8_t>(cond);
    std::vector<Bits> mask(ic.size());
    for (size_t i = 0; i < ic.size(); ++i) mask[i] = cv[ic[i]] != 0 ? static_cast<Bits>(~Bits{0}) : Bits{0};
    return std::make_unique<SelectConstantMask<T>>(ix, iy, o, std::move(mask), y_single);
  }
  return std::make_unique<SelectOp<T>>(c, ix, iy, o, std::move(ic), std::move(ixs), std::move(iys));
}

std::unique_ptr<PreparedOp> select(const PrepareContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  const Tensor& out = ctx.output(0);
  require_type(ctx, cond, "condition", {DType::Bool});
  require_type(ctx, x, "input", {DType::F32, DType::I8});
  require_same_type(ctx, x, y);
  require_type(ctx, out, "output", {x.type});
  const BroadcastPlan cx = plan_broadcast(ctx, cond, x, out), xy = plan_broadcast(ctx, x, y, out);
  if (x.type == DType::I8) return select_of<int8_t>(ctx, cx, xy);
  return select_of<float>(ctx, cx, xy);
}

class ShapeOp final : public PreparedOp {
 public:
  ShapeOp(int out, std::vector<uint8_t> bytes) : out_(out), bytes_(std::move(bytes)) {}
  void eval(const TensorMemory& mem) noexcept override { std::memcpy(mem.addr[static_cast<size_t>(out_)], bytes_.data(), bytes_.size()); }
  std::string describe() const override { return "shape"; }

 private:
  int out_;
  std::vector<uint8_t> bytes_;
};

std::unique_ptr<PreparedOp> shape(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_type(ctx, out, "output", {DType::I32, DType::I64});
  if (out.type != ctx.op.options.out_type) ctx.fail("output type does not match out_type");
  if (require_static(ctx, out) != static_cast<int64_t>(in.shape.size())) {
    ctx.fail("output '" + out.name + "' must hold " + std::to_string(in.shape.size()) + " values");
  }
  std::vector<uint8_t> bytes(in.shape.size() * dtype_size(out.type));
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (out.type == DType::I32) {
      const int32_t v = in.shape[d];
      std::memcpy(bytes.data() + 4 * d, &v, 4);
    } else {
      const int64_t v = in.shape[d];
      std::memcpy(bytes.data() + 8 * d, &v, 8);
    }
  }
  return std::make_unique<ShapeOp>(ctx.output_index(0), std::move(bytes));
}

int64_t read_index(const void* p, bool wide, size_t i) noexcept {
  if (wide) return static_cast<const int64_t*>(p)[i];
  return static_cast<const int32_t*>(p)[i];
}

// SLICE: out[p] = in[begin + p] over the output's extent, begin read at eval.
class SliceOp final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    const auto* x = static_cast<const uint8_t*>(mem.addr[static_cast<size_t>(in_)]);
    auto* y = static_cast<uint8_t*>(mem.addr[static_cast<size_t>(out_)]);
    const void* b = mem.addr[static_cast<size_t>(begin_)];
    int64_t base = 0;
    for (size_t d = 0; d < rank_; ++d) {
      const int64_t v = std::clamp<int64_t>(read_index(b, wide_, d), 0, in_dim_[d] - extent_[d]);
      base += v * in_stride_[d];
    }
    // Odometer over every axis but the last; the last is one contiguous run.
    int64_t pos[kMaxRank] = {};
    const size_t run = static_cast<size_t>(extent_[rank_ - 1]) * elem_;
    for (int64_t r = 0; r < rows_; ++r) {
      int64_t src = base;
      for (size_t d = 0; d + 1 < rank_; ++d) src += pos[d] * in_stride_[d];
      std::memcpy(y + r * static_cast<int64_t>(run), x + src * static_cast<int64_t>(elem_), run);
      for (size_t d = rank_ - 1; d-- > 0;) {
        if (++pos[d] < extent_[d]) break;
        pos[d] = 0;
      }
    }
  }
  std::string describe() const override { return "slice (runtime begin)"; }

  int in_ = 0, begin_ = 0, out_ = 0;
  bool wide_ = false;
  size_t rank_ = 0, elem_ = 0;
  int64_t rows_ = 0;
  int64_t in_dim_[kMaxRank] = {}, extent_[kMaxRank] = {}, in_stride_[kMaxRank] = {};
};

std::unique_ptr<PreparedOp> slice(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& begin = ctx.input(1);
  const Tensor& size = ctx.input(2);
  const Tensor& out = ctx.output(0);
  require_same_type(ctx, in, out);
  require_type(ctx, begin, "begin", {DType::I32, DType::I64});
  require_static(ctx, in);
  const size_t rank = in.shape.size();
  if (rank == 0 || rank > kMaxRank || out.shape.size() != rank) ctx.fail("input and output must have the same rank, 1 to 8");
  if (require_static(ctx, begin) != static_cast<int64_t>(rank)) ctx.fail("begin must hold one value per axis");
  auto op = std::make_unique<SliceOp>();
  std::vector<int64_t> sizes;
  if (size.is_constant()) sizes = const_ints(ctx, size, "size");
  if (size.is_constant() && sizes.size() != rank) ctx.fail("size must hold one value per axis");
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (out.shape[d] > in.shape[d]) ctx.fail("output " + shape_str(out.shape) + " is larger than input " + shape_str(in.shape));
    if (!sizes.empty() && sizes[d] != -1 && sizes[d] != out.shape[d]) ctx.fail("size does not match the output shape");
    op->in_dim_[d] = in.shape[d];
    op->extent_[d] = out.shape[d];
    op->in_stride_[d] = stride;
    stride *= in.shape[d];
  }
  op->rows_ = 1;
  for (size_t d = 0; d + 1 < rank; ++d) op->rows_ *= out.shape[d];
  if (element_count(out.shape) == 0) op->rows_ = 0;
  op->in_ = ctx.input_index(0);
  op->begin_ = ctx.input_index(1);
  op->out_ = ctx.output_index(0);
  op->wide_ = begin.type == DType::I64;
  op->rank_ = rank;
  op->elem_ = dtype_size(in.type);
  return op;
}

class GatherOp final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    const auto* x = static_cast<const uint8_t*>(mem.addr[static_cast<size_t>(params_)]);
    auto* y = static_cast<uint8_t*>(mem.addr[static_cast<size_t>(out_)]);
    const void* idx = mem.addr[static_cast<size_t>(indices_)];
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t j = 0; j < count_; ++j) {
        const int64_t i = std::clamp<int64_t>(read_index(idx, wide_, static_cast<size_t>(j)), 0, dim_ - 1);
        std::memcpy(y, x + (o * dim_ + i) * block_, static_cast<size_t>(block_));
        y += block_;
      }
    }
  }
  std::string describe() const override { return "gather (runtime indices)"; }

  int params_ = 0, indices_ = 0, out_ = 0;
  bool wide_ = false;
  int64_t outer_ = 0, count_ = 0, dim_ = 0, block_ = 0;  // block_ in bytes
};

std::unique_ptr<PreparedOp> gather(const PrepareContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_same_type(ctx, params, out);
  if (params.quant.scale != out.quant.scale || params.quant.zero_point != out.quant.zero_point) {
    ctx.fail("params and output must have the same quantization parameters");
  }
  require_type(ctx, indices, "indices", {DType::I32, DType::I64});
  require_static(ctx, params);
  const int rank = static_cast<int>(params.shape.size());
  const int axis = ctx.op.options.axis < 0 ? ctx.op.options.axis + rank : ctx.op.options.axis;
  if (axis < 0 || axis >= rank) ctx.fail("axis is out of range");
  auto op = std::make_unique<GatherOp>();
  op->dim_ = params.shape[static_cast<size_t>(axis)];
  if (op->dim_ == 0) ctx.fail("params has no elements along the axis");
  op->outer_ = 1;
  for (int d = 0; d < axis; ++d) op->outer_ *= params.shape[static_cast<size_t>(d)];
  int64_t inner = 1;
  for (int d = axis + 1; d < rank; ++d) inner *= params.shape[static_cast<size_t>(d)];
  op->count_ = require_static(ctx, indices);
  op->block_ = inner * static_cast<int64_t>(dtype_size(params.type));
  if (require_static(ctx, out) != op->outer_ * op->count_ * inner) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " does not hold the gathered values");
  }
  op->params_ = ctx.input_index(0);
  op->indices_ = ctx.input_index(1);
  op->out_ = ctx.output_index(0);
  op->wide_ = indices.type == DType::I64;
  return op;
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_dynamic_op(const PrepareContext& ctx) {
  switch (ctx.op.code) {
    case OpCode::Less:
    case OpCode::LogicalAnd: return compare(ctx);
    case OpCode::Shape: return shape(ctx);
    case OpCode::Slice: return slice(ctx);
    case OpCode::SelectV2: return select(ctx);
    case OpCode::Gather: return gather(ctx);
    default: break;
  }
  ctx.fail("not a runtime-operand op");
}

}  // namespace tickinfer::tfl::ops
