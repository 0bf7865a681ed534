// BATCH_MATMUL (TFLite batch_matmul.cc, reference kernels): out[..., m, n] = sum_k a[..., m, k] *
// b[..., k, n], a read transposed when adj_x, b when adj_y; batch dimensions (all but the last
// two) broadcast NumPy-style, ranks 2 to 5. Both operands may be runtime tensors.
//  float: one float sum per output, k ascending (the reference loop's order).
//  int8 (per-tensor, both operands and output): int32 sums of (a - zp_a) * (b - zp_b),
//    requantized by s_a * s_b / s_out as TFLite does, plus zp_out, clamped.
#include <algorithm>

#include "tflite/ops/op_support.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  // Per output batch: the first element of that batch's a and b matrices.
  std::vector<int64_t> a_base, b_base;
  // Element strides of a along m and k, of b along k and n (adj_x / adj_y decide which is 1).
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0;
};

MatMulShape plan(const PrepareContext& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra < 2 || rb < 2 || ra > 5 || rb > 5) ctx.fail("operands must have rank 2 to 5");
  const bool adj_x = ctx.op.options.adj_x, adj_y = ctx.op.options.adj_y;
  MatMulShape s;
  const int64_t a_rows = a.shape[ra - 2], a_cols = a.shape[ra - 1];
  const int64_t b_rows = b.shape[rb - 2], b_cols = b.shape[rb - 1];
  s.m = adj_x ? a_cols : a_rows;
  s.k = adj_x ? a_rows : a_cols;
  s.n = adj_y ? b_rows : b_cols;
  if ((adj_y ? b_cols : b_rows) != s.k) {
    ctx.fail("inner dimensions of '" + a.name + "' " + shape_str(a.shape) + " and '" + b.name + "' " + shape_str(b.shape) +
             " differ");
  }
  s.a_m = adj_x ? 1 : a_cols;
  s.a_k = adj_x ? a_cols : 1;
  s.b_k = adj_y ? 1 : b_cols;
  s.b_n = adj_y ? b_cols : 1;
  const size_t rank = std::max(ra, rb);
  Shape batch(rank - 2), ba(rank - 2, 1), bb(rank - 2, 1);
  for (size_t d = 0; d + 2 < ra; ++d) ba[rank - ra + d] = a.shape[d];
  for (size_t d = 0; d + 2 < rb; ++d) bb[rank - rb + d] = b.shape[d];
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (ba[d] != bb[d] && ba[d] != 1 && bb[d] != 1) ctx.fail("batch dimensions do not broadcast");
    batch[d] = std::max(ba[d], bb[d]);
  }
  Shape want = batch;
  want.push_back(static_cast<int>(s.m));
  want.push_back(static_cast<int>(s.n));
  if (out.shape != want && element_count(out.shape) != element_count(want)) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " is not " + shape_str(want));
  }
  const int64_t nbatch = element_count(batch);
  std::vector<int> pos(batch.size(), 0);
  for (int64_t i = 0; i < nbatch; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ia = ia * ba[d] + (ba[d] == 1 ? 0 : pos[d]);
      ib = ib * bb[d] + (bb[d] == 1 ? 0 : pos[d]);
    }
    s.a_base.push_back(ia * a_rows * a_cols);
    s.b_base.push_back(ib * b_rows * b_cols);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++pos[d] < batch[d]) break;
      pos[d] = 0;
    }
  }
  return s;
}

class FloatBatchMatMul final : public PreparedOp {
 public:
  FloatBatchMatMul(int a, int b, int out, MatMulShape s) : a_(a), b_(b), out_(out), s_(std::move(s)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* a = mem.at<const float>(a_);
    const float* b = mem.at<const float>(b_);
    float* y = mem.at<float>(out_);
    for (size_t batch = 0; batch < s_.a_base.size(); ++batch) {
      const float* ab = a + s_.a_base[batch];
      const float* bb = b + s_.b_base[batch];
      for (int64_t m = 0; m < s_.m; ++m) {
        for (int64_t n = 0; n < s_.n; ++n) {
          float total = 0.0f;
          for (int64_t k = 0; k < s_.k; ++k) total += ab[m * s_.a_m + k * s_.a_k] * bb[k * s_.b_k + n * s_.b_n];
          *y++ = total;
        }
      }
    }
  }
  std::string describe() const override { return "float batch matmul"; }
  int64_t macs() const override { return static_cast<int64_t>(s_.a_base.size()) * s_.m * s_.n * s_.k; }

 private:
  int a_, b_, out_;
  MatMulShape s_;
};

template <Rounding R>
class Int8BatchMatMul final : public PreparedOp {
 public:
  Int8BatchMatMul(int a, int b, int out, MatMulShape s) : a_(a), b_(b), out_(out), s_(std::move(s)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* a = mem.at<const int8_t>(a_);
    const int8_t* b = mem.at<const int8_t>(b_);
    int8_t* y = mem.at<int8_t>(out_);
    for (size_t batch = 0; batch < s_.a_base.size(); ++batch) {
      const int8_t* ab = a + s_.a_base[batch];
      const int8_t* bb = b + s_.b_base[batch];
      for (int64_t m = 0; m < s_.m; ++m) {
        for (int64_t n = 0; n < s_.n; ++n) {
          int32_t acc = 0;
          for (int64_t k = 0; k < s_.k; ++k) {
            acc += (ab[m * s_.a_m + k * s_.a_k] - zp_a) * (bb[k * s_.b_k + n * s_.b_n] - zp_b);
          }
          const int32_t v = multiply_by_quantized_multiplier<R>(acc, mult, shift) + zp_out;
          *y++ = static_cast<int8_t>(std::clamp(v, lo, hi));
        }
      }
    }
  }
  std::string describe() const override { return "int8 batch matmul"; }
  int64_t macs() const override { return static_cast<int64_t>(s_.a_base.size()) * s_.m * s_.n * s_.k; }

  int32_t zp_a = 0, zp_b = 0, zp_out = 0, mult = 0, lo = -128, hi = 127;
  int shift = 0;

 private:
  int a_, b_, out_;
  MatMulShape s_;
};

template <Rounding R>
std::unique_ptr<PreparedOp> make_int8(const PrepareContext& ctx, MatMulShape s) {
  const AffineParams pa = per_tensor_params(ctx, ctx.input(0), "input a");
  const AffineParams pb = per_tensor_params(ctx, ctx.input(1), "input b");
  const AffineParams po = per_tensor_params(ctx, ctx.output(0), "output");
  auto op = std::make_unique<Int8BatchMatMul<R>>(ctx.input_index(0), ctx.input_index(1), ctx.output_index(0), std::move(s));
  const QuantizedMultiplier q =
      quantize_multiplier(static_cast<double>(pa.scale) * pb.scale / po.scale, R);
  op->mult = q.multiplier;
  op->shift = q.shift;
  op->zp_a = pa.zero_point;
  op->zp_b = pb.zero_point;
  op->zp_out = po.zero_point;
  return op;
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_batch_matmul(const PrepareContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_static(ctx, a);
  require_static(ctx, b);
  require_type(ctx, a, "input a", {DType::F32, DType::I8});
  if (a.type == DType::F32 && b.type == DType::I8) ctx.fail("dynamic-range BATCH_MATMUL (int8 b) is not supported");
  require_same_type(ctx, a, b);
  require_same_type(ctx, a, out);
  MatMulShape s = plan(ctx, a, b, out);
  if (s.k > (1 << 20)) ctx.fail("inner dimension is too large");
  if (a.type == DType::F32) {
    return std::make_unique<FloatBatchMatMul>(ctx.input_index(0), ctx.input_index(1), ctx.output_index(0), std::move(s));
  }
  return rounding(ctx) == Rounding::Double ? make_int8<Rounding::Double>(ctx, std::move(s))
                                            : make_int8<Rounding::Single>(ctx, std::move(s));
}

}  // namespace tickinfer::tfl::ops
