// ITCH 5.0 as the feed's protocol: MoldUDP64 datagrams of hand-built ITCH messages sent over a
// real loopback socket into FeedHandler with ItchEventDecoder. The events that come out are
// checked against what the spec's rules say by hand: a quote when the best bid or ask changes,
// trades for E (resting price, aggressor opposite the resting side), printable C (its own
// price), P and Q (aggressor unknown), none for a non-printable C; prices in 1e-8 units and
// times in epoch ns (2019-12-30 is winter: UTC = Eastern + 5 h). A lost range marks the books
// unsynced.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "book/itch_event_decoder.hpp"
#include "feed/byte_order.hpp"
#include "feed/moldudp64.hpp"
#include "feed/udp_socket.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::book {
namespace {

using Bytes = std::vector<std::uint8_t>;
using feed::store_be16;
using feed::store_be32;
using feed::store_be64;

// The 11-byte prefix, then the body bytes the caller fills, at the type's spec length.
Bytes message(char type, std::size_t len, std::uint16_t locate, std::uint64_t ts) {
  Bytes m(len, 0);
  m[0] = static_cast<std::uint8_t>(type);
  store_be16(&m[1], locate);
  store_be16(&m[5], static_cast<std::uint16_t>(ts >> 32));
  store_be32(&m[7], static_cast<std::uint32_t>(ts));
  return m;
}
void put_stock(Bytes& m, std::size_t at, const char* sym) {
  std::memset(&m[at], ' ', 8);
  std::memcpy(&m[at], sym, std::strlen(sym));
}
Bytes directory(std::uint16_t locate, const char* sym) {
  Bytes m = message('R', 39, locate, 1);
  put_stock(m, 11, sym);
  return m;
}
Bytes add(std::uint16_t locate, std::uint64_t ts, std::uint64_t ref, char side, std::uint32_t shares,
          const char* sym, std::uint32_t price) {
  Bytes m = message('A', 36, locate, ts);
  store_be64(&m[11], ref);
  m[19] = static_cast<std::uint8_t>(side);
  store_be32(&m[20], shares);
  put_stock(m, 24, sym);
  store_be32(&m[32], price);
  return m;
}
Bytes executed(std::uint16_t locate, std::uint64_t ts, std::uint64_t ref, std::uint32_t shares) {
  Bytes m = message('E', 31, locate, ts);
  store_be64(&m[11], ref);
  store_be32(&m[19], shares);
  store_be64(&m[23], 777);
  return m;
}
Bytes executed_with_price(std::uint16_t locate, std::uint64_t ts, std::uint64_t ref, std::uint32_t shares,
                          char printable, std::uint32_t price) {
  Bytes m = message('C', 36, locate, ts);
  store_be64(&m[11], ref);
  store_be32(&m[19], shares);
  store_be64(&m[23], 778);
  m[31] = static_cast<std::uint8_t>(printable);
  store_be32(&m[32], price);
  return m;
}
Bytes hidden_trade(std::uint16_t locate, std::uint64_t ts, const char* sym, std::uint32_t shares, std::uint32_t price) {
  Bytes m = message('P', 44, locate, ts);
  m[19] = 'B';
  store_be32(&m[20], shares);
  put_stock(m, 24, sym);
  store_be32(&m[32], price);
  store_be64(&m[36], 779);
  return m;
}
Bytes cross(std::uint16_t locate, std::uint64_t ts, const char* sym, std::uint64_t shares, std::uint32_t price) {
  Bytes m = message('Q', 40, locate, ts);
  store_be64(&m[11], shares);
  put_stock(m, 19, sym);
  store_be32(&m[27], price);
  store_be64(&m[31], 780);
  m[39] = 'C';
  return m;
}
Bytes cancel(std::uint16_t locate, std::uint64_t ts, std::uint64_t ref, std::uint32_t shares) {
  Bytes m = message('X', 23, locate, ts);
  store_be64(&m[11], ref);
  store_be32(&m[19], shares);
  return m;
}

Bytes packet(std::uint64_t seq, const std::vector<Bytes>& msgs) {
  Bytes b(1400);
  feed::PacketBuilder pb(b.data(), b.size());
  pb.start(feed::Session::from("ITCH"), seq);
  for (const Bytes& m : msgs) pb.add(m.data(), static_cast<std::uint16_t>(m.size()));
  b.resize(pb.finish());
  return b;
}

constexpr std::int64_t kMidnightUtcNs = 1577682000LL * 1'000'000'000;  // 2019-12-30 00:00 EST
constexpr std::int64_t kScale = 10'000;                                 // Price(4) -> 1e-8
constexpr std::uint64_t kT = 34'200'000'000'000;                        // 09:30:00

struct Seen {
  std::vector<md::Event> events;
  std::vector<std::uint64_t> seqs;
};

TEST(ItchFeed, EventsFromTheBooksOverALoopbackSocket) {
  ItchEventConfig cfg;
  cfg.symbols = {"MSFT", "AAPL"};  // instruments 1 and 2
  cfg.date = itch::Date{2019, 12, 30};
  cfg.capacity = Capacity{1 << 12, 1 << 10, 1 << 8};
  auto decoder = std::make_shared<ItchEventDecoder>(cfg);
  feed::FeedConfig c;
  c.line_a.address = "127.0.0.1";
  c.decoder = decoder;
  Seen seen;
  feed::FeedHandler handler(c, [&](const feed::FeedEvent& e) {
    seen.events.push_back(e.event);
    seen.seqs.push_back(e.seq);
  });
  feed::UdpSocket tx = feed::UdpSocket::sender();
  const auto to = feed::make_address("127.0.0.1", handler.port(feed::kLineA));
  const std::vector<Bytes> day = {
      directory(1, "AAPL"), directory(2, "IBM"), directory(3, "MSFT"),      // seq 1-3
      add(1, kT + 1, 10, 'B', 100, "AAPL", 1'500'000),                      // 4: bid 150.00 x 100
      add(1, kT + 2, 11, 'S', 200, "AAPL", 1'501'000),                      // 5: ask 150.10 x 200
      add(2, kT + 3, 12, 'B', 300, "IBM", 1'000'000),                       // 6: not selected
      add(1, kT + 4, 13, 'B', 50, "AAPL", 1'490'000),                       // 7: below the best: no quote
      executed(1, kT + 5, 11, 60),                                          // 8: trade 150.10 x 60, buyer
      executed_with_price(1, kT + 6, 10, 100, 'Y', 1'499'900),              // 9: trade 149.99 x 100, seller; bid -> 149.00
      executed_with_price(1, kT + 7, 13, 10, 'N', 1'490'000),               // 10: no trade; bid size 40
      hidden_trade(1, kT + 8, "AAPL", 25, 1'500'500),                       // 11: hidden trade
      cross(3, kT + 9, "MSFT", 1000, 2'000'000),                            // 12: MSFT cross print
      cross(3, kT + 10, "MSFT", 0, 0),                                      // 13: no shares: nothing
      cancel(1, kT + 11, 13, 40),                                           // 14: bid side empties
  };
  std::uint64_t seq = 1;
  for (std::size_t i = 0; i < day.size(); i += 3) {
    std::vector<Bytes> part(day.begin() + static_cast<long>(i),
                            day.begin() + static_cast<long>(std::min(day.size(), i + 3)));
    Bytes p = packet(seq, part);
    ASSERT_TRUE(tx.send_to(p.data(), p.size(), to));
    seq += part.size();
  }
  for (int i = 0; i < 2000 && handler.stats().next_expected < seq; ++i) handler.poll();
  ASSERT_EQ(handler.stats().next_expected, seq);

  auto quote = [](std::uint32_t inst, std::uint64_t ts, std::int64_t bid, std::uint32_t bs, std::int64_t ask,
                  std::uint32_t as) {
    md::Quote q{inst, kMidnightUtcNs + static_cast<std::int64_t>(ts), bid * kScale, ask * kScale, bs, as};
    return md::Event::of(q);
  };
  auto trade = [](std::uint32_t inst, std::uint64_t ts, std::int64_t px, std::uint32_t size, md::Side side) {
    md::Trade t{inst, kMidnightUtcNs + static_cast<std::int64_t>(ts), px * kScale, size, side};
    return md::Event::of(t);
  };
  const std::vector<md::Event> want = {
      quote(2, kT + 1, 1'500'000, 100, 0, 0),
      quote(2, kT + 2, 1'500'000, 100, 1'501'000, 200),
      trade(2, kT + 5, 1'501'000, 60, md::Side::Buy),
      quote(2, kT + 5, 1'500'000, 100, 1'501'000, 140),
      trade(2, kT + 6, 1'499'900, 100, md::Side::Sell),
      quote(2, kT + 6, 1'490'000, 50, 1'501'000, 140),
      quote(2, kT + 7, 1'490'000, 40, 1'501'000, 140),
      trade(2, kT + 8, 1'500'500, 25, md::Side::Unknown),
      trade(1, kT + 9, 2'000'000, 1000, md::Side::Unknown),
      quote(2, kT + 11, 0, 0, 1'501'000, 140),
  };
  const std::vector<std::uint64_t> want_seqs = {4, 5, 8, 8, 9, 9, 10, 11, 12, 14};
  ASSERT_EQ(seen.events.size(), want.size());
  EXPECT_EQ(seen.seqs, want_seqs);
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    const md::Event& got = seen.events[i];
    ASSERT_EQ(got.kind, want[i].kind);
    EXPECT_EQ(got.instrument(), want[i].instrument());
    EXPECT_EQ(got.exchange_ts_ns(), want[i].exchange_ts_ns());
    if (got.kind == md::Event::Kind::Quote) {
      EXPECT_EQ(got.quote.bid_price, want[i].quote.bid_price);
      EXPECT_EQ(got.quote.bid_size, want[i].quote.bid_size);
      EXPECT_EQ(got.quote.ask_price, want[i].quote.ask_price);
      EXPECT_EQ(got.quote.ask_size, want[i].quote.ask_size);
    } else {
      EXPECT_EQ(got.trade.price, want[i].trade.price);
      EXPECT_EQ(got.trade.size, want[i].trade.size);
      EXPECT_EQ(got.trade.aggressor, want[i].trade.aggressor);
    }
  }
  EXPECT_EQ(handler.stats().undecodable, 0u);
  EXPECT_EQ(decoder->decode_counters().total_decoded, day.size());
  EXPECT_EQ(decoder->books().integrity(1).unknown_ref, 0u);
  EXPECT_TRUE(decoder->books().is_synced(1));

  // An undecodable block consumes its sequence and is counted; a hole that times out marks the
  // books unsynced.
  Bytes junk = {'Z', 1, 2};
  Bytes p = packet(seq, {junk});
  ASSERT_TRUE(tx.send_to(p.data(), p.size(), to));
  p = packet(seq + 5, {add(1, kT + 20, 20, 'B', 1, "AAPL", 1'000'000)});
  ASSERT_TRUE(tx.send_to(p.data(), p.size(), to));
  for (int i = 0; i < 2000 && handler.stats().next_expected < seq + 6; ++i) {
    handler.poll();
    usleep(1000);  // the hole is judged after gap_timeout_ns (1 ms) without recovery
  }
  EXPECT_EQ(handler.stats().undecodable, 1u);
  EXPECT_EQ(decoder->lost(), 4u);
  EXPECT_FALSE(decoder->books().is_synced(1));
}

TEST(ItchFeed, RefusesABadConfiguration) {
  ItchEventConfig cfg;
  cfg.date = itch::Date{2019, 2, 30};
  EXPECT_THROW(ItchEventDecoder{cfg}, Error);
  cfg.date = itch::Date{2019, 12, 30};
  cfg.symbols = {"TOOLONGSYM"};
  EXPECT_THROW(ItchEventDecoder{cfg}, Error);
  cfg.symbols = {"A", "A"};
  EXPECT_THROW(ItchEventDecoder{cfg}, Error);
}

}  // namespace
}  // namespace tickinfer::book
