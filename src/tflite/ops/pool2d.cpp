// MAX_POOL_2D and AVERAGE_POOL_2D on NHWC (TFLite reference pooling.h and integer_ops/pooling.h).
// Windows are clipped to the input (padding cells are not counted). Average: float divides the
// sum by the number of cells; int8 rounds the int32 sum / count half away from zero,
//   acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count,
// then clamps to the fused activation range. Input and output share quantization parameters.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "tflite/ops/ops.hpp"
#include "tflite/ops/window.hpp"

namespace tickinfer::tfl::ops {
namespace {

// Channels innermost: each cell of a window is one contiguous row of in_c values folded into the
// accumulators (the cells in the same order as the reference's loops, so the same sums and maxima).
template <class T, class Acc, bool kAverage>
class Pool final : public PreparedOp {
 public:
  Pool(int in, int out, const Window& w, Acc lo, Acc hi)
      : in_(in), out_(out), w_(w), lo_(lo), hi_(hi), acc_(static_cast<size_t>(w.in_c)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<T>(in_);
    T* y = mem.at<T>(out_);
    const Window& w = w_;
    const int C = w.in_c;
    Acc* acc = acc_.data();
    for (int b = 0; b < w.batch; ++b) {
      for (int oy = 0; oy < w.out_h; ++oy) {
        const int y0 = oy * w.stride_h - w.pad_h;
        const int fy0 = std::max(0, -y0), fy1 = std::min(w.filter_h, w.in_h - y0);
        for (int ox = 0; ox < w.out_w; ++ox) {
          const int x0 = ox * w.stride_w - w.pad_w;
          const int fx0 = std::max(0, -x0), fx1 = std::min(w.filter_w, w.in_w - x0);
          T* out = y + ((static_cast<int64_t>(b) * w.out_h + oy) * w.out_w + ox) * C;
          std::fill(acc, acc + C, kAverage ? Acc(0) : std::numeric_limits<Acc>::lowest());
          for (int fy = fy0; fy < fy1; ++fy) {
            for (int fx = fx0; fx < fx1; ++fx) {
              const T* cell = x + ((static_cast<int64_t>(b) * w.in_h + y0 + fy) * w.in_w + x0 + fx) * C;
              for (int c = 0; c < C; ++c) {
                if constexpr (kAverage) acc[c] += static_cast<Acc>(cell[c]);
                else acc[c] = std::max(acc[c], static_cast<Acc>(cell[c]));
              }
            }
          }
          const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
          for (int c = 0; c < C; ++c) {
            Acc v = acc[c];
            if constexpr (kAverage) {
              if (count == 0) {
                v = 0;
              } else if constexpr (std::numeric_limits<Acc>::is_integer) {
                v = v > 0 ? (v + count / 2) / count : (v - count / 2) / count;
              } else {
                v = v / static_cast<Acc>(count);
              }
            }
            out[c] = static_cast<T>(std::min(std::max(v, lo_), hi_));
          }
        }
      }
    }
  }
  std::string describe() const override {
    return std::string(std::numeric_limits<T>::is_integer ? "int8 " : "float ") + (kAverage ? "average" : "max") +
           " pool " + std::to_string(w_.filter_h) + "x" + std::to_string(w_.filter_w);
  }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if constexpr (!std::is_same_v<T, int8_t>) {
      return false;
    } else {
      IntegerForm* f = &forms->emplace_back();
      f->kind = kAverage ? IntegerKind::AvgPool : IntegerKind::MaxPool;
      f->inputs = {in_};
      f->output = out_;
      f->count = int64_t{w_.batch} * w_.out_h * w_.out_w * w_.out_c;
      window_form(w_, f);
      f->lo = lo_;
      f->hi = hi_;
      return true;
    }
  }

 private:
  int in_, out_;
  Window w_;
  Acc lo_, hi_;
  std::vector<Acc> acc_;  // one window's accumulators, per channel
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_pool2d(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_same_type(ctx, in, out);
  const OpOptions& o = ctx.op.options;
  const Window w = make_window(ctx, in, out, o.filter_h, o.filter_w, false);
  if (w.out_c != w.in_c) ctx.fail("output '" + out.name + "' must keep the input's channels");
  const bool average = ctx.op.code == OpCode::AveragePool2D;
  const int i = ctx.input_index(0), k = ctx.output_index(0);
  if (in.type == DType::F32) {
    float lo, hi;
    float_activation_range(ctx, o.activation, &lo, &hi);
    if (average) return std::make_unique<Pool<float, float, true>>(i, k, w, lo, hi);
    return std::make_unique<Pool<float, float, false>>(i, k, w, lo, hi);
  }
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  if (ip.scale != op.scale || ip.zero_point != op.zero_point) {
    ctx.fail("input '" + in.name + "' and output '" + out.name + "' must have the same quantization parameters");
  }
  int32_t lo, hi;
  int8_activation_range(ctx, o.activation, op, &lo, &hi);
  if (average) return std::make_unique<Pool<int8_t, int32_t, true>>(i, k, w, lo, hi);
  return std::make_unique<Pool<int8_t, int32_t, false>>(i, k, w, lo, hi);
}

}  // namespace tickinfer::tfl::ops
