#pragma once
// Binary elementwise ops (ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM): one kernel
// shape for every type and formula. The per-element formula is a small functor `F` holding its
// prepared parameters; BinaryOp applies it over the broadcast plan.
#include <memory>
#include <string>
#include <utility>

#include "tflite/ops/broadcast.hpp"

namespace tickinfer::tfl::ops {

template <class T, class F>
class BinaryOp final : public PreparedOp {
 public:
  BinaryOp(int a, int b, int out, BroadcastPlan plan, F f, std::string what)
      : a_(a), b_(b), out_(out), plan_(std::move(plan)), f_(f), what_(std::move(what)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const T* x = mem.at<T>(a_);
    const T* z = mem.at<T>(b_);
    T* y = mem.at<T>(out_);
    const int64_t n = plan_.count;
    if (plan_.same) {
      for (int64_t i = 0; i < n; ++i) y[i] = f_(x[i], z[i]);
    } else if (plan_.b_period == 1) {  // z is one value
      const T c = z[0];
      for (int64_t i = 0; i < n; ++i) y[i] = f_(x[i], c);
    } else if (plan_.a_period == 1) {  // x is one value
      const T c = x[0];
      for (int64_t i = 0; i < n; ++i) y[i] = f_(c, z[i]);
    } else if (const int64_t m = plan_.b_period; m > 0) {  // z repeats along x
      for (int64_t r = 0; r < n; r += m, x += m, y += m)
        for (int64_t j = 0; j < m; ++j) y[j] = f_(x[j], z[j]);
    } else if (const int64_t m = plan_.a_period; m > 0) {  // x repeats along z
      for (int64_t r = 0; r < n; r += m, z += m, y += m)
        for (int64_t j = 0; j < m; ++j) y[j] = f_(x[j], z[j]);
    } else {
      const int32_t* ia = plan_.index_a.data();
      const int32_t* ib = plan_.index_b.data();
      for (int64_t i = 0; i < n; ++i) y[i] = f_(x[ia[i]], z[ib[i]]);
    }
  }
  std::string describe() const override {
    return what_ + (plan_.same ? "" : plan_.a_period || plan_.b_period ? " (broadcast by rows)" : " (broadcast)");
  }

 private:
  int a_, b_, out_;
  BroadcastPlan plan_;
  F f_;
  std::string what_;
};

template <class T, class F>
std::unique_ptr<PreparedOp> make_binary(const PrepareContext& ctx, BroadcastPlan plan, F f, std::string what) {
  return std::make_unique<BinaryOp<T, F>>(ctx.input_index(0), ctx.input_index(1), ctx.output_index(0),
                                          std::move(plan), f, std::move(what));
}

// int8 ADD/SUB/MUL/SQUARED_DIFFERENCE/MAXIMUM/MINIMUM (elementwise_int8.cpp).
std::unique_ptr<PreparedOp> make_elementwise_int8(const PrepareContext& ctx, BroadcastPlan plan);

}  // namespace tickinfer::tfl::ops
