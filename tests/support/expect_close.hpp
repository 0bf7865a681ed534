#pragma once
// The reference tests' comparison: |got - want| <= atol + rtol * |want| element by element, NaN
// only where the reference has NaN; one failure naming the worst element.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>

namespace tickinfer::testing {

inline void expect_close(const float* got, const float* want, size_t n, double rtol, double atol,
                         const std::string& what) {
  size_t worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) {
      ADD_FAILURE() << what << ": NaN mismatch at " << i;
      return;
    }
    const double excess = std::fabs(double(got[i]) - double(want[i])) - (atol + rtol * std::fabs(double(want[i])));
    if (excess > worst_excess) worst_excess = excess, worst = i;
  }
  EXPECT_LE(worst_excess, 0.0) << what << ": element " << worst << " got " << got[worst] << " want " << want[worst]
                               << " (rtol " << rtol << ", atol " << atol << ")";
}

}  // namespace tickinfer::testing
