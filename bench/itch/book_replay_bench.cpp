// Decode + order-book update, one core, over a whole ITCH day held in memory, against a floor in
// the same run: walking the same records by their length prefixes and reading each type byte
// (what any reader of the file must do). Rounds alternate floor and replay, each replay on a
// fresh BookSet built before the clock starts, so machine drift hits both alike.
//
// The replay is the product's loop (book::ItchReplay) both ways it runs: with look-ahead, as files
// are read (each message applied once 31 more have arrived, its loads started meanwhile), and one
// message at a time, as the live feed applies them; rounds alternate their order and check they
// end alike (counters, live orders and levels, every book's top five levels).
//
// A further pass times every message on its own (rdtsc around decode + BookSet::apply, what the
// live feed's book stage does per message) for the per-message distribution; the cost of an empty
// timed region, measured the same way, is reported next to it.
//
//   book_replay_bench DAYFILE [--rounds N] [--first ahead|single] [--json FILE]   (DAYFILE raw or gzip)
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_replay.hpp"
#include "itch/day_file.hpp"
#include "itch/itch_decoder.hpp"
#include "stats/clock.hpp"

namespace {

using namespace tickinfer;

book::Capacity g_capacity;  // --orders N sizes the books (default: Capacity's, a real day's)

struct Day {
  std::vector<std::uint8_t> bytes;  // the records, length prefixes included, as in the file
  std::uint64_t messages = 0;
};

Day load_day(const std::string& path) {
  Day day;
  itch::DayFileReader reader(path);
  while (reader.read([&](const itch::DayRecord& r) {
    day.bytes.push_back(static_cast<std::uint8_t>(r.len >> 8));
    day.bytes.push_back(static_cast<std::uint8_t>(r.len));
    day.bytes.insert(day.bytes.end(), r.msg, r.msg + r.len);
    ++day.messages;
  }) > 0) {
  }
  if (!reader.error().empty()) std::fprintf(stderr, "warning: %s\n", reader.error().c_str());
  return day;
}

// The floor: every record's length and type byte, nothing else.
std::uint64_t walk_floor(const Day& day) {
  const std::uint8_t* p = day.bytes.data();
  const std::uint8_t* end = p + day.bytes.size();
  std::uint64_t acc = 0;
  while (p + 2 <= end) {
    const std::size_t len = (std::size_t{p[0]} << 8) | p[1];
    if (len > 0) acc += p[2];
    p += 2 + len;
  }
  return acc;
}

// FNV-1a over every book's top five levels on both sides (locate, price, shares, orders).
std::uint64_t top_digest(const book::BookSet& books) {
  std::uint64_t digest = 1469598103934665603ull;
  auto mix = [&digest](std::uint64_t v) { digest = (digest ^ v) * 1099511628211ull; };
  for (std::uint32_t l = 0; l < books.capacity().instruments; ++l) {
    for (book::Side side : {book::Side::Bid, book::Side::Ask}) {
      book::Level top[5];
      const std::size_t n = books.top(static_cast<std::uint16_t>(l), side, top, 5);
      for (std::size_t i = 0; i < n; ++i) {
        mix(l);
        mix(top[i].price);
        mix(top[i].shares);
        mix(top[i].orders);
      }
    }
  }
  return digest;
}

// Counts the messages that changed a book, so the work cannot be optimized away.
struct ChangedCount final : book::ReplayObserver {
  std::uint64_t changed = 0;
  void on_message(std::uint64_t, const itch::Message&, const book::Applied& a) noexcept override {
    changed += a.changed;
  }
};

// The product's loop (book::ItchReplay) over the records, as a day-file source feeds it.
std::uint64_t replay(const Day& day, book::BookSet& books, book::Lookahead lookahead) {
  const std::uint8_t* p = day.bytes.data();
  const std::uint8_t* end = p + day.bytes.size();
  ChangedCount count;
  book::ItchReplay replay(books, &count, lookahead);
  std::uint64_t seq = 0;
  while (p + 2 <= end) {
    const std::uint16_t len = static_cast<std::uint16_t>((p[0] << 8) | p[1]);
    replay.on_record(++seq, p + 2, len);
    p += 2 + len;
  }
  replay.on_end();
  return count.changed;
}

double tsc_ghz() {
  const std::int64_t t0 = stats::monotonic_ns();
  const std::uint64_t c0 = __rdtsc();
  while (stats::monotonic_ns() - t0 < 200'000'000) {
  }
  return static_cast<double>(__rdtsc() - c0) / static_cast<double>(stats::monotonic_ns() - t0);
}

struct Distribution {
  std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(1 << 16, 0);  // by cycles
  std::uint64_t max = 0, n = 0;
  void add(std::uint64_t c) {
    ++counts[std::min<std::uint64_t>(c, counts.size() - 1)];
    max = std::max(max, c);
    ++n;
  }
  std::uint64_t quantile(double q) const {
    const auto target = static_cast<std::uint64_t>(q * static_cast<double>(n));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      seen += counts[i];
      if (seen > target) return i;
    }
    return max;
  }
};

// Per message: decode + apply inside rdtsc; and the same region empty, for its own cost.
void timed_pass(const Day& day, Distribution& work, Distribution& empty) {
  auto books = std::make_unique<book::BookSet>(g_capacity);
  const std::uint8_t* p = day.bytes.data();
  const std::uint8_t* end = p + day.bytes.size();
  itch::Message m;
  std::uint64_t sink = 0;
  while (p + 2 <= end) {
    const std::size_t len = (std::size_t{p[0]} << 8) | p[1];
    _mm_lfence();
    const std::uint64_t a = __rdtsc();
    _mm_lfence();
    if (itch::decode(p + 2, len, m) == itch::DecodeStatus::Ok) sink += books->apply(m).changed;
    _mm_lfence();
    const std::uint64_t b = __rdtsc();
    _mm_lfence();
    const std::uint64_t c = __rdtsc();
    _mm_lfence();
    const std::uint64_t d = __rdtsc();
    work.add(b - a);
    empty.add(d - c);
    p += 2 + len;
  }
  if (sink == 0xFFFFFFFFFFFFFFFFull) std::puts("");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: book_replay_bench DAYFILE [--rounds N] [--first ahead|single] [--json FILE]\n");
    return 2;
  }
  int rounds = 3;
  int first_single = 0;  // --first single: round 0 runs the one-at-a-time replay first
  std::string json;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--first") == 0) first_single = std::strcmp(argv[i + 1], "single") == 0 ? 1 : 0;
    if (std::strcmp(argv[i], "--json") == 0) json = argv[i + 1];
    if (std::strcmp(argv[i], "--orders") == 0) {
      g_capacity.orders = static_cast<std::uint32_t>(std::atol(argv[i + 1]));
      g_capacity.levels = std::max<std::uint32_t>(g_capacity.orders / 4, 1024);
    }
  }
  const Day day = load_day(argv[1]);
  const double ghz = tsc_ghz();
  std::vector<double> floor_ns, replay_ns, single_ns;
  std::uint64_t check = 0;
  // How a replay ended: what it changed, its counters, its live orders and levels, and a digest
  // of every book's top five levels, so the two paths can be compared after each is freed.
  struct Outcome {
    std::uint64_t changed = 0, live = 0, levels = 0, top_digest = 0;
    std::size_t memory = 0;
    book::Integrity totals{};
    bool operator==(const Outcome&) const = default;
  };
  auto timed_replay = [&](book::Lookahead lookahead, std::vector<double>& ns) {
    auto books = std::make_unique<book::BookSet>(g_capacity);  // built before the clock starts
    const std::int64_t t0 = stats::monotonic_ns();
    const std::uint64_t changed = replay(day, *books, lookahead);
    ns.push_back(static_cast<double>(stats::monotonic_ns() - t0) / static_cast<double>(day.messages));
    return Outcome{changed, books->live_orders(), books->live_levels(), top_digest(*books),
                   books->memory_bytes(), books->totals()};
  };
  Outcome last;
  for (int r = 0; r < rounds; ++r) {
    const std::int64_t t0 = stats::monotonic_ns();
    check += walk_floor(day);
    floor_ns.push_back(static_cast<double>(stats::monotonic_ns() - t0) / static_cast<double>(day.messages));
    // Both of the product's paths, in alternating order (--first sets round 0's): with look-ahead
    // (files) and one message at a time (the live feed), each on fresh books freed before the
    // other runs. They must end alike.
    Outcome ahead, single;
    if ((r + first_single) % 2 == 0) {
      ahead = timed_replay(book::Lookahead::On, replay_ns);
      single = timed_replay(book::Lookahead::Off, single_ns);
    } else {
      single = timed_replay(book::Lookahead::Off, single_ns);
      ahead = timed_replay(book::Lookahead::On, replay_ns);
    }
    check += ahead.changed;
    last = ahead;
    if (!(ahead == single)) {
      std::fprintf(stderr, "error: round %d: the look-ahead and one-at-a-time replays ended in different books "
                   "(changed %llu / %llu, live orders %llu / %llu, top-level digest %llx / %llx)\n", r,
                   (unsigned long long)ahead.changed, (unsigned long long)single.changed,
                   (unsigned long long)ahead.live, (unsigned long long)single.live,
                   (unsigned long long)ahead.top_digest, (unsigned long long)single.top_digest);
      return 1;
    }
  }
  Distribution work, empty;
  timed_pass(day, work, empty);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double cyc = 1.0 / ghz;
  std::printf("messages %llu, %.1f MB, %d rounds, TSC %.3f GHz, book memory %.1f MB\n",
              static_cast<unsigned long long>(day.messages), static_cast<double>(day.bytes.size()) / 1e6, rounds,
              ghz, static_cast<double>(last.memory) / 1e6);
  std::printf("floor (walk lengths)      %7.2f ns/msg  (median of %d)\n", median(floor_ns), rounds);
  std::printf("decode + book             %7.2f ns/msg  %.2f M msg/s  (look-ahead, as files are read)\n",
              median(replay_ns), 1e3 / median(replay_ns));
  std::printf("  one at a time           %7.2f ns/msg  %.2f M msg/s  (as the live feed applies)\n",
              median(single_ns), 1e3 / median(single_ns));
  std::printf("per message (timed pass)  p50 %.1f  p99 %.1f  p99.9 %.1f  max %.0f ns; empty region p50 %.1f ns\n",
              work.quantile(0.5) * cyc, work.quantile(0.99) * cyc, work.quantile(0.999) * cyc, work.max * cyc,
              empty.quantile(0.5) * cyc);
  std::printf("integrity: unknown_ref %llu overfill %llu duplicate_ref %llu crossed %llu locked %llu; live orders %llu, live levels %llu\n",
              (unsigned long long)last.totals.unknown_ref, (unsigned long long)last.totals.overfill,
              (unsigned long long)last.totals.duplicate_ref, (unsigned long long)last.totals.crossed,
              (unsigned long long)last.totals.locked, (unsigned long long)last.live, (unsigned long long)last.levels);
  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (f == nullptr) return 1;
    std::fprintf(f,
                 "{\"messages\": %llu, \"floor_ns\": %.4f, \"replay_ns\": %.4f, \"replay_ns_rounds\": [",
                 (unsigned long long)day.messages, median(floor_ns), median(replay_ns));
    for (std::size_t i = 0; i < replay_ns.size(); ++i) std::fprintf(f, "%s%.4f", i ? ", " : "", replay_ns[i]);
    std::fprintf(f, "], \"single_ns\": %.4f, \"single_ns_rounds\": [", median(single_ns));
    for (std::size_t i = 0; i < single_ns.size(); ++i) std::fprintf(f, "%s%.4f", i ? ", " : "", single_ns[i]);
    std::fprintf(f, "], \"p50_ns\": %.2f, \"p99_ns\": %.2f, \"p999_ns\": %.2f, \"max_ns\": %.1f, \"empty_p50_ns\": %.2f, "
                 "\"unknown_ref\": %llu, \"crossed\": %llu, \"locked\": %llu, \"memory_bytes\": %zu, \"check\": %llu}\n",
                 work.quantile(0.5) * cyc, work.quantile(0.99) * cyc, work.quantile(0.999) * cyc, work.max * cyc,
                 empty.quantile(0.5) * cyc, (unsigned long long)last.totals.unknown_ref,
                 (unsigned long long)last.totals.crossed, (unsigned long long)last.totals.locked, last.memory,
                 (unsigned long long)check);
    std::fclose(f);
  }
  return 0;
}
