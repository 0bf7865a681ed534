// The double-written window ring: its zero-copy view always equals the last T rows, oldest first,
// and its readiness tracks invalid rows leaving the window.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <vector>

#include "features/window_ring.hpp"

namespace tickinfer::features {
namespace {

TEST(FeaturesWindow, ViewIsTheLastRowsContiguousAndOldestFirst) {
  for (std::size_t rows : {1u, 2u, 5u, 32u}) {
    for (std::size_t width : {1u, 3u, 10u}) {
      WindowRing w(rows, width);
      std::deque<std::vector<double>> plain;
      std::mt19937 rng(static_cast<unsigned>(rows * 100 + width));
      std::uniform_real_distribution<double> u(-1, 1);
      for (int step = 0; step < 200; ++step) {
        std::vector<double> r(width);
        for (auto& v : r) v = u(rng);
        w.push(r.data(), true);
        plain.push_back(r);
        if (plain.size() > rows) plain.pop_front();
        ASSERT_EQ(w.filled(), plain.size());
        if (plain.size() < rows) continue;
        const float* view = w.view();
        for (std::size_t i = 0; i < rows; ++i)
          for (std::size_t j = 0; j < width; ++j)
            ASSERT_EQ(view[i * width + j], static_cast<float>(plain[i][j])) << rows << "x" << width << " step " << step;
        ASSERT_EQ(w.last()[0], static_cast<float>(plain.back()[0]));
      }
    }
  }
}

TEST(FeaturesWindow, ReadyOnlyWhenFullAndFreeOfInvalidRows) {
  WindowRing w(3, 2);
  const double ok[2] = {1, 2};
  const double nan_row[2] = {1, std::numeric_limits<double>::quiet_NaN()};
  w.push(ok, true);
  w.push(ok, true);
  EXPECT_FALSE(w.ready());
  w.push(ok, false);  // an invalid row
  EXPECT_FALSE(w.ready());
  EXPECT_EQ(w.unusable(), 1u);
  w.push(ok, true);
  w.push(ok, true);
  EXPECT_FALSE(w.ready());
  w.push(ok, true);  // the invalid row has left
  EXPECT_TRUE(w.ready());
  w.push(nan_row, true);  // NaN makes a row unusable too
  EXPECT_FALSE(w.ready());
}

}  // namespace
}  // namespace tickinfer::features
