// Every feature, the gap interpolation/invalidation and the rolling standardizer against the
// plain pandas/numpy/scikit-learn reference written by tools/make_feature_reference.py.
// Tolerance: 1e-9 relative (double), with a 1e-12 absolute floor for values near zero; the
// standardized values (order 1) use 1e-9 relative with a 1e-9 absolute floor.
#include <gtest/gtest.h>

#include "features/batch.hpp"
#include "features/feature_spec.hpp"
#include "support/features_test_support.hpp"

namespace tickinfer::features {
namespace {

using test::close;
using test::fixture_dir;
using test::read_npy_f8;

void expect_matches(const FeatureMatrix& m, const std::vector<double>& got, const test::F8Array& want,
                    double rel, double abs, const std::string& label) {
  ASSERT_EQ(m.rows, want.rows) << label;
  ASSERT_EQ(m.columns.size(), want.cols) << label;
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t r = 0; r < want.rows; ++r) {
    for (std::size_t c = 0; c < want.cols; ++c) {
      const double a = got[r * want.cols + c], b = want.at(r, c);
      if (!std::isnan(a) && !std::isnan(b))  // share of the tolerance used
        worst = std::max(worst, std::fabs(a - b) / (rel * std::fmax(std::fabs(a), std::fabs(b)) + abs));
      if (!close(a, b, rel, abs)) {
        if (++bad <= 10)
          ADD_FAILURE() << label << ": row " << r << " (instrument " << want.at(r, 0) << ", bar " << want.at(r, 1)
                        << ", state " << want.at(r, 2) << ") column '" << m.columns[c] << "': got " << a
                        << ", reference " << b;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << label;
  ::testing::Test::RecordProperty(label + "_worst_tolerance_share", std::to_string(worst));
  std::printf("%s: %zu rows x %zu columns, worst |got - reference| / tolerance = %.3g\n", label.c_str(), want.rows,
              want.cols, worst);
}

FeatureMatrix run(const std::string& policy) {
  const FeatureSpec spec = load_feature_spec(fixture_dir() + "/spec_" + policy + ".toml");
  auto source = CsvTickSource::open(fixture_dir() + "/ticks.csv");
  return compute_features(spec, *source);
}

TEST(FeaturesReference, DropPolicyMatchesPandasFeaturesAndGaps) {
  const FeatureMatrix m = run("drop");
  expect_matches(m, m.raw, read_npy_f8(fixture_dir() + "/expected_drop.npy"), 1e-9, 1e-12, "drop");
  EXPECT_GT(m.counters.rows_interpolated, 0u);
  EXPECT_GT(m.counters.gaps_invalidated, 0u);
  EXPECT_GT(m.counters.rows_edge_filled, 0u);
  EXPECT_GT(m.counters.dropped, 0u);
}

TEST(FeaturesReference, RollingStandardizerMatchesStandardScaler) {
  const FeatureMatrix m = run("drop");
  expect_matches(m, m.standardized, read_npy_f8(fixture_dir() + "/expected_drop_std.npy"), 1e-9, 1e-9,
                 "drop_standardized");
}

TEST(FeaturesReference, HoldLastPolicyMatchesReference) {
  const FeatureMatrix m = run("hold_last");
  expect_matches(m, m.raw, read_npy_f8(fixture_dir() + "/expected_hold_last.npy"), 1e-9, 1e-12, "hold_last");
  EXPECT_GT(m.counters.held, 0u);
}

TEST(FeaturesReference, MarkInvalidPolicyMatchesReference) {
  const FeatureMatrix m = run("mark_invalid");
  expect_matches(m, m.raw, read_npy_f8(fixture_dir() + "/expected_mark_invalid.npy"), 1e-9, 1e-12, "mark_invalid");
  EXPECT_GT(m.counters.marked, 0u);
  EXPECT_GT(m.counters.windows_withheld, 0u);
}

// The live path (no grid, events one by one) emits, for every bar it emits, exactly the row the
// batch path (checked against pandas above) has: the batch command adds only the edges.
TEST(FeaturesReference, LiveRowsEqualBatchRows) {
  for (const char* policy : {"drop", "hold_last", "mark_invalid"}) {
    const FeatureSpec spec = load_feature_spec(fixture_dir() + "/spec_" + policy + ".toml");
    auto source = CsvTickSource::open(fixture_dir() + "/ticks.csv");
    const FeatureMatrix batch = compute_features(spec, *source);
    struct Sink final : RowSink {
      std::vector<std::vector<double>> rows;
      std::size_t width = 0;
      void on_row(const RowMeta& m, const double* raw, const double*) noexcept override {
        std::vector<double> r = {static_cast<double>(m.instrument), static_cast<double>(m.bar),
                                 static_cast<double>(static_cast<int>(m.state)), m.warm ? 1.0 : 0.0};
        r.insert(r.end(), raw, raw + width);
        rows.push_back(std::move(r));
      }
    } sink;
    sink.width = spec.width();
    FeatureSpec live_spec = spec;
    live_spec.standardize.mode = StandardizeMode::None;
    FeaturePipeline live(live_spec);
    live.set_sink(&sink);
    auto again = CsvTickSource::open(fixture_dir() + "/ticks.csv");
    SourceTick t;
    while (again->next(t)) live.on_tick(t, 0);
    ASSERT_GT(sink.rows.size(), 300u) << policy;
    const std::size_t cols = batch.columns.size();
    std::size_t matched = 0;
    for (const auto& r : sink.rows) {
      bool found = false;
      for (std::size_t b = 0; b < batch.rows && !found; ++b) {
        const double* br = &batch.raw[b * cols];
        if (br[0] != r[0] || br[1] != r[1]) continue;
        found = true;
        for (std::size_t c = 2; c < cols; ++c)
          ASSERT_TRUE(test::close(r[c], br[c], 0, 0)) << policy << " bar " << r[1] << " column " << batch.columns[c];
      }
      ASSERT_TRUE(found) << policy << ": live row for bar " << r[1] << " not in the batch output";
      ++matched;
    }
    EXPECT_EQ(matched, sink.rows.size());
  }
}

}  // namespace
}  // namespace tickinfer::features
