// The live pipeline's behaviour, event by event, with values worked out by hand: validation
// policies and their counters, bar rows, live gap handling (no row until the gap is bridged;
// long gaps invalid at once), window readiness and unknown instruments.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "features/batch.hpp"
#include "features/feature_pipeline.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

struct Row {
  RowMeta meta;
  std::vector<double> raw;
};
struct Recorder final : RowSink {
  std::vector<Row> rows;
  void on_row(const RowMeta& m, const double* raw, const double*) noexcept override {
    rows.push_back({m, std::vector<double>(raw, raw + 2)});
  }
};

// Instrument 1, bars of 100 ns, gap limit 2, window 3; features mid and spread_bps.
FeatureSpec small_spec(InvalidPolicy policy) {
  FeatureSpec s = parse_feature_spec("[feature_set]\ninstruments = [1]\nbar_ns = 100\ngap_limit = 2\nwindow = 3\n"
                                     "[[feature]]\nkind = \"mid\"\n[[feature]]\nkind = \"spread_bps\"\n");
  s.invalid_policy = policy;
  return s;
}

md::Event quote(std::int64_t ts, double bid, double ask, std::uint32_t inst = 1) {
  md::Quote q;
  q.instrument = inst;
  q.exchange_ts_ns = ts;
  q.bid_price = static_cast<std::int64_t>(std::llround(bid * 1e8));
  q.ask_price = static_cast<std::int64_t>(std::llround(ask * 1e8));
  q.bid_size = q.ask_size = 10;
  return md::Event::of(q);
}

md::Event trade(std::int64_t ts, double price, std::uint32_t size) {
  md::Trade t;
  t.instrument = 1;
  t.exchange_ts_ns = ts;
  t.price = static_cast<std::int64_t>(std::llround(price * 1e8));
  t.size = size;
  t.aggressor = md::Side::Buy;
  return md::Event::of(t);
}

TEST(FeaturesPipeline, EveryInvalidInputIsCountedByReasonAndNeverApplied) {
  FeaturePipeline p(small_spec(InvalidPolicy::Drop));
  p.on_event(quote(10, 9, 11), 0);
  struct Case {
    SourceTick tick;
    InvalidReason reason;
  };
  std::vector<Case> cases;
  SourceTick nan_tick;
  nan_tick.event = quote(11, 0, 11);
  nan_tick.flaw = InvalidReason::NonFinite;  // what the CSV source reports for "nan"
  cases.push_back({nan_tick, InvalidReason::NonFinite});
  SourceTick neg;
  neg.event = trade(12, 10, 0);
  neg.flaw = InvalidReason::BadSize;  // a negative size in the source
  cases.push_back({neg, InvalidReason::BadSize});
  cases.push_back({SourceTick{quote(13, 0, 11), InvalidReason::None, 0}, InvalidReason::NonPositivePrice});
  cases.push_back({SourceTick{quote(14, 12, 11), InvalidReason::None, 0}, InvalidReason::CrossedBook});
  md::Event empty = quote(15, 9, 11);
  empty.quote.ask_size = 0;
  cases.push_back({SourceTick{empty, InvalidReason::None, 0}, InvalidReason::EmptySide});
  cases.push_back({SourceTick{trade(16, 10, 0), InvalidReason::None, 0}, InvalidReason::BadSize});
  cases.push_back({SourceTick{trade(17, -1, 3), InvalidReason::None, 0}, InvalidReason::NonPositivePrice});
  cases.push_back({SourceTick{quote(5, 9, 11), InvalidReason::None, 0}, InvalidReason::TimeBackwards});
  for (const auto& c : cases) {
    const FeatureUpdate& u = p.on_tick(c.tick, 0);
    EXPECT_EQ(u.status, UpdateStatus::Dropped);
    EXPECT_EQ(u.reason, c.reason);
    EXPECT_EQ(u.values[0], 10.0);  // mid of the only valid quote, untouched
    EXPECT_DOUBLE_EQ(u.values[1], 2.0 / 10.0 * 1e4);
  }
  const auto& k = p.counters();
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::NonFinite)], 1u);
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::BadSize)], 2u);
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::NonPositivePrice)], 2u);
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::CrossedBook)], 1u);
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::EmptySide)], 1u);
  EXPECT_EQ(k.invalid_by_reason[static_cast<int>(InvalidReason::TimeBackwards)], 1u);
  EXPECT_EQ(k.dropped, 8u);
  EXPECT_EQ(k.accepted, 1u);
  // A locked book (bid == ask) is valid.
  EXPECT_EQ(p.on_event(quote(20, 10, 10), 0).status, UpdateStatus::Applied);
}

TEST(FeaturesPipeline, ShortGapIsInterpolatedOnlyWhenBridged) {
  FeaturePipeline p(small_spec(InvalidPolicy::Drop));
  Recorder rec;
  p.set_sink(&rec);
  EXPECT_EQ(p.on_event(quote(10, 9, 11), 0).rows_emitted, 0u);   // bar 0 open, mid 10
  EXPECT_EQ(p.on_event(quote(150, 10, 12), 0).rows_emitted, 1u);  // closes bar 0; bar 1 mid 11
  EXPECT_EQ(p.on_event(quote(420, 13, 15), 0).rows_emitted, 1u);  // closes bar 1; bars 2, 3 empty
  ASSERT_EQ(rec.rows.size(), 2u);  // nothing for bars 2, 3 yet: the right bracket is not final
  EXPECT_EQ(p.on_event(quote(510, 14, 16), 0).rows_emitted, 3u);  // closes bar 4 (mid 14)
  ASSERT_EQ(rec.rows.size(), 5u);
  const double want_mid[] = {10, 11, 12, 13, 14};
  const RowState want_state[] = {RowState::Observed, RowState::Observed, RowState::Interpolated,
                                 RowState::Interpolated, RowState::Observed};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(rec.rows[i].meta.bar, i);
    EXPECT_EQ(rec.rows[i].meta.state, want_state[i]) << i;
    EXPECT_DOUBLE_EQ(rec.rows[i].raw[0], want_mid[i]) << i;
  }
  // spread_bps interpolates linearly too: bar 1 2/11*1e4, bar 4 2/14*1e4.
  const double s1 = 2.0 / 11 * 1e4, s4 = 2.0 / 14 * 1e4;
  EXPECT_NEAR(rec.rows[2].raw[1], s1 + (s4 - s1) / 3, 1e-9);
  EXPECT_EQ(p.counters().gaps_interpolated, 1u);
  EXPECT_EQ(p.counters().rows_interpolated, 2u);
}

TEST(FeaturesPipeline, LongGapIsInvalidAsSoonAsKnownAndWithholdsTheWindow) {
  FeaturePipeline p(small_spec(InvalidPolicy::Drop));
  Recorder rec;
  p.set_sink(&rec);
  p.on_event(quote(10, 9, 11), 0);
  p.on_event(quote(110, 9, 11), 0);
  p.on_event(quote(210, 9, 11), 0);
  EXPECT_TRUE(p.on_event(quote(310, 9, 11), 0).window_ready);  // bars 0..2 observed, T = 3
  // Silence: at exchange time 750 (bar 7) bars 4, 5, 6 are missing: 3 > gap_limit 2.
  p.on_timer(750);
  ASSERT_EQ(rec.rows.size(), 7u);  // bar 3 closed, then 4..6 invalid
  for (int b = 4; b <= 6; ++b) {
    EXPECT_EQ(rec.rows[b].meta.state, RowState::Invalid);
    EXPECT_TRUE(std::isnan(rec.rows[b].raw[0]));
  }
  EXPECT_EQ(p.counters().gaps_invalidated, 1u);
  EXPECT_FALSE(p.window(0).ready());
  // Bar 7 is still missing; data resumes in bar 8: bar 7 belongs to the invalid run, emitted at once.
  const FeatureUpdate& u = p.on_event(quote(810, 9, 11), 0);
  EXPECT_EQ(u.rows_emitted, 1u);
  EXPECT_EQ(rec.rows.back().meta.bar, 7);
  EXPECT_EQ(rec.rows.back().meta.state, RowState::Invalid);
  p.on_event(quote(910, 9, 11), 0);   // bar 8 observed
  p.on_event(quote(1010, 9, 11), 0);  // bar 9
  EXPECT_FALSE(p.window(0).ready());  // bars 7 (invalid), 8, 9
  EXPECT_TRUE(p.on_event(quote(1110, 9, 11), 0).window_ready);  // bars 8, 9, 10
  // Rows emitted while the full window held an invalid row: bars 4, 5, 6, 7, 8 and 9.
  EXPECT_EQ(p.counters().windows_withheld, 6u);
}

TEST(FeaturesPipeline, PoliciesDecideWhatAnInvalidOnlyBarBecomes) {
  auto run = [](InvalidPolicy policy) {
    FeaturePipeline p(small_spec(policy));
    Recorder rec;
    p.set_sink(&rec);
    p.on_event(quote(10, 9, 11), 0);    // bar 0
    p.on_event(quote(110, 10, 12), 0);  // bar 1
    SourceTick bad;
    bad.event = quote(220, 50, 60);
    bad.flaw = InvalidReason::NonFinite;
    p.on_tick(bad, 0);                  // bar 2 holds only an invalid tick
    p.on_event(quote(310, 12, 14), 0);  // bar 3
    p.on_event(quote(410, 12, 14), 0);  // closes bar 3
    return rec.rows;
  };
  const auto drop = run(InvalidPolicy::Drop);
  ASSERT_EQ(drop.size(), 4u);
  EXPECT_EQ(drop[2].meta.state, RowState::Interpolated);  // a one-bar gap
  EXPECT_DOUBLE_EQ(drop[2].raw[0], 12.0);
  const auto hold = run(InvalidPolicy::HoldLast);
  ASSERT_EQ(hold.size(), 4u);
  EXPECT_EQ(hold[2].meta.state, RowState::Observed);  // observed with the last valid values
  EXPECT_DOUBLE_EQ(hold[2].raw[0], 11.0);
  const auto mark = run(InvalidPolicy::MarkInvalid);
  ASSERT_EQ(mark.size(), 4u);
  EXPECT_EQ(mark[2].meta.state, RowState::Invalid);
  EXPECT_TRUE(std::isnan(mark[2].raw[0]));
  EXPECT_EQ(mark[3].meta.state, RowState::Observed);
}

TEST(FeaturesPipeline, WarmFlagsAndModelInputFollowTheWindows) {
  FeatureSpec s = parse_feature_spec("[feature_set]\ninstruments = [1]\n[[feature]]\nkind = \"log_return\"\nticks = 2\n"
                                     "[[feature]]\nkind = \"time_since_trade\"\n");
  FeaturePipeline p(s);
  const FeatureUpdate* u = &p.on_event(quote(1'000'000'000, 9, 11), 0);
  EXPECT_EQ(u->warm_mask, 0u);
  EXPECT_TRUE(u->has_values);
  u = &p.on_event(quote(1'500'000'000, 10, 12), 0);
  EXPECT_DOUBLE_EQ(u->values[0], std::log(11.0 / 10.0));
  EXPECT_NEAR(u->values[1], 0.5, 1e-15);  // no trade yet: since the first event
  u = &p.on_event(trade(2'000'000'000, 11, 5), 0);
  EXPECT_EQ(u->warm_mask, 2u);  // a trade was seen; only 2 quotes so far
  EXPECT_EQ(u->values[1], 0.0);
  u = &p.on_event(quote(2'250'000'000, 11, 13), 0);
  EXPECT_EQ(u->warm_mask, 3u);
  EXPECT_TRUE(u->all_warm);
  EXPECT_DOUBLE_EQ(u->values[0], std::log(12.0 / 10.0));
  EXPECT_FLOAT_EQ(u->model_input[0], static_cast<float>(std::log(12.0 / 10.0)));
  EXPECT_NEAR(u->values[1], 0.25, 1e-15);
}

TEST(FeaturesPipeline, UnknownInstrumentsAreCountedOrRefused) {
  FeatureSpec s = small_spec(InvalidPolicy::Drop);
  FeaturePipeline p(s);
  const FeatureUpdate& u = p.on_event(quote(10, 9, 11, 99), 0);
  EXPECT_EQ(u.status, UpdateStatus::UnknownInstrument);
  EXPECT_EQ(u.values, nullptr);
  EXPECT_EQ(p.counters().unknown_instrument, 1u);
  s.unknown_instrument = UnknownInstrumentPolicy::Fail;
  CsvTickSource src("ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n1,1,Q,1,2,1,1,,,\n2,99,Q,1,2,1,1,,,\n",
                    "t.csv");
  try {
    compute_features(s, src);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3: instrument 99 is not in the feature set"), std::string::npos) << e.what();
  }
}

TEST(FeaturesPipeline, AnOutageOfAnyLengthCostsOnlyTheWindow) {
  FeaturePipeline p(small_spec(InvalidPolicy::Drop));  // bars of 100 ns, T = 3
  struct RunSink final : RowSink {
    std::int64_t rows = 0, runs = 0, first = -1, count = 0;
    void on_row(const RowMeta&, const double*, const double*) noexcept override { ++rows; }
    void on_invalid_run(std::uint32_t, std::int64_t f, std::int64_t n, const double*, const double*) noexcept override {
      ++runs;
      first = f;
      count = n;
    }
  } sink;
  p.set_sink(&sink);
  p.on_event(quote(10, 9, 11), 0);
  // 10^16 bars later (a year of 100 ns bars would be 3e14): one call, O(T) work.
  const std::int64_t later = std::int64_t{1} << 60;
  const FeatureUpdate& u = p.on_event(quote(later, 9, 11), 0);
  EXPECT_EQ(sink.rows, 1);  // bar 0
  EXPECT_EQ(sink.runs, 1);
  EXPECT_EQ(sink.first, 1);
  EXPECT_EQ(sink.count, later / 100 - 1);
  EXPECT_EQ(p.counters().rows_invalid, static_cast<std::uint64_t>(later / 100 - 1));
  EXPECT_EQ(u.rows_emitted, 0xFFFFFFFFu);  // saturated
  EXPECT_FALSE(u.window_ready);
}

TEST(FeaturesPipeline, TimestampsOutsideTheEpochRangeAreInvalid) {
  FeaturePipeline p(small_spec(InvalidPolicy::MarkInvalid));
  EXPECT_EQ(p.on_event(quote(-5, 9, 11), 0).reason, InvalidReason::OutOfRange);
  EXPECT_EQ(p.on_event(quote(std::int64_t{1} << 62, 9, 11), 0).reason, InvalidReason::OutOfRange);
  p.on_timer(-1);  // ignored, no crash
  EXPECT_EQ(p.on_event(quote(5, 9, 11), 0).status, UpdateStatus::Applied);
}

TEST(FeaturesPipeline, BatchRefusesAGridItCannotHold) {
  CsvTickSource src("ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n1,1,Q,1,2,1,1,,,\n"
                    "4000000000000000000,1,Q,1,2,1,1,,,\n",
                    "t.csv");
  try {
    compute_features(small_spec(InvalidPolicy::Drop), src);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timestamps span"), std::string::npos) << e.what();
  }
}

TEST(FeaturesPipeline, ManyInstrumentsAreLookedUpIndependently) {
  std::string text = "[feature_set]\ninstruments = [";
  for (int i = 0; i < 300; ++i) text += (i ? ", " : "") + std::to_string(i * 7919);
  text += "]\n[[feature]]\nkind = \"mid\"\n";
  FeaturePipeline p(parse_feature_spec(text));
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(p.instrument_index(static_cast<std::uint32_t>(i * 7919)), i);
    const FeatureUpdate& u = p.on_event(quote(10, 1 + i, 3 + i, static_cast<std::uint32_t>(i * 7919)), 0);
    ASSERT_EQ(u.values[0], 2.0 + i);
  }
  EXPECT_EQ(p.instrument_index(1), -1);
}

}  // namespace
}  // namespace tickinfer::features
