// BATCH_MATMUL (TFLite batch_matmul.cc, reference kernels): out[..., m, n] = sum_k a[..., m, k] *
// b[..., k, n], a read transposed when adj_x, b when adj_y; batch dimensions (all but the last
// two) broadcast NumPy-style, ranks 2 to 5. Both operands may be runtime tensors.
//  float: one float sum per output, k ascending (the reference loop's order).
//  int8 (per-tensor, both operands and output): int32 sums of (a - zp_a) * (b - zp_b),
//    requantized by s_a * s_b / s_out as TFLite does, plus zp_out, clamped.
#include <algorithm>
#include <vector>

#include "tflite/kernels/gemm_s8_rows.hpp"
#include "tflite/kernels/gemv_s8.hpp"
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

// Each output is the reference loop's total = 0; total += a * b, k ascending, one rounding per
// product and per sum (this module has no contraction into FMAs). The loops run that chain for a
// whole row of outputs at once, so they vectorize without reordering any output's sum: along n
// (b copied per batch as [k][n]), or, where n is short and m long (an attention's weights times
// its values: n = value_dim), along m (a copied as [k][m]). Bit for bit the per-output loop (the
// fidelity test holds float BATCH_MATMUL to 0), which took 5.7 ns per output of k = 5.
class FloatBatchMatMul final : public PreparedOp {
 public:
  FloatBatchMatMul(int a, int b, int out, MatMulShape s)
      : a_(a), b_(b), out_(out), s_(std::move(s)), along_m_(s_.n < 8 && s_.m > s_.n),
        copy_(static_cast<size_t>(s_.k * (along_m_ ? s_.m : s_.n))), acc_(along_m_ ? static_cast<size_t>(s_.m) : 0) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* a = mem.at<const float>(a_);
    const float* b = mem.at<const float>(b_);
    float* y = mem.at<float>(out_);
    const int64_t m = s_.m, n = s_.n, k = s_.k;
    float* acc = acc_.data();
    for (size_t batch = 0; batch < s_.a_base.size(); ++batch, y += m * n) {
      const float* ab = a + s_.a_base[batch];
      const float* bb = b + s_.b_base[batch];
      if (along_m_) {
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t i = 0; i < m; ++i) copy_[static_cast<size_t>(kk * m + i)] = ab[i * s_.a_m + kk * s_.a_k];
        for (int64_t j = 0; j < n; ++j) {
          std::fill(acc, acc + m, 0.0f);
          for (int64_t kk = 0; kk < k; ++kk) {
            const float bv = bb[kk * s_.b_k + j * s_.b_n];
            const float* col = copy_.data() + kk * m;
            for (int64_t i = 0; i < m; ++i) acc[i] += col[i] * bv;
          }
          for (int64_t i = 0; i < m; ++i) y[i * n + j] = acc[i];
        }
      } else {
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t j = 0; j < n; ++j) copy_[static_cast<size_t>(kk * n + j)] = bb[kk * s_.b_k + j * s_.b_n];
        for (int64_t i = 0; i < m; ++i) {
          float* row = y + i * n;
          std::fill(row, row + n, 0.0f);
          for (int64_t kk = 0; kk < k; ++kk) {
            const float av = ab[i * s_.a_m + kk * s_.a_k];
            const float* brow = copy_.data() + kk * n;
            for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
          }
        }
      }
    }
  }
  std::string describe() const override {
    return std::string("float batch matmul (reference order, ") + (along_m_ ? "along m)" : "along n)");
  }
  int64_t macs() const override { return static_cast<int64_t>(s_.a_base.size()) * s_.m * s_.n * s_.k; }

 private:
  int a_, b_, out_;
  MatMulShape s_;
  bool along_m_;
  std::vector<float> copy_;  // one batch's b as [k][n], or a as [k][m]
  std::vector<float> acc_;   // along m: one output column
};

// Per batch, b - zp_b is copied once into [k][n] int16 rows (whatever adj_y says), then each
// output row m is n int32 sums built k by k as whole-row vector multiply-adds
// (tflite/kernels/gemm_s8_rows.hpp), and requantized
// by the int8 kernel set's vector requantization (the same MultiplyByQuantizedMultiplier, every
// output's multiplier the tensor's). Integer sums do not depend on order: bit for bit the
// reference's per-output loop (21 ns per output of an attention's 64 x 64 scores that way).
class Int8BatchMatMul final : public PreparedOp {
 public:
  // dots: the dot-product form (k long, n short), or nullptr for the row form.
  Int8BatchMatMul(int a, int b, int out, MatMulShape s, const kernels::S8Kernels& ks, Rounding r,
                  kernels::GemmS8RowsFn rows, kernels::GemmS8DotsFn dots)
      : a_(a), b_(b), out_(out), s_(std::move(s)), rows_(rows), dots_(dots), requant_(ks.requant(r)),
        requant_name_(ks.name), b_rows_(static_cast<size_t>(s_.k * s_.n)), a_row_(static_cast<size_t>(s_.k)),
        acc_(static_cast<size_t>(s_.n)), scale_(static_cast<int>(s_.n)) {}
  void set_output(int32_t zp_a, int32_t zp_b, int32_t zp_out, QuantizedMultiplier q) {
    zp_a_ = zp_a;
    zp_b_ = zp_b;
    scale_.set_scale(q.multiplier, q.shift);
    scale_.set_output(zp_out, -128, 127);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* a = mem.at<const int8_t>(a_);
    const int8_t* b = mem.at<const int8_t>(b_);
    int8_t* y = mem.at<int8_t>(out_);
    const int64_t n = s_.n, k = s_.k;
    for (size_t batch = 0; batch < s_.a_base.size(); ++batch) {
      const int8_t* ab = a + s_.a_base[batch];
      const int8_t* bb = b + s_.b_base[batch];
      if (dots_) {  // b as n columns along k, each a row as int16 along k
        for (int64_t j = 0; j < n; ++j) {
          int16_t* col = b_rows_.data() + j * k;
          for (int64_t kk = 0; kk < k; ++kk) col[kk] = static_cast<int16_t>(bb[kk * s_.b_k + j * s_.b_n] - zp_b_);
        }
      } else {
        for (int64_t kk = 0; kk < k; ++kk) {
          int16_t* row = b_rows_.data() + kk * n;
          for (int64_t j = 0; j < n; ++j) row[j] = static_cast<int16_t>(bb[kk * s_.b_k + j * s_.b_n] - zp_b_);
        }
      }
      for (int64_t m = 0; m < s_.m; ++m) {
        if (dots_) {
          for (int64_t kk = 0; kk < k; ++kk) a_row_[static_cast<size_t>(kk)] = static_cast<int16_t>(ab[m * s_.a_m + kk * s_.a_k] - zp_a_);
          dots_(a_row_.data(), b_rows_.data(), k, n, acc_.data());
        } else {
          rows_(ab + m * s_.a_m, s_.a_k, zp_a_, b_rows_.data(), k, n, acc_.data());
        }
        requant_(acc_.data(), static_cast<int>(n), scale_.params(), y);
        y += n;
      }
    }
  }
  std::string describe() const override {
    return std::string("int8 batch matmul, ") + (dots_ ? "dot products along k" : "row products") +
           ", requantization " + requant_name_;
  }
  int64_t macs() const override { return static_cast<int64_t>(s_.a_base.size()) * s_.m * s_.n * s_.k; }

 private:
  int a_, b_, out_;
  MatMulShape s_;
  kernels::GemmS8RowsFn rows_;
  kernels::GemmS8DotsFn dots_;
  kernels::RequantS8Fn requant_;
  const char* requant_name_;
  int32_t zp_a_ = 0, zp_b_ = 0;
  std::vector<int16_t> b_rows_;  // one batch's b - zp_b, [k][n] (row form) or [n][k] (dot form)
  std::vector<int16_t> a_row_;   // dot form: one row of a - zp_a along k
  std::vector<int32_t> acc_;     // one output row's sums
  kernels::UniformRequant scale_;  // the tensor's output scale in every column
};

std::unique_ptr<PreparedOp> make_int8(const PrepareContext& ctx, MatMulShape s) {
  const AffineParams pa = per_tensor_params(ctx, ctx.input(0), "input a");
  const AffineParams pb = per_tensor_params(ctx, ctx.input(1), "input b");
  const AffineParams po = per_tensor_params(ctx, ctx.output(0), "output");
  if (s.n > (int64_t{1} << 24) || s.k * s.n > (int64_t{1} << 28)) ctx.fail("operands are too large");
  const Rounding r = rounding(ctx);
  // Dot products along k when k is long against n (a row step would be one short vector); the
  // row form otherwise. (Measured on an attention's 64 x 8 values: 35 us per head pair as rows.)
  const bool dots = s.k >= 32 && s.n < 16;
  const kernels::GemmS8RowKernels& products = kernels::gemm_s8_row_kernels(ctx.isa);
  auto op = std::make_unique<Int8BatchMatMul>(ctx.input_index(0), ctx.input_index(1), ctx.output_index(0), std::move(s),
                                              kernels::s8_kernels(ctx.isa, false), r, products.rows,
                                              dots ? products.dots : nullptr);
  op->set_output(pa.zero_point, pb.zero_point, po.zero_point,
                 quantize_multiplier(static_cast<double>(pa.scale) * pb.scale / po.scale, r));
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
  return make_int8(ctx, std::move(s));
}

}  // namespace tickinfer::tfl::ops
