// `tickinfer book SOURCE`: replays a day of NASDAQ TotalView-ITCH 5.0 (a Nasdaq day file, raw or
// gzip, or a pcap/pcapng capture of MoldUDP64) into full-depth order books and reports per-symbol
// summaries, the decoder's and the books' integrity counters, and the replay rate. --csv writes
// the top N levels after every order message (book/book_csv_writer.hpp has the format).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "book/book_csv_writer.hpp"
#include "book/itch_replay.hpp"
#include "book/lobster_writer.hpp"
#include "cli/commands.hpp"
#include "cli/itch_options.hpp"
#include "itch/itch_source.hpp"
#include "itch/session_date.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {
namespace {

std::set<std::string> split_symbols(const ArgParser& args) {
  std::set<std::string> out;
  for (const std::string& v : args.values("symbols"))
    for (std::string& s : split_symbol_list(v)) out.insert(std::move(s));
  return out;
}

// Selects symbols as their R messages name them, counts book messages per locate, writes rows.
class BookObserver : public book::ReplayObserver {
 public:
  BookObserver(const book::BookSet& books, std::set<std::string> symbols, book::BookCsvWriter* csv,
               book::LobsterWriter* lobster)
      : books_(books), symbols_(std::move(symbols)), csv_(csv), lobster_(lobster), selected_(1 << 16, 0),
        messages_(1 << 16, 0) {}

  void before(const itch::Message& m) noexcept override {
    if (lobster_ != nullptr) lobster_->before(books_, m);
  }
  // Writers' I/O errors surface from flush(); rows only go to buffers here.
  void on_message(std::uint64_t seq, const itch::Message& m, const book::Applied& a) noexcept override {
    const std::uint16_t locate = m.header.locate;
    if (m.type() == itch::Type::StockDirectory) {
      const std::string sym(itch::symbol_view(m.stock_directory.stock));
      selected_[locate] = symbols_.empty() || symbols_.count(sym) ? 1 : 0;
      if (lobster_ != nullptr) lobster_->select(locate, selected_[locate] != 0);
      return;
    }
    if (lobster_ != nullptr) lobster_->after(books_, m, a);
    if (!a.book_message || !selected_[locate]) return;
    ++messages_[locate];
    if (csv_ != nullptr) csv_->row(books_, seq, m.header.timestamp_ns, locate);
  }
  const std::vector<std::uint64_t>& messages() const { return messages_; }
  bool selected(std::uint16_t locate) const { return selected_[locate] != 0; }

 private:
  const book::BookSet& books_;
  std::set<std::string> symbols_;
  book::BookCsvWriter* csv_;
  book::LobsterWriter* lobster_;
  std::vector<std::uint8_t> selected_;
  std::vector<std::uint64_t> messages_;
};

std::string price_text(std::uint32_t p, bool present) {
  if (!present) return "-";
  char buf[16];
  return std::string(buf, book::format_price4(p, buf));
}

void print_symbols(const book::BookSet& books, const BookObserver& obs, std::size_t top) {
  std::vector<std::uint16_t> locates;
  for (std::size_t l = 1; l < obs.messages().size(); ++l) {
    if (obs.selected(static_cast<std::uint16_t>(l)) && !books.symbol(static_cast<std::uint16_t>(l)).empty()) {
      locates.push_back(static_cast<std::uint16_t>(l));
    }
  }
  std::stable_sort(locates.begin(), locates.end(), [&](std::uint16_t a, std::uint16_t b) {
    return obs.messages()[a] > obs.messages()[b];
  });
  std::printf("%-8s %6s %12s %6s %6s %12s %12s %8s %7s %7s %7s %6s\n", "symbol", "locate", "book_msgs",
              "bids", "asks", "best_bid", "best_ask", "orders", "unk_ref", "crossed", "locked", "synced");
  for (std::size_t i = 0; i < locates.size() && i < top; ++i) {
    const std::uint16_t l = locates[i];
    const book::Level bid = books.level(l, book::Side::Bid, 0), ask = books.level(l, book::Side::Ask, 0);
    const book::Integrity& in = books.integrity(l);
    std::uint64_t orders = 0;
    for (book::Side s : {book::Side::Bid, book::Side::Ask}) {
      for (std::size_t k = 0; k < books.depth(l, s); ++k) orders += books.level(l, s, k).orders;
    }
    std::printf("%-8.*s %6u %12llu %6zu %6zu %12s %12s %8llu %7llu %7llu %7llu %6s\n",
                static_cast<int>(books.symbol(l).size()), books.symbol(l).data(), l,
                static_cast<unsigned long long>(obs.messages()[l]), books.depth(l, book::Side::Bid),
                books.depth(l, book::Side::Ask), price_text(bid.price, bid.orders > 0).c_str(),
                price_text(ask.price, ask.orders > 0).c_str(), static_cast<unsigned long long>(orders),
                static_cast<unsigned long long>(in.unknown_ref), static_cast<unsigned long long>(in.crossed),
                static_cast<unsigned long long>(in.locked), books.is_synced(l) ? "yes" : "NO");
  }
  if (locates.size() > top) std::printf("(%zu more symbols; --top N shows more)\n", locates.size() - top);
}

void print_totals(const itch::SourceStats& src, const book::ItchReplay& replay, const book::BookSet& books,
                  double seconds) {
  const itch::DecodeCounters& d = replay.decode_counters();
  std::printf("records: %llu in %.3f s (%.2f M msg/s)%s\n", static_cast<unsigned long long>(src.records),
              seconds, seconds > 0 ? static_cast<double>(src.records) / seconds / 1e6 : 0.0,
              src.ended_by_zero_length ? "; ended by a zero-length record" : "");
  std::printf("decoded: %llu  unknown type: %llu  wrong length: %llu  empty: %llu\n",
              static_cast<unsigned long long>(d.total_decoded), static_cast<unsigned long long>(d.total_unknown_type),
              static_cast<unsigned long long>(d.total_wrong_length), static_cast<unsigned long long>(d.total_empty));
  if (src.kind == itch::SourceKind::Capture) {
    const feed::PcapStats& p = src.pcap;
    std::printf("capture: frames %llu, datagrams %llu, filtered out %llu, not IPv4 %llu, not UDP %llu, "
                "fragments %llu, truncated %llu, malformed %llu, bad MoldUDP64 %llu\n",
                (unsigned long long)p.frames, (unsigned long long)p.datagrams, (unsigned long long)p.filtered_out,
                (unsigned long long)p.not_ipv4, (unsigned long long)p.not_udp, (unsigned long long)p.fragments,
                (unsigned long long)p.truncated, (unsigned long long)p.malformed,
                (unsigned long long)src.bad_packets);
    std::printf("sequencer: duplicates %llu, lost %llu in %llu ranges, max buffered %llu\n",
                (unsigned long long)src.sequencer.duplicates, (unsigned long long)src.lost,
                (unsigned long long)src.sequencer.lost_ranges, (unsigned long long)src.sequencer.max_buffered);
  }
  const book::Integrity t = books.totals();
  std::printf("books: %llu live orders; unknown_ref %llu, duplicate_ref %llu, overfill %llu, bad_side %llu, "
              "locate_mismatch %llu, crossed %llu, locked %llu, capacity_rejects %llu, while_unsynced %llu\n",
              (unsigned long long)books.live_orders(), (unsigned long long)t.unknown_ref,
              (unsigned long long)t.duplicate_ref, (unsigned long long)t.overfill, (unsigned long long)t.bad_side,
              (unsigned long long)t.locate_mismatch, (unsigned long long)t.crossed, (unsigned long long)t.locked,
              (unsigned long long)t.capacity_rejects, (unsigned long long)t.while_unsynced);
  if (!src.error.empty()) std::printf("source error: %s\n", src.error.c_str());
}

}  // namespace

ArgParser book_parser() {
  ArgParser p("book", "replay NASDAQ TotalView-ITCH 5.0 (day file, .gz, pcap/pcapng) into full-depth books");
  p.positional("source", "a Nasdaq day file (raw or gzip) or a pcap/pcapng capture of MoldUDP64");
  p.option("symbols", "A,B,...", "only these symbols (default: all)", "", true);
  p.option("levels", "N", "levels per side in --csv rows", "10");
  p.option("csv", "FILE", "write the top N levels after every A F E C X D U message");
  p.option("lobster", "DIR", "write LOBSTER message and orderbook files per symbol (09:30-16:00)");
  p.option("date", "YYYY-MM-DD", "the trading date (default: from a Nasdaq file name)");
  p.option("top", "N", "symbols in the summary, busiest first", "20");
  declare_capture_options(p);
  return p;
}

int run_book(const ArgParser& args) {
  const std::string source = args.positional_value("source");
  const itch::SourceOptions opts = capture_options(args);
  const auto levels = static_cast<std::size_t>(args.integer("levels", 1, 1000));
  itch::check_source(source);  // a bad source is refused before any output file is created
  std::unique_ptr<book::BookCsvWriter> csv;
  if (args.given("csv")) csv = std::make_unique<book::BookCsvWriter>(args.value("csv"), levels);

  std::unique_ptr<book::LobsterWriter> lobster;
  if (args.given("lobster")) {
    const std::optional<itch::Date> date = trading_date(args, source);
    if (!date) {
      throw UsageError("--lobster needs the trading date: the file name does not carry it; pass --date YYYY-MM-DD");
    }
    lobster = std::make_unique<book::LobsterWriter>(args.value("lobster"), itch::to_iso(*date), levels);
  }
  auto books = std::make_unique<book::BookSet>();
  BookObserver observer(*books, split_symbols(args), csv.get(), lobster.get());
  book::ItchReplay replay(*books, &observer, book::Lookahead::On);
  const std::int64_t t0 = stats::monotonic_ns();
  const itch::SourceStats src = itch::read_itch_source(source, opts, replay);
  const double seconds = static_cast<double>(stats::monotonic_ns() - t0) / 1e9;
  if (csv) csv->flush();
  if (lobster) lobster->flush();
  std::printf("source: %s (%s)\n", source.c_str(), itch::to_string(src.kind));
  print_totals(src, replay, *books, seconds);
  print_symbols(*books, observer, static_cast<std::size_t>(args.integer("top", 0, 1 << 20)));
  if (csv) std::printf("csv: %llu rows -> %s\n", static_cast<unsigned long long>(csv->rows()), args.value("csv").c_str());
  if (lobster) {
    std::printf("lobster: %llu rows -> %s\n", static_cast<unsigned long long>(lobster->rows()),
                args.value("lobster").c_str());
  }
  return src.error.empty() ? 0 : 1;
}

}  // namespace tickinfer::cli
