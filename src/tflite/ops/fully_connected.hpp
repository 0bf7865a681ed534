#pragma once
// FULLY_CONNECTED internals shared by its float/bf16 (fully_connected.cpp, pruned float:
// fully_connected_float_sparse.cpp) and int8/hybrid (fully_connected_int8.cpp) implementations.
#include <memory>

#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops::fc {

// Geometry: the input is `batch` rows of `depth` values (any rank, flattened); the filter is
// [units, depth]; the output holds batch * units values.
struct FcGeometry {
  int batch = 0, depth = 0, units = 0;
  int input = -1, filter = -1, bias = -1, output = -1;  // tensor indices (bias -1: none)
};
FcGeometry check_geometry(const PrepareContext& ctx);

// TFLite's reference float loop for one row: total += x[d] * w[o][d], d ascending, + bias,
// clamped. The float op for the "scalar" kernel set, and the sparse op's row with Inf or NaN.
inline void float_reference_row(const float* x, const float* w, const float* bias, int units, int depth, float lo,
                                float hi, float* y) noexcept {
  for (int o = 0; o < units; ++o) {
    float total = 0.0f;
    for (int d = 0; d < depth; ++d) total += x[d] * w[static_cast<size_t>(o) * depth + d];
    const float v = total + (bias ? bias[o] : 0.0f);
    y[o] = v < lo ? lo : (v > hi ? hi : v);
  }
}

std::unique_ptr<PreparedOp> make_int8(const PrepareContext& ctx, const FcGeometry& g);
std::unique_ptr<PreparedOp> make_hybrid(const PrepareContext& ctx, const FcGeometry& g);

// A pruned float filter's block-sparse form in the reference order (fully_connected_float_sparse.cpp),
// or nullptr where the dense form stays (SparseChoice, and the measured rule under Auto).
std::unique_ptr<PreparedOp> make_float_sparse(const PrepareContext& ctx, const FcGeometry& g, const float* w,
                                              const float* bias, float lo, float hi);

}  // namespace tickinfer::tfl::ops::fc
