// Full-depth books as the features' input (pipeline/itch_book_ticks.hpp -> FeaturePipeline::on_book):
// a hand-built book whose every feature value is worked out by hand from docs/features.md, the
// specification's book kinds and their errors, a quote feed read as a one-level book, and the
// whole path (books, ticks, every book feature, bar rows; and the live ITCH path from wire bytes:
// forwarder, book stage, loss notices) allocating nothing after warm-up.
// The numpy/pandas reference on a generated day is tests/book_features_reference_test.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "book/book_set.hpp"
#include "book_model.hpp"
#include "features/batch.hpp"
#include "features/feature_pipeline.hpp"
#include "pipeline/alloc_counter.hpp"
#include "itch/itch_forwarder.hpp"
#include "pipeline/book_stage.hpp"
#include "pipeline/itch_book_ticks.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {
namespace {

using namespace book::testing;
using features::FeatureSpec;
using features::parse_feature_spec;

constexpr std::uint64_t kOpen = 34'200ull * 1'000'000'000;  // 09:30 in ns since midnight

const char* kHandSpec = R"([feature_set]
instruments = [1]
bar_ns = 1000000000
[[feature]]
kind = "mid"
[[feature]]
kind = "level_price"
side = "bid"
level = 2
[[feature]]
kind = "level_size"
side = "bid"
level = 2
[[feature]]
kind = "cumulative_depth"
side = "ask"
levels = 2
[[feature]]
kind = "depth_imbalance"
levels = 2
[[feature]]
kind = "queue_imbalance"
level = 1
[[feature]]
kind = "order_flow_imbalance"
levels = 2
ticks = 100
[[feature]]
kind = "order_rate"
flow = "add"
window_ns = 1000000000
[[feature]]
kind = "trade_imbalance"
trades = 5
)";

// Books, the tick source over them and the pipeline, driven message by message.
struct Rig {
  explicit Rig(const FeatureSpec& spec, book::Capacity cap = {1 << 12, 1 << 10, 64})
      : books(cap), pipeline(spec),
        ticks(books, config(spec), [this](const features::BookTick& t) { last = &pipeline.on_book(t, 0); }) {}
  static ItchBookTickConfig config(const FeatureSpec& spec) {
    ItchBookTickConfig c;
    c.symbols = {"AAA"};
    c.date = itch::Date{2019, 12, 30};
    c.depth = spec.book_depth();
    return c;
  }
  // Applies m at kOpen + i ms; returns the update it produced, or nullptr when it made no tick.
  const features::FeatureUpdate* feed(itch::Message m, int i) {
    m.header.timestamp_ns = kOpen + static_cast<std::uint64_t>(i) * 1'000'000;
    last = nullptr;
    ticks.before(m);
    const book::Applied a = books.apply(m);
    ticks.on_message(0, m, a);
    return last;
  }
  book::BookSet books;
  features::FeaturePipeline pipeline;
  ItchBookTicks ticks;
  const features::FeatureUpdate* last = nullptr;
};

itch::Message hidden_trade(std::uint16_t locate, std::uint32_t shares, std::uint32_t price) {
  itch::Message m = msg(itch::Type::Trade, locate);
  m.trade.shares = shares;
  m.trade.price = price;
  return m;
}

// Order flow that never crosses a book: bids below 10.00, asks above, 1 to 12 cents away; adds,
// deletes, partial and full executions and cancels, replaces on the same side.
std::vector<itch::Message> uncrossed_stream(std::size_t n, std::uint16_t symbols, std::uint64_t seed) {
  struct Live {
    std::uint64_t ref;
    std::uint16_t locate;
    bool bid;
    std::uint32_t shares;
  };
  std::mt19937_64 rng(seed);
  std::vector<Live> live;
  std::uint64_t next = 1;
  std::vector<itch::Message> out;
  const auto price = [&rng](bool bid) {
    const auto away = static_cast<std::uint32_t>(100 * (1 + rng() % 12));
    return bid ? 100'000 - away : 100'000 + away;
  };
  while (out.size() < n) {
    const std::uint64_t op = rng() % 100;
    if (live.size() < 2'000 || op < 45) {
      const auto loc = static_cast<std::uint16_t>(1 + rng() % symbols);
      const bool bid = rng() & 1;
      const auto shares = static_cast<std::uint32_t>(100 * (1 + rng() % 5));
      out.push_back(add(loc, next, bid ? 'B' : 'S', shares, price(bid)));
      live.push_back({next++, loc, bid, shares});
      continue;
    }
    const std::size_t i = rng() % live.size();
    Live o = live[i];
    live[i] = live.back();
    live.pop_back();
    if (op < 75) {
      out.push_back(del(o.locate, o.ref));
    } else if (op < 92) {
      const auto x = static_cast<std::uint32_t>(1 + rng() % o.shares);
      out.push_back(op < 85 ? exec(o.locate, o.ref, x) : cancel(o.locate, o.ref, x));
      if (x < o.shares) live.push_back({o.ref, o.locate, o.bid, o.shares - x});
    } else {
      out.push_back(replace(o.locate, o.ref, next, o.shares, price(o.bid)));
      live.push_back({next++, o.locate, o.bid, o.shares});
    }
  }
  return out;
}

// Columns of kHandSpec.
enum Col { Mid, BidPx2, BidSz2, AskDepth2, DepthImb2, QueueImb1, Ofi2, AddRate, TradeImb };

TEST(BookFeatures, EveryValueOfAHandBuiltBook) {
  Rig r(parse_feature_spec(kHandSpec));
  ASSERT_EQ(r.pipeline.spec().book_depth(), 2u);
  EXPECT_EQ(r.feed(directory(1, "AAA"), 0), nullptr);
  EXPECT_EQ(r.feed(add(2, 900, 'B', 100, 100'000), 0), nullptr);  // another symbol: no tick

  // Only a bid: the book has an empty side, the tick is dropped (and its add is not counted).
  const auto* u = r.feed(add(1, 1, 'B', 100, 100'000), 1);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->status, features::UpdateStatus::Dropped);
  EXPECT_EQ(u->reason, features::InvalidReason::EmptySide);

  // bids 10.00x100 | asks 10.02x200. First accepted tick: OFI 0; level 2 absent.
  u = r.feed(add(1, 2, 'S', 200, 100'200), 2);
  ASSERT_EQ(u->status, features::UpdateStatus::Applied);
  const double* v = u->values;
  EXPECT_DOUBLE_EQ(v[Mid], 10.01);
  EXPECT_DOUBLE_EQ(v[BidPx2], 10.00);  // absent: the deepest present price
  EXPECT_EQ(v[BidSz2], 0.0);
  EXPECT_EQ(v[AskDepth2], 200.0);
  EXPECT_DOUBLE_EQ(v[DepthImb2], -100.0 / 300.0);
  EXPECT_DOUBLE_EQ(v[QueueImb1], -100.0 / 300.0);
  EXPECT_EQ(v[Ofi2], 0.0);
  EXPECT_EQ(v[AddRate], 1.0);
  EXPECT_EQ(v[TradeImb], 0.0);

  // bids 10.00x100, 9.99x50: level 2 bid appears (+50).
  v = r.feed(add(1, 3, 'B', 50, 99'900), 3)->values;
  EXPECT_DOUBLE_EQ(v[BidPx2], 9.99);
  EXPECT_EQ(v[BidSz2], 50.0);
  EXPECT_DOUBLE_EQ(v[DepthImb2], -50.0 / 350.0);
  EXPECT_EQ(v[Ofi2], 50.0);
  EXPECT_EQ(v[AddRate], 2.0);

  // asks 10.02x200, 10.03x70: level 2 ask appears (-70).
  v = r.feed(add(1, 4, 'S', 70, 100'300), 4)->values;
  EXPECT_EQ(v[AskDepth2], 270.0);
  EXPECT_DOUBLE_EQ(v[DepthImb2], -120.0 / 420.0);
  EXPECT_EQ(v[Ofi2], -20.0);
  EXPECT_EQ(v[AddRate], 3.0);

  // E 50 of the resting ask: a buyer-initiated trade at 10.02; asks 10.02x150 (+50 of OFI).
  v = r.feed(exec(1, 2, 50), 5)->values;
  EXPECT_EQ(v[AskDepth2], 220.0);
  EXPECT_DOUBLE_EQ(v[QueueImb1], -50.0 / 250.0);
  EXPECT_EQ(v[Ofi2], 30.0);
  EXPECT_EQ(v[TradeImb], 1.0);
  EXPECT_EQ(v[AddRate], 3.0);

  // X 30 of the best bid: bids 10.00x70 (-30).
  v = r.feed(cancel(1, 1, 30), 6)->values;
  EXPECT_DOUBLE_EQ(v[QueueImb1], -80.0 / 220.0);
  EXPECT_EQ(v[Ofi2], 0.0);

  // U 9.99x50 -> 10.01x60: bids 10.01x60, 10.00x70 (both bid levels improve: +60 +70).
  v = r.feed(replace(1, 3, 5, 60, 100'100), 7)->values;
  EXPECT_DOUBLE_EQ(v[Mid], 10.015);
  EXPECT_DOUBLE_EQ(v[BidPx2], 10.00);
  EXPECT_EQ(v[BidSz2], 70.0);
  EXPECT_EQ(v[Ofi2], 130.0);
  EXPECT_EQ(v[AddRate], 4.0);

  // D of the level-2 ask: it becomes absent (+70).
  v = r.feed(del(1, 4), 8)->values;
  EXPECT_EQ(v[AskDepth2], 150.0);
  EXPECT_EQ(v[Ofi2], 200.0);

  // A hidden execution: a trade of unknown side; the book, and so OFI, unchanged.
  v = r.feed(hidden_trade(1, 100, 100'150), 9)->values;
  EXPECT_DOUBLE_EQ(v[TradeImb], 50.0 / 150.0);
  EXPECT_EQ(v[Ofi2], 200.0);

  // 1.5 s later the window of the add rate holds none of the adds.
  v = r.feed(add(1, 6, 'B', 10, 99'000), 1509)->values;
  EXPECT_EQ(v[AddRate], 1.0);
  EXPECT_EQ(r.pipeline.counters().accepted, 9u);
  EXPECT_EQ(r.pipeline.counters().dropped, 1u);
}

TEST(BookFeatures, TheLobSnapshotIsFortyColumnsInDeepLobOrder) {
  const FeatureSpec s = parse_feature_spec(
      "[feature_set]\ninstruments = [1]\n[[feature]]\nkind = \"lob_snapshot\"\nlevels = 10\n");
  ASSERT_EQ(s.width(), 40u);
  EXPECT_EQ(s.features[0].name, "ask_price_1");
  EXPECT_EQ(s.features[1].name, "ask_size_1");
  EXPECT_EQ(s.features[2].name, "bid_price_1");
  EXPECT_EQ(s.features[3].name, "bid_size_1");
  EXPECT_EQ(s.features[39].name, "bid_size_10");
  EXPECT_EQ(s.book_depth(), 10u);
  EXPECT_NE(s.canonical_features().find("level_price(side=ask,level=1)"), std::string::npos);

  Rig r(s);
  r.feed(directory(1, "AAA"), 0);
  for (std::uint32_t i = 0; i < 3; ++i) {
    r.feed(add(1, 10 + i, 'B', 100 * (i + 1), 100'000 - 100 * i), 1);
    r.feed(add(1, 20 + i, 'S', 10 * (i + 1), 100'100 + 100 * i), 1);
  }
  const double* v = r.last->values;
  EXPECT_DOUBLE_EQ(v[0], 10.01);  // ask price 1
  EXPECT_EQ(v[1], 10.0);
  EXPECT_DOUBLE_EQ(v[2], 10.00);  // bid price 1
  EXPECT_EQ(v[3], 100.0);
  EXPECT_DOUBLE_EQ(v[8], 10.03);  // ask price 3
  EXPECT_DOUBLE_EQ(v[10], 9.98);  // bid price 3
  EXPECT_EQ(v[11], 300.0);
  EXPECT_DOUBLE_EQ(v[12], 10.03);  // level 4 absent: the deepest price, size 0
  EXPECT_EQ(v[13], 0.0);
  EXPECT_DOUBLE_EQ(v[38], 9.98);
  EXPECT_EQ(v[39], 0.0);
}

TEST(BookFeatures, SpecificationMistakesAreNamed) {
  const auto err = [](const std::string& feature) {
    try {
      parse_feature_spec("[feature_set]\ninstruments = [1]\n[[feature]]\n" + feature, "s.toml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(err("kind = \"level_price\"\nlevel = 1\n").find("missing parameter 'side'"), std::string::npos);
  EXPECT_NE(err("kind = \"level_price\"\nside = \"buy\"\nlevel = 1\n").find("expected 'bid' or 'ask'"),
            std::string::npos);
  EXPECT_NE(err("kind = \"level_size\"\nside = \"ask\"\nlevel = 21\n").find("out of range [1, 20]"),
            std::string::npos);
  EXPECT_NE(err("kind = \"depth_imbalance\"\nlevel = 3\n").find("unknown parameter 'level'"), std::string::npos);
  EXPECT_NE(err("kind = \"order_flow_imbalance\"\nlevels = 3\n").find("missing parameter 'ticks'"),
            std::string::npos);
  EXPECT_NE(err("kind = \"order_rate\"\nflow = \"modify\"\nwindow_ns = 5\n").find("expected 'add'"),
            std::string::npos);
  EXPECT_NE(err("kind = \"order_rate\"\nflow = \"add\"\n").find("missing parameter 'window_ns'"), std::string::npos);
  EXPECT_NE(err("kind = \"lob_snapshot\"\nlevels = 17\n").find("out of range [1, 16]"), std::string::npos);
  EXPECT_NE(err("kind = \"lob_snapshot\"\nlevels = 5\nname = \"x\"\n").find("unknown parameter 'name'"),
            std::string::npos);
  EXPECT_NE(err("kind = \"lob_snapshot\"\n").find("missing parameter 'levels'"), std::string::npos);
  EXPECT_EQ(err("kind = \"queue_imbalance\"\nlevel = 2\n"), "accepted");
}

// A quote feed has no depth: level 1 is the quote, deeper levels are absent.
TEST(BookFeatures, AQuoteFeedIsAOneLevelBook) {
  features::FeaturePipeline p(parse_feature_spec(kHandSpec));
  md::Quote q;
  q.instrument = 1;
  q.exchange_ts_ns = 1'000;
  q.bid_price = 1'000'000'000;  // 10.00
  q.ask_price = 1'002'000'000;  // 10.02
  q.bid_size = 100;
  q.ask_size = 300;
  const double* v = p.on_event(md::Event::of(q), 0).values;
  EXPECT_DOUBLE_EQ(v[BidPx2], 10.00);
  EXPECT_EQ(v[BidSz2], 0.0);
  EXPECT_EQ(v[AskDepth2], 300.0);
  EXPECT_DOUBLE_EQ(v[DepthImb2], -0.5);
  EXPECT_DOUBLE_EQ(v[QueueImb1], -0.5);
  EXPECT_EQ(v[AddRate], 0.0);
}

// Books, ticks and every book feature, 300,000 messages over 8 symbols (5 selected), with bar
// rows closing throughout: no allocation once constructed.
FeatureSpec every_book_feature_spec() {
  return parse_feature_spec(R"([feature_set]
instruments = [1, 2, 3, 4, 5]
bar_ns = 100000
gap_limit = 4
window = 8
[[feature]]
kind = "mid"
[[feature]]
kind = "trade_imbalance"
trades = 20
[[feature]]
kind = "cumulative_depth"
side = "bid"
levels = 10
[[feature]]
kind = "depth_imbalance"
levels = 10
[[feature]]
kind = "queue_imbalance"
level = 3
[[feature]]
kind = "order_flow_imbalance"
levels = 10
ticks = 200
[[feature]]
kind = "order_rate"
flow = "cancel"
window_ns = 5000000
capacity = 256
[[feature]]
kind = "lob_snapshot"
levels = 10
)");
}

std::vector<itch::Message> timed_stream() {
  std::vector<itch::Message> stream;
  for (std::uint16_t l = 1; l <= 8; ++l) stream.push_back(directory(l, ("S" + std::to_string(l)).c_str()));
  for (const auto& m : uncrossed_stream(300'000, 8, 21)) stream.push_back(m);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i].header.timestamp_ns = kOpen + i * 1'000;
  return stream;
}

TEST(BookFeatures, TheBookTickPathNeverAllocates) {
  const FeatureSpec spec = every_book_feature_spec();
  std::vector<itch::Message> stream;
  stream = timed_stream();
  book::BookSet books(book::Capacity{1 << 16, 1 << 14, 512});
  features::FeaturePipeline pipeline(spec);
  ItchBookTickConfig cfg;
  cfg.symbols = {"S1", "S2", "S3", "S5", "S8"};
  cfg.date = itch::Date{2019, 12, 30};
  cfg.depth = spec.book_depth();
  double sum = 0;
  ItchBookTicks ticks(books, cfg, [&](const features::BookTick& t) {
    const features::FeatureUpdate& u = pipeline.on_book(t, 0);
    if (u.values) sum += u.values[5];
  });
  const auto run = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      ticks.before(stream[i]);
      const book::Applied a = books.apply(stream[i]);
      ticks.on_message(i + 1, stream[i], a);
    }
  };
  run(0, 20'000);  // warm-up
  const std::uint64_t before = allocation_count();
  run(20'000, stream.size());
  EXPECT_EQ(allocation_count() - before, 0u);
  const auto& c = pipeline.counters();
  EXPECT_GT(c.accepted, 100'000u) << features::format_counters(c);
  EXPECT_GT(c.rows_observed, 10'000u);
  EXPECT_GT(ticks.ticks(), c.accepted / 2);
  EXPECT_TRUE(std::isfinite(sum));
}

// The live ITCH path from wire bytes, as `tickinfer run` runs it inline: the feed thread's
// forwarder (decode, select, forward whole) into the compute thread's book stage and the
// features; a loss on the way becomes a loss notice that marks the books unsynced.
TEST(BookFeatures, TheLiveItchPathNeverAllocates) {
  const FeatureSpec spec = every_book_feature_spec();
  std::vector<std::vector<std::uint8_t>> wire;
  for (const auto& m : timed_stream()) wire.push_back(encode(m));
  const std::vector<std::string> symbols = {"S1", "S2", "S3", "S5", "S8"};
  itch::ItchForwarder forwarder(symbols, itch::Date{2019, 12, 30});
  features::FeaturePipeline pipeline(spec);
  ItchBookTickConfig cfg;
  cfg.symbols = symbols;
  cfg.date = itch::Date{2019, 12, 30};
  cfg.depth = spec.book_depth();
  cfg.capacity = book::Capacity{1 << 16, 1 << 14, 512};
  BookStage stage(cfg, [&pipeline](const features::BookTick& t) { pipeline.on_book(t, 0); });
  struct ToStage final : feed::EventEmitter {
    BookStage* stage;
    std::uint64_t seq = 0, events = 0;
    void emit(const md::Event& e) noexcept override {
      ++events;
      stage->on_message(seq, e.exchange);
    }
  } out;
  out.stage = &stage;
  const auto run = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      out.seq = i + 1;
      forwarder.decode(i + 1, wire[i].data(), static_cast<std::uint16_t>(wire[i].size()), out);
    }
  };
  run(0, 20'000);
  const std::uint64_t before = allocation_count();
  run(20'000, 150'000);
  forwarder.on_lost(150'001, 3);
  run(150'000, wire.size());
  EXPECT_EQ(allocation_count() - before, 0u);
  EXPECT_EQ(forwarder.decode_counters().total_decoded, wire.size());
  EXPECT_EQ(stage.decode_counters().total_decoded, forwarder.forwarded());  // every forwarded message applied
  EXPECT_LT(forwarder.forwarded(), wire.size());                             // S4, S6, S7 stay on the feed thread
  EXPECT_EQ(out.events, forwarder.forwarded() + 1);                          // and one loss notice
  EXPECT_EQ(stage.loss_notices(), 1u);
  EXPECT_GT(stage.books().totals().while_unsynced, 0u);
  // After the loss no book can be trusted: its ticks are invalid (drop policy), counted by reason.
  const auto& c = pipeline.counters();
  EXPECT_GT(c.invalid_by_reason[static_cast<int>(features::InvalidReason::BookUnsynced)], 10'000u);
  EXPECT_GT(pipeline.counters().accepted, 50'000u);  // until the loss
  EXPECT_EQ(stage.ticks(), pipeline.counters().events);
}

}  // namespace
}  // namespace tickinfer::pipeline
