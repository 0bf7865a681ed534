// MAX_POOL_2D and AVERAGE_POOL_2D on NHWC (TFLite reference pooling.h and integer_ops/pooling.h).
// Windows are clipped to the input (padding cells are not counted). Average: float divides the
// sum by the number of cells; int8 rounds the int32 sum / count half away from zero,
//   acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count,
// then clamps to the fused activation range. Input and output share quantization parameters.
#include <algorithm>
#include <limits>

#include "tflite/ops/ops.hpp"
#include "tflite/ops/window.hpp"

namespace tickinfer::tfl::ops {
namespace {

template <class T, class Acc, bool kAverage>
class Pool final : public PreparedOp {
 public:
  Pool(int in, int out, const Window& w, Acc lo, Acc hi) : in_(in), out_(out), w_(w), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<T>(in_);
    T* y = mem.at<T>(out_);
    const Window& w = w_;
    for (int b = 0; b < w.batch; ++b) {
      for (int oy = 0; oy < w.out_h; ++oy) {
        const int y0 = oy * w.stride_h - w.pad_h;
        const int fy0 = std::max(0, -y0), fy1 = std::min(w.filter_h, w.in_h - y0);
        for (int ox = 0; ox < w.out_w; ++ox) {
          const int x0 = ox * w.stride_w - w.pad_w;
          const int fx0 = std::max(0, -x0), fx1 = std::min(w.filter_w, w.in_w - x0);
          T* out = y + ((static_cast<int64_t>(b) * w.out_h + oy) * w.out_w + ox) * w.in_c;
          for (int c = 0; c < w.in_c; ++c) {
            Acc acc = kAverage ? Acc(0) : std::numeric_limits<Acc>::lowest();
            int count = 0;
            for (int fy = fy0; fy < fy1; ++fy) {
              for (int fx = fx0; fx < fx1; ++fx) {
                const Acc v = x[((static_cast<int64_t>(b) * w.in_h + y0 + fy) * w.in_w + x0 + fx) * w.in_c + c];
                if constexpr (kAverage) acc += v;
                else acc = std::max(acc, v);
                ++count;
              }
            }
            if constexpr (kAverage) {
              if (count == 0) {
                acc = 0;
              } else if constexpr (std::numeric_limits<Acc>::is_integer) {
                acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
              } else {
                acc = acc / static_cast<Acc>(count);
              }
            }
            out[c] = static_cast<T>(std::min(std::max(acc, lo_), hi_));
          }
        }
      }
    }
  }
  std::string describe() const override {
    return std::string(std::numeric_limits<T>::is_integer ? "int8 " : "float ") + (kAverage ? "average" : "max") +
           " pool " + std::to_string(w_.filter_h) + "x" + std::to_string(w_.filter_w);
  }

 private:
  int in_, out_;
  Window w_;
  Acc lo_, hi_;
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
