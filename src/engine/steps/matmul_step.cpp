// MatMul: a product of two computed tensors, [steps][rows x in_width] . [steps][in_width x
// out_width] (Keras' Dot; a Luong attention's scores and context). Neither operand is a weight,
// so nothing is packed ahead: each output row accumulates the rows of the right operand scaled by
// its left row's entries, which keeps the inner loop contiguous (the compiler vectorises it). The
// products these models hold are small (a decoder step's [1, 64] against [50, 64]).
#include <algorithm>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

void run_matmul(const StepCtx& c, const Step& s) noexcept {
  const size_t M = static_cast<size_t>(s.rows), K = static_cast<size_t>(s.in_width),
               N = static_cast<size_t>(s.out_width);
  const float* a = c.at(s.in);
  const float* b = c.at(s.rhs);
  float* y = c.at(s.out);
  for (int batch = 0; batch < s.steps; ++batch, a += M * K, b += K * N, y += M * N) {
    for (size_t m = 0; m < M; ++m) {
      float* yr = y + m * N;
      std::fill(yr, yr + N, 0.0f);
      for (size_t k = 0; k < K; ++k) {
        const float am = a[m * K + k];
        const float* br = b + k * N;
        for (size_t j = 0; j < N; ++j) yr[j] += am * br[j];
      }
    }
  }
}

StepCost matmul_cost(const Step& s) { return {int64_t{s.steps} * s.rows * s.in_width * s.out_width, 0}; }

void describe_matmul(std::ostream& os, const Step& s) {
  os << "  " << (s.steps > 1 ? std::to_string(s.steps) + " x " : "") << "[" << s.rows << ", " << s.in_width << "] x ["
     << s.in_width << ", " << s.out_width << "]";
}

}  // namespace

extern const StepOps kMatMulStep = {"matmul", "a product of computed tensors", run_matmul, nullptr, no_floats, no_floats,
                                    matmul_cost, describe_matmul};

}  // namespace tickinfer::engine
