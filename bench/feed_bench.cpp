// Feed hot-path microbenchmarks (one thread, no sockets): the sequencer per in-order packet
// (bar: <= 50 ns), A/B arbitration per packet copy, MoldUDP64 parse, message decode and the SPSC
// ring. Run pinned: taskset -c 1 build/bench/feed_bench
#include <benchmark/benchmark.h>

#include <vector>

#include "feed/arbiter.hpp"
#include "feed/byte_order.hpp"
#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer::feed {
namespace {

struct CountingSink : SequencerSink {
  std::uint64_t n = 0;
  std::uint64_t bytes = 0;
  void on_message(std::uint64_t, const std::uint8_t*, std::uint16_t len, const RxMeta&,
                  std::int64_t) noexcept override {
    ++n;
    bytes += len;
  }
};

// One packet of `count` quotes, its seq rewritten per iteration (so no parse in the loop).
struct PacketTemplate {
  std::vector<std::uint8_t> bytes;
  PacketView view;
  explicit PacketTemplate(int count) {
    bytes.resize(kHeaderBytes + count * (2 + kQuoteBytes));
    PacketBuilder b(bytes.data(), bytes.size());
    b.start(Session::from("BENCH"), 1);
    for (int i = 0; i < count; ++i) {
      md::Quote q;
      q.instrument = i;
      std::uint8_t m[kQuoteBytes];
      encode_quote(q, m);
      b.add(m, kQuoteBytes);
    }
    bytes.resize(b.finish());
    parse_packet(bytes.data(), bytes.size(), view);
  }
};

void BM_SequencerInOrderPacket(benchmark::State& state) {
  const int per_packet = static_cast<int>(state.range(0));
  PacketTemplate t(per_packet);
  CountingSink sink;
  SequencerConfig c;
  Sequencer seq(c, sink);
  PacketView v = t.view;
  std::uint64_t s = 1;
  std::int64_t now = 0;
  for (auto _ : state) {
    v.seq = s;
    seq.on_packet(v, RxMeta{now, 0}, now);
    s += per_packet;
    ++now;
  }
  benchmark::DoNotOptimize(sink.n);
  state.SetItemsProcessed(state.iterations());
  state.counters["msgs"] = per_packet;
}
BENCHMARK(BM_SequencerInOrderPacket)->Arg(1)->Arg(4);

// Both lines deliver every packet (A first): one iteration = one packet copy from each line.
void BM_ArbiterABPacketPair(benchmark::State& state) {
  PacketTemplate t(1);
  CountingSink sink;
  SequencerConfig c;
  Sequencer seq(c, sink);
  Arbiter arb(seq);
  PacketView v = t.view;
  std::uint64_t s = 1;
  std::int64_t now = 0;
  for (auto _ : state) {
    v.seq = s++;
    arb.on_packet(kLineA, v, now, now);
    arb.on_packet(kLineB, v, now + 500, now);
    ++now;
  }
  benchmark::DoNotOptimize(sink.n);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ArbiterABPacketPair);

// Reordered traffic: every other packet pair swapped, so half the packets wait in the window.
void BM_SequencerSwappedPairs(benchmark::State& state) {
  PacketTemplate t(1);
  CountingSink sink;
  SequencerConfig c;
  Sequencer seq(c, sink);
  PacketView v = t.view;
  std::uint64_t s = 1;
  std::int64_t now = 0;
  for (auto _ : state) {
    v.seq = s + 1;
    seq.on_packet(v, RxMeta{now, 0}, now);
    v.seq = s;
    seq.on_packet(v, RxMeta{now, 0}, now);
    s += 2;
    ++now;
  }
  benchmark::DoNotOptimize(sink.n);
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_SequencerSwappedPairs);

void BM_ParsePacket(benchmark::State& state) {
  PacketTemplate t(static_cast<int>(state.range(0)));
  PacketView v;
  for (auto _ : state) {
    benchmark::DoNotOptimize(parse_packet(t.bytes.data(), t.bytes.size(), v, 64));
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParsePacket)->Arg(1)->Arg(4);

void BM_DecodeQuote(benchmark::State& state) {
  md::Quote q;
  q.instrument = 7;
  q.bid_price = 123456789;
  std::uint8_t m[kQuoteBytes];
  encode_quote(q, m);
  md::Event e;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode_message(m, kQuoteBytes, e));
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeQuote);

void BM_DecodeTrade(benchmark::State& state) {
  md::Trade tr;
  tr.aggressor = md::Side::Buy;
  std::uint8_t m[kTradeBytes];
  encode_trade(tr, m);
  md::Event e;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode_message(m, kTradeBytes, e));
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeTrade);

// One thread pushes a burst of 64 FeedEvent-sized items, then pops them: the ring's own cost per
// item without cross-core traffic. (Popping each item right after pushing it would mostly time a
// store-forwarding stall on the just-written 80-byte slot.)
void BM_SpscRingPushPop(benchmark::State& state) {
  struct Item {
    std::uint64_t seq;
    md::Event event;
    std::int64_t ts[3];
  };
  SpscRing<Item> ring(1024);
  Item in{}, out{};
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) {
      ++in.seq;
      ring.try_push(in);
    }
    for (int i = 0; i < 64; ++i) {
      ring.try_pop(out);
      benchmark::DoNotOptimize(out);
    }
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_SpscRingPushPop);

// The same burst, but the producer writes each item's fields straight into the claimed slot
// (what FeedHandler does) and the consumer reads one field.
void BM_SpscRingClaimCommit(benchmark::State& state) {
  struct Item {
    std::uint64_t seq;
    md::Event event;
    std::int64_t ts[3];
  };
  SpscRing<Item> ring(1024);
  std::uint64_t seq = 0;
  Item out{};
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) {
      Item* slot = ring.try_claim();
      slot->seq = ++seq;
      slot->event.kind = md::Event::Kind::Quote;
      slot->event.quote.instrument = 1;
      slot->event.quote.bid_price = static_cast<std::int64_t>(seq);
      slot->ts[0] = slot->ts[1] = slot->ts[2] = static_cast<std::int64_t>(seq);
      ring.commit();
    }
    for (int i = 0; i < 64; ++i) {
      ring.try_pop(out);
      benchmark::DoNotOptimize(out.seq);
    }
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_SpscRingClaimCommit);

}  // namespace
}  // namespace tickinfer::feed

BENCHMARK_MAIN();
