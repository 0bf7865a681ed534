// REDUCE_PROD (TFLite reduce.cc, reference): the product over the constant axes, float or int32
// (the converter emits it on shapes, where the interpreter folds it at prepare). Each input
// element's output element is worked out at prepare; eval multiplies in input order.
#include <algorithm>
#include <type_traits>

#include "tflite/ops/op_support.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace {

template <class T>
class ReduceProdOp final : public PreparedOp {
 public:
  ReduceProdOp(int in, int out, int64_t n_out, std::vector<int32_t> target)
      : in_(in), out_(out), n_out_(n_out), target_(std::move(target)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<const T>(in_);
    T* y = mem.at<T>(out_);
    std::fill(y, y + n_out_, T{1});
    for (size_t i = 0; i < target_.size(); ++i) {
      if constexpr (std::is_same_v<T, int32_t>) {
        y[target_[i]] = static_cast<int32_t>(static_cast<uint32_t>(y[target_[i]]) * static_cast<uint32_t>(x[i]));
      } else {
        y[target_[i]] *= x[i];
      }
    }
  }
  std::string describe() const override { return "reduce prod"; }

 private:
  int in_, out_;
  int64_t n_out_;
  std::vector<int32_t> target_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_reduce_prod(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I32});
  require_same_type(ctx, in, out);
  if (!in.quant.empty()) ctx.fail("quantized REDUCE_PROD is not supported");
  const int64_t n = require_static(ctx, in);
  if (n > (int64_t{1} << 24)) ctx.fail("input is too large");
  const int rank = static_cast<int>(in.shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : const_ints(ctx, ctx.input(1), "axes")) {
    const int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank) ctx.fail("axis " + std::to_string(a) + " is out of range");
    reduced[static_cast<size_t>(d)] = true;
  }
  Shape kept;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)]) kept.push_back(in.shape[static_cast<size_t>(d)]);
  }
  const int64_t n_out = element_count(kept);
  if (require_static(ctx, out) != n_out) ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " does not hold the result");
  std::vector<int32_t> target(static_cast<size_t>(n));
  std::vector<int> pos(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[static_cast<size_t>(d)]) o = o * in.shape[static_cast<size_t>(d)] + pos[static_cast<size_t>(d)];
    }
    target[static_cast<size_t>(i)] = static_cast<int32_t>(o);
    for (int d = rank; d-- > 0;) {
      if (++pos[static_cast<size_t>(d)] < in.shape[static_cast<size_t>(d)]) break;
      pos[static_cast<size_t>(d)] = 0;
    }
  }
  const int a = ctx.input_index(0), y = ctx.output_index(0);
  if (in.type == DType::I32) return std::make_unique<ReduceProdOp<int32_t>>(a, y, n_out, std::move(target));
  return std::make_unique<ReduceProdOp<float>>(a, y, n_out, std::move(target));
}

}  // namespace tickinfer::tfl::ops
