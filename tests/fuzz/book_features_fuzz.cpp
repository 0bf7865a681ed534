// libFuzzer: ITCH wire bytes through the live book-feature path, as `tickinfer run` runs it with
// [feed] protocol = "itch50": the feed thread's ItchForwarder (decode, select, forward whole), the
// compute side's BookStage (decode again, apply to the books, one BookTick per change or print)
// and FeaturePipeline::on_book with every book feature and the top-of-book and trade ones.
// The input is a sequence of small operations turned into messages of a few symbols (two of them
// selected) with small refs, prices and timestamps that may go backwards, plus raw bytes, losses
// and messages of an unselected symbol. Checked after every step: every tick's top-N view is
// ordered and within the depth, every forwarded message decodes on the compute side, and the
// pipeline's counters add up (every tick counted once, accepted or invalid).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../book_model.hpp"
#include "features/feature_pipeline.hpp"
#include "itch/itch_forwarder.hpp"
#include "pipeline/book_stage.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::book::testing;

constexpr std::size_t kOpBytes = 6;

const features::FeatureSpec& spec() {
  static const features::FeatureSpec s = features::parse_feature_spec(R"([feature_set]
instruments = [1, 2]
bar_ns = 1000
gap_limit = 3
invalid_policy = "mark_invalid"
window = 4
[[feature]]
kind = "mid"
[[feature]]
kind = "log_return"
ticks = 3
[[feature]]
kind = "trade_imbalance"
trades = 4
[[feature]]
kind = "depth_imbalance"
levels = 3
[[feature]]
kind = "queue_imbalance"
level = 2
[[feature]]
kind = "order_flow_imbalance"
levels = 3
ticks = 5
[[feature]]
kind = "order_rate"
flow = "cancel"
window_ns = 3000
capacity = 8
[[feature]]
kind = "cumulative_depth"
side = "ask"
levels = 3
[[feature]]
kind = "lob_snapshot"
levels = 3
)");
  return s;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "book features fuzz: %s\n", what);
  std::abort();
}

struct Sink final : feed::EventEmitter {
  pipeline::BookStage* stage = nullptr;
  std::uint64_t seq = 0, events = 0;
  void emit(const md::Event& e) noexcept override {
    if (e.kind != md::Event::Kind::Exchange) fail("the forwarder emitted a non-exchange event");
    ++events;
    stage->on_message(seq, e.exchange);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const features::FeatureSpec& s = spec();
  const itch::Date date{2019, 12, 30};
  itch::ItchForwarder forwarder({"AAA", "BBB"}, date);
  features::FeaturePipeline pipeline(s);
  pipeline::ItchBookTickConfig cfg;
  cfg.symbols = {"AAA", "BBB"};
  cfg.date = date;
  cfg.depth = s.book_depth();
  cfg.capacity = book::Capacity{24, 12, 8};
  std::uint64_t ticks = 0;
  pipeline::BookStage stage(cfg, [&](const features::BookTick& t) {
    ++ticks;
    const features::BookLevels& b = *t.levels;
    if (b.bid_count > cfg.depth || b.ask_count > cfg.depth) fail("more levels than the depth");
    for (std::uint32_t i = 1; i < b.bid_count; ++i)
      if (!(b.bid_price[i] < b.bid_price[i - 1])) fail("bids not in falling price order");
    for (std::uint32_t i = 1; i < b.ask_count; ++i)
      if (!(b.ask_price[i] > b.ask_price[i - 1])) fail("asks not in rising price order");
    pipeline.on_book(t, 0);
  });
  Sink sink;
  sink.stage = &stage;
  std::vector<std::uint8_t> wire;
  std::uint64_t ts = 34'200'000'000'000;
  for (std::size_t at = 0; at + kOpBytes <= size; at += kOpBytes) {
    const std::uint8_t* b = data + at;
    const std::uint16_t loc = static_cast<std::uint16_t>(1 + b[1] % 3);  // 3 is not selected
    const std::uint64_t ref = b[2] % 32;
    const std::uint32_t shares = b[3] % 7 * 10;
    const std::uint32_t price = 1000 + b[4] % 9;
    const char side = b[5] & 1 ? 'B' : 'S';
    ts += b[5] < 8 ? 0 : static_cast<std::uint64_t>(b[5]) * 17;
    if (b[5] == 3) ts -= 500;  // time going backwards
    itch::Message m;
    switch (b[0] % 11) {
      case 0: m = add(loc, ref, side, shares, price); break;
      case 1: m = exec(loc, ref, shares); break;
      case 2: m = exec_price(loc, ref, shares, price, b[5] & 2 ? 'Y' : 'N'); break;
      case 3: m = cancel(loc, ref, shares); break;
      case 4: m = del(loc, ref); break;
      case 5: m = replace(loc, ref, b[4] % 32, shares, price); break;
      case 6: m = directory(loc, loc == 1 ? "AAA" : loc == 2 ? "BBB" : "CCC"); break;
      case 7: forwarder.on_lost(1, 1); continue;
      case 8: {  // raw bytes as a message: mostly undecodable, counted and skipped
        const std::size_t n = std::min<std::size_t>(b[1] % 52, size - at);
        sink.seq = at;
        forwarder.decode(at, data + at, static_cast<std::uint16_t>(n), sink);
        continue;
      }
      case 9: m = add(loc, ref, side, shares, price, true); break;
      default: pipeline.on_timer(static_cast<std::int64_t>(ts) + 1'577'682'000'000'000LL); continue;
    }
    m.header.timestamp_ns = ts;
    wire = encode(m);
    sink.seq = at;
    forwarder.decode(at, wire.data(), static_cast<std::uint16_t>(wire.size()), sink);
  }
  if (stage.decode_counters().total_decoded != sink.events - stage.loss_notices())
    fail("a forwarded message did not decode on the compute side");
  if (stage.ticks() != ticks) fail("the stage's tick count differs from the ticks seen");
  const auto& c = pipeline.counters();
  if (c.events != ticks) fail("the pipeline's events differ from the ticks");
  if (c.accepted + c.invalid_total() != c.events) fail("accepted + invalid != events");
  return 0;
}
