// Reference attention head (KernelSet::attend_head): query by query, the scores q . k, the textbook softmax
// in base 2 (max-subtracted, std::exp2, divided by the sum) and the weighted sum of the value rows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void attend_head(const AttendHead& a) noexcept {
  for (int i = 0; i < a.queries; ++i) {
    const KeyRange keys = attend_keys(a, i, 1);
    float* out = a.out + static_cast<size_t>(i) * a.ldo;
    std::fill(out, out + a.value_dim, 0.0f);
    if (keys.first >= keys.end) continue;  // sees no key
    auto score = [&](int j) -> float& { return a.scores_t[static_cast<size_t>(j) * a.ld + i]; };
    const float* qi = a.queries_t + static_cast<size_t>(i / kPanel) * a.key_dim * kPanel + i % kPanel;
    float m = -std::numeric_limits<float>::infinity();
    for (int j = keys.first; j < keys.end; ++j) {
      const float* kj = a.key_rows + static_cast<size_t>(j) * a.ldk;
      float s = qi[0] * kj[0];
      for (int d = 1; d < a.key_dim; ++d) s = std::fma(qi[static_cast<size_t>(d) * kPanel], kj[d], s);
      score(j) = s;
      m = std::max(m, s);
    }
    float sum = 0.0f;
    for (int j = keys.first; j < keys.end; ++j) {
      score(j) = std::exp2(score(j) - m);
      sum += score(j);
    }
    for (int j = keys.first; j < keys.end; ++j) {
      const float p = score(j) / sum;
      const float* vj = a.values + static_cast<size_t>(j) * a.ldv;
      for (int d = 0; d < a.value_dim; ++d) out[d] = std::fma(p, vj[d], out[d]);
    }
  }
}

}  // namespace tickinfer::kernels::scalar
