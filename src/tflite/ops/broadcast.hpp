#pragma once
// NumPy-style broadcasting of two operands for the binary elementwise ops (TFLite's
// BroadcastBinaryFunction / ProcessBroadcastShapes semantics: shapes are right-aligned, a
// dimension of 1 stretches). Resolved at prepare time into one source index per output element
// for each operand, so eval is a plain loop with no shape arithmetic.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {

struct BroadcastPlan {
  int64_t count = 0;   // output elements
  bool same = true;    // both operands already have the output's shape: no index maps
  std::vector<int32_t> index_a, index_b;  // when !same: source element of each output element
  // When one operand has the output's shape and the other repeats along it with this period
  // (a scalar: 1; a last-axis vector: its length), the loop runs row by row without the index
  // maps: the same elements, combined in the same order, at vector speed. 0: not so.
  int64_t a_period = 0, b_period = 0;
};

// The period with which index[i] repeats i % period over all i (0: it does not), given that the
// operand holds `n` elements.
inline int64_t repeat_period(const std::vector<int32_t>& index, int64_t n) {
  if (n < 1 || index.size() % static_cast<size_t>(n) != 0) return 0;
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] != static_cast<int32_t>(static_cast<int64_t>(i) % n)) return 0;
  return n;
}

// Checks that `a` and `b` broadcast to `out`'s shape (TFLite puts the broadcast shape on the
// output tensor) and builds the plan. Fails naming the tensors otherwise.
inline BroadcastPlan plan_broadcast(const PrepareContext& ctx, const Tensor& a, const Tensor& b,
                                    const Tensor& out) {
  require_static(ctx, a);
  require_static(ctx, b);
  const int64_t n_out = require_static(ctx, out);
  const size_t rank = std::max({a.shape.size(), b.shape.size(), out.shape.size()});
  auto padded = [rank](const Shape& s) {
    Shape p(rank - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  const Shape sa = padded(a.shape), sb = padded(b.shape), so = padded(out.shape);
  for (size_t d = 0; d < rank; ++d) {
    const int want = std::max(sa[d], sb[d]);
    const bool ok = (sa[d] == want || sa[d] == 1) && (sb[d] == want || sb[d] == 1) && so[d] == want;
    if (!ok) {
      ctx.fail("inputs '" + a.name + "' " + shape_str(a.shape) + " and '" + b.name + "' " + shape_str(b.shape) +
               " do not broadcast to output '" + out.name + "' " + shape_str(out.shape));
    }
  }
  if (n_out > (int64_t{1} << 31) - 1) ctx.fail("output '" + out.name + "' is too large");
  BroadcastPlan plan;
  plan.count = n_out;
  plan.same = sa == so && sb == so;
  if (plan.same) return plan;
  // Row-major strides of each operand, 0 along stretched dimensions.
  std::vector<int64_t> stride_a(rank, 0), stride_b(rank, 0);
  int64_t ra = 1, rb = 1;
  for (size_t d = rank; d-- > 0;) {
    stride_a[d] = sa[d] == 1 ? 0 : ra;
    stride_b[d] = sb[d] == 1 ? 0 : rb;
    ra *= sa[d];
    rb *= sb[d];
  }
  plan.index_a.resize(static_cast<size_t>(n_out));
  plan.index_b.resize(static_cast<size_t>(n_out));
  std::vector<int> pos(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    plan.index_a[static_cast<size_t>(i)] = static_cast<int32_t>(ia);
    plan.index_b[static_cast<size_t>(i)] = static_cast<int32_t>(ib);
    // Advance the output position (odometer), keeping the source offsets in step.
    for (size_t d = rank; d-- > 0;) {
      ++pos[d];
      ia += stride_a[d];
      ib += stride_b[d];
      if (pos[d] < so[d]) break;
      ia -= stride_a[d] * so[d];
      ib -= stride_b[d] * so[d];
      pos[d] = 0;
    }
  }
  const int64_t na = ra, nb = rb;  // elements each operand holds
  if (na == n_out && repeat_period(plan.index_a, n_out) == n_out) plan.b_period = repeat_period(plan.index_b, nb);
  if (nb == n_out && repeat_period(plan.index_b, n_out) == n_out) plan.a_period = repeat_period(plan.index_a, na);
  return plan;
}

}  // namespace tickinfer::tfl::ops
