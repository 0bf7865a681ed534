// tickinfer.ItchReader and tickinfer.itch_features: NASDAQ TotalView-ITCH 5.0 day files (raw or
// gzip) and pcap/pcapng captures read into columnar numpy tables from Python, through the same
// decoder, books and sources as `tickinfer book` (src/itch, src/book), and the book features of
// `tickinfer features --symbols` (pipeline/itch_book_ticks.hpp, header-only) on top.
//
// Tables (docs/python.md): depth (the top N levels after every A F E C X D U of a selected
// symbol: the rows of `tickinfer book --csv`), bbo (the rows whose best bid or ask changed),
// trades (E, C, P, Q prints) and orders (every order message with its resting order's side and
// price). Each column is built in a C++ vector while the GIL is released and handed to numpy
// without a copy (the array owns the vector). Day files are read in batches of at most
// `batch_messages` messages (memory stays bounded on a whole day); a capture goes through the
// feed's sequencer in one pass.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_replay.hpp"
#include "features/batch.hpp"
#include "features/feature_spec.hpp"
#include "itch/day_file.hpp"
#include "itch/itch_source.hpp"
#include "itch/session_date.hpp"
#include "pipeline/itch_book_ticks.hpp"
#include "tickinfer/error.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace tickinfer::python {
namespace {

// A column of T handed to numpy without a copy: the vector moves to the heap and the array's
// capsule frees it. cols > 0: a [rows, cols] array.
template <class T>
nb::object column(std::vector<T>&& v, std::size_t cols = 0) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t rows = cols ? owned->size() / cols : owned->size();
  if (cols) {
    const std::size_t shape[2] = {rows, cols};
    return nb::cast(nb::ndarray<nb::numpy, T>(owned->data(), 2, shape, owner));
  }
  const std::size_t shape[1] = {rows};
  return nb::cast(nb::ndarray<nb::numpy, T>(owned->data(), 1, shape, owner));
}

struct Tables {
  // depth
  std::vector<std::uint64_t> d_seq;
  std::vector<std::int64_t> d_ts;
  std::vector<std::uint16_t> d_locate;
  std::vector<double> d_bid_px, d_ask_px;
  std::vector<std::int64_t> d_bid_qty, d_ask_qty;
  // bbo
  std::vector<std::uint64_t> b_seq;
  std::vector<std::int64_t> b_ts;
  std::vector<std::uint16_t> b_locate;
  std::vector<double> b_bid_px, b_ask_px;
  std::vector<std::int64_t> b_bid_qty, b_ask_qty;
  // trades
  std::vector<std::uint64_t> t_seq, t_match;
  std::vector<std::int64_t> t_ts, t_shares;
  std::vector<std::uint16_t> t_locate;
  std::vector<std::uint8_t> t_type, t_printable;
  std::vector<double> t_price;
  std::vector<std::int8_t> t_aggressor;
  // orders
  std::vector<std::uint64_t> o_seq, o_ref, o_new_ref;
  std::vector<std::int64_t> o_ts, o_shares;
  std::vector<std::uint16_t> o_locate;
  std::vector<std::uint8_t> o_type;
  std::vector<std::int8_t> o_side;
  std::vector<double> o_price;
};

struct Top {
  std::uint32_t bid = 0, ask = 0;
  std::uint64_t bid_qty = 0, ask_qty = 0;
  bool operator==(const Top&) const = default;
};

constexpr double kPrice4Scale = 1e4;  // Price(4) -> dollars by division: the double nearest the decimal

// Fills the tables from the replay, for the selected symbols (empty: all).
class TableObserver final : public book::ReplayObserver {
 public:
  TableObserver(const book::BookSet& books, std::set<std::string> symbols, std::size_t levels, std::set<std::string> tables)
      : books_(books), symbols_(std::move(symbols)), levels_(levels), selected_(1 << 16, 0), top_(1 << 16),
        scratch_(levels) {
    depth_ = tables.count("depth");
    bbo_ = tables.count("bbo");
    trades_ = tables.count("trades");
    orders_ = tables.count("orders");
  }
  Tables t;
  std::vector<std::string> locate_symbol = std::vector<std::string>(1 << 16);

  void on_message(std::uint64_t seq, const itch::Message& m, const book::Applied& applied) noexcept override {
    // The order an E C X D U named, as it was before the message (BookSet::apply reports it).
    found_ = applied.resting;
    resting_ = book::OrderInfo{applied.locate, applied.resting_side, applied.resting_price, applied.resting_shares};
    const std::uint16_t hl = m.header.locate;
    const auto ts = static_cast<std::int64_t>(m.header.timestamp_ns);
    const itch::Type type = m.type();
    if (type == itch::Type::StockDirectory) {
      const std::string sym(itch::symbol_view(m.stock_directory.stock));
      locate_symbol[hl] = sym;
      selected_[hl] = symbols_.empty() || symbols_.count(sym) ? 1 : 0;
      return;
    }
    const std::uint16_t loc = applied.book_message ? applied.locate : hl;
    if (!selected_[loc]) return;
    if (trades_) trade(seq, ts, loc, m);
    if (!applied.book_message) return;
    if (orders_) order(seq, ts, loc, m);
    if (depth_) depth(seq, ts, loc);
    if (bbo_) bbo(seq, ts, loc);
  }

 private:
  void trade(std::uint64_t seq, std::int64_t ts, std::uint16_t loc, const itch::Message& m) {
    double price = 0;
    std::uint64_t shares = 0, match = 0;
    std::int8_t aggressor = 0;
    std::uint8_t printable = 1;
    const auto against = [this] { return static_cast<std::int8_t>(resting_.side == book::Side::Bid ? -1 : 1); };
    switch (m.type()) {
      case itch::Type::OrderExecuted:
        if (!found_) return;
        price = resting_.price / kPrice4Scale, shares = m.executed.shares, match = m.executed.match_number;
        aggressor = against();
        break;
      case itch::Type::OrderExecutedWithPrice:
        if (!found_) return;
        price = m.executed_with_price.price / kPrice4Scale, shares = m.executed_with_price.shares;
        match = m.executed_with_price.match_number, aggressor = against();
        printable = m.executed_with_price.printable == 'Y';
        break;
      case itch::Type::Trade:
        price = m.trade.price / kPrice4Scale, shares = m.trade.shares, match = m.trade.match_number;
        break;
      case itch::Type::CrossTrade:
        price = m.cross.price / kPrice4Scale, shares = m.cross.shares, match = m.cross.match_number;
        break;
      default: return;
    }
    t.t_seq.push_back(seq);
    t.t_ts.push_back(ts);
    t.t_locate.push_back(loc);
    t.t_type.push_back(static_cast<std::uint8_t>(m.type()));
    t.t_price.push_back(price);
    t.t_shares.push_back(static_cast<std::int64_t>(shares));
    t.t_aggressor.push_back(aggressor);
    t.t_printable.push_back(printable);
    t.t_match.push_back(match);
  }

  void order(std::uint64_t seq, std::int64_t ts, std::uint16_t loc, const itch::Message& m) {
    std::uint64_t ref = 0, new_ref = 0;
    std::int64_t shares = 0;
    std::int8_t side = 0;
    double price = 0;
    const auto resting_side = [this] { return static_cast<std::int8_t>(found_ ? (resting_.side == book::Side::Bid ? 1 : -1) : 0); };
    const double resting_price = found_ ? resting_.price / kPrice4Scale : 0.0;
    switch (m.type()) {
      case itch::Type::AddOrder:
      case itch::Type::AddOrderMpid:
        ref = m.add.order_ref, shares = m.add.shares, price = m.add.price / kPrice4Scale;
        side = m.add.side == 'B' ? 1 : m.add.side == 'S' ? -1 : 0;
        break;
      case itch::Type::OrderExecuted: ref = m.executed.order_ref, shares = m.executed.shares; break;
      case itch::Type::OrderExecutedWithPrice:
        ref = m.executed_with_price.order_ref, shares = m.executed_with_price.shares;
        break;
      case itch::Type::OrderCancel: ref = m.cancel.order_ref, shares = m.cancel.shares; break;
      case itch::Type::OrderDelete: ref = m.del.order_ref, shares = found_ ? resting_.shares : 0; break;
      case itch::Type::OrderReplace:
        ref = m.replace.original_ref, new_ref = m.replace.new_ref, shares = m.replace.shares;
        break;
      default: return;
    }
    if (m.type() != itch::Type::AddOrder && m.type() != itch::Type::AddOrderMpid) {
      side = resting_side();
      price = m.type() == itch::Type::OrderReplace ? m.replace.price / kPrice4Scale : resting_price;
    }
    t.o_seq.push_back(seq);
    t.o_ts.push_back(ts);
    t.o_locate.push_back(loc);
    t.o_type.push_back(static_cast<std::uint8_t>(m.type()));
    t.o_ref.push_back(ref);
    t.o_new_ref.push_back(new_ref);
    t.o_side.push_back(side);
    t.o_shares.push_back(shares);
    t.o_price.push_back(price);
  }

  void depth(std::uint64_t seq, std::int64_t ts, std::uint16_t loc) {
    t.d_seq.push_back(seq);
    t.d_ts.push_back(ts);
    t.d_locate.push_back(loc);
    side_levels(loc, book::Side::Bid, t.d_bid_px, t.d_bid_qty);
    side_levels(loc, book::Side::Ask, t.d_ask_px, t.d_ask_qty);
  }

  void side_levels(std::uint16_t loc, book::Side s, std::vector<double>& px, std::vector<std::int64_t>& qty) {
    const std::size_t n = books_.top(loc, s, scratch_.data(), levels_);
    for (std::size_t i = 0; i < levels_; ++i) {
      px.push_back(i < n ? scratch_[i].price / kPrice4Scale : std::numeric_limits<double>::quiet_NaN());
      qty.push_back(i < n ? static_cast<std::int64_t>(scratch_[i].shares) : 0);
    }
  }

  void bbo(std::uint64_t seq, std::int64_t ts, std::uint16_t loc) {
    const book::Level b = books_.level(loc, book::Side::Bid, 0), a = books_.level(loc, book::Side::Ask, 0);
    const Top now{b.price, a.price, b.shares, a.shares};
    if (now == top_[loc]) return;
    top_[loc] = now;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    t.b_seq.push_back(seq);
    t.b_ts.push_back(ts);
    t.b_locate.push_back(loc);
    t.b_bid_px.push_back(b.price ? b.price / kPrice4Scale : nan);
    t.b_ask_px.push_back(a.price ? a.price / kPrice4Scale : nan);
    t.b_bid_qty.push_back(static_cast<std::int64_t>(b.shares));
    t.b_ask_qty.push_back(static_cast<std::int64_t>(a.shares));
  }

  const book::BookSet& books_;
  std::set<std::string> symbols_;
  std::size_t levels_;
  std::vector<std::uint8_t> selected_;
  std::vector<Top> top_;
  std::vector<book::Level> scratch_;
  book::OrderInfo resting_{};
  bool found_ = false;
  bool depth_ = false, bbo_ = false, trades_ = false, orders_ = false;
};

nb::dict to_dict(Tables&& t, std::size_t levels, const std::set<std::string>& tables) {
  nb::dict out;
  if (tables.count("depth")) {
    nb::dict d;
    d["seq"] = column(std::move(t.d_seq));
    d["timestamp_ns"] = column(std::move(t.d_ts));
    d["locate"] = column(std::move(t.d_locate));
    d["bid_price"] = column(std::move(t.d_bid_px), levels);
    d["bid_size"] = column(std::move(t.d_bid_qty), levels);
    d["ask_price"] = column(std::move(t.d_ask_px), levels);
    d["ask_size"] = column(std::move(t.d_ask_qty), levels);
    out["depth"] = d;
  }
  if (tables.count("bbo")) {
    nb::dict d;
    d["seq"] = column(std::move(t.b_seq));
    d["timestamp_ns"] = column(std::move(t.b_ts));
    d["locate"] = column(std::move(t.b_locate));
    d["bid_price"] = column(std::move(t.b_bid_px));
    d["bid_size"] = column(std::move(t.b_bid_qty));
    d["ask_price"] = column(std::move(t.b_ask_px));
    d["ask_size"] = column(std::move(t.b_ask_qty));
    out["bbo"] = d;
  }
  if (tables.count("trades")) {
    nb::dict d;
    d["seq"] = column(std::move(t.t_seq));
    d["timestamp_ns"] = column(std::move(t.t_ts));
    d["locate"] = column(std::move(t.t_locate));
    d["type"] = column(std::move(t.t_type));
    d["price"] = column(std::move(t.t_price));
    d["shares"] = column(std::move(t.t_shares));
    d["aggressor"] = column(std::move(t.t_aggressor));
    d["printable"] = column(std::move(t.t_printable));
    d["match_number"] = column(std::move(t.t_match));
    out["trades"] = d;
  }
  if (tables.count("orders")) {
    nb::dict d;
    d["seq"] = column(std::move(t.o_seq));
    d["timestamp_ns"] = column(std::move(t.o_ts));
    d["locate"] = column(std::move(t.o_locate));
    d["type"] = column(std::move(t.o_type));
    d["ref"] = column(std::move(t.o_ref));
    d["new_ref"] = column(std::move(t.o_new_ref));
    d["side"] = column(std::move(t.o_side));
    d["shares"] = column(std::move(t.o_shares));
    d["price"] = column(std::move(t.o_price));
    out["orders"] = d;
  }
  return out;
}

const std::set<std::string> kTables = {"depth", "bbo", "trades", "orders"};

// The reader behind tickinfer.ItchReader: one pass over a source, batch by batch.
class PyItchReader {
 public:
  PyItchReader(const std::string& path, const std::vector<std::string>& symbols, int levels,
               const std::vector<std::string>& tables, std::size_t batch_messages)
      : path_(path), levels_(static_cast<std::size_t>(levels)), batch_(batch_messages) {
    if (levels < 1 || levels > 1000) throw Error("ItchReader: levels must be 1..1000, got " + std::to_string(levels));
    if (batch_messages == 0) throw Error("ItchReader: batch_messages must be > 0");
    for (const auto& t : tables) {
      if (!kTables.count(t)) throw Error("ItchReader: unknown table '" + t + "' (depth, bbo, trades, orders)");
      tables_.insert(t);
    }
    for (const auto& s : symbols) {
      if (s.empty() || s.size() > 8) throw Error("ItchReader: symbol '" + s + "' must be 1 to 8 characters");
      symbols_.insert(s);
    }
    kind_ = itch::check_source(path_);  // refuses what is not ITCH, naming why
    books_ = std::make_unique<book::BookSet>();
    observer_ = std::make_unique<TableObserver>(*books_, symbols_, levels_, tables_);
    replay_ = std::make_unique<book::ItchReplay>(*books_, observer_.get(), book::Lookahead::On);
    if (kind_ != itch::SourceKind::Capture) day_ = std::make_unique<itch::DayFileReader>(path_);
  }

  // The next batch's tables, or None at the end.
  nb::object next() {
    if (done_) return nb::none();
    {
      nb::gil_scoped_release unlocked;
      if (day_) {
        const std::size_t n = day_->read([this](const itch::DayRecord& r) { replay_->on_record(r.seq, r.msg, r.len); },
                                         batch_);
        replay_->flush();  // this batch's tables hold every message it read
        messages_ += n;
        if (n == 0 || day_->at_end()) done_ = true;
        if (done_ && !day_->error().empty()) error_ = day_->error();
      } else {
        const itch::SourceStats st = itch::read_itch_source(path_, itch::SourceOptions{}, *replay_);
        messages_ += st.records;
        error_ = st.error;
        done_ = true;
      }
    }
    nb::dict out = to_dict(std::move(observer_->t), levels_, tables_);
    observer_->t = Tables{};
    return out;
  }

  nb::dict symbols() const {
    nb::dict d;
    for (std::size_t l = 0; l < observer_->locate_symbol.size(); ++l)
      if (!observer_->locate_symbol[l].empty()) d[nb::int_(l)] = observer_->locate_symbol[l];
    return d;
  }
  nb::dict stats() const {
    const itch::DecodeCounters& c = replay_->decode_counters();
    const book::Integrity t = books_->totals();
    nb::dict d;
    d["messages"] = messages_;
    d["decoded"] = c.total_decoded;
    d["unknown_type"] = c.total_unknown_type;
    d["wrong_length"] = c.total_wrong_length;
    d["lost"] = replay_->lost();
    d["live_orders"] = books_->live_orders();
    d["unknown_ref"] = t.unknown_ref;
    d["duplicate_ref"] = t.duplicate_ref;
    d["overfill"] = t.overfill;
    d["crossed"] = t.crossed;
    d["locked"] = t.locked;
    d["error"] = error_;
    return d;
  }
  std::string kind() const { return itch::to_string(kind_); }

 private:
  std::string path_;
  std::size_t levels_, batch_;
  std::set<std::string> tables_, symbols_;
  itch::SourceKind kind_;
  std::unique_ptr<book::BookSet> books_;
  std::unique_ptr<TableObserver> observer_;
  std::unique_ptr<book::ItchReplay> replay_;
  std::unique_ptr<itch::DayFileReader> day_;
  std::uint64_t messages_ = 0;
  bool done_ = false;
  std::string error_;
};

// tickinfer.itch_features: the batch `tickinfer features --symbols` as (columns, matrix).
nb::tuple itch_features(const std::string& spec_path, const std::string& path, const std::vector<std::string>& symbols,
                        const std::string& date) {
  const features::FeatureSpec spec = features::load_feature_spec(spec_path);
  pipeline::ItchBookTickConfig cfg;
  cfg.symbols = symbols;
  std::optional<itch::Date> d = date.empty() ? itch::date_from_file_name(path) : itch::parse_iso_date(date);
  if (!d) throw Error("itch_features: give date='YYYY-MM-DD' (the file name does not carry the trading date)");
  cfg.date = *d;
  cfg.depth = spec.book_depth();
  pipeline::ItchFileBookTicks source(path, cfg);
  features::FeatureMatrix m;
  {
    nb::gil_scoped_release unlocked;
    m = features::compute_book_features(spec, source);
  }
  if (!source.source_stats().error.empty()) throw Error("itch '" + path + "': " + source.source_stats().error);
  return nb::make_tuple(m.columns, column(std::move(m.raw), m.columns.size()));
}

}  // namespace

void bind_itch(nb::module_& m) {
  nb::class_<PyItchReader>(m, "ItchReader",
                           "NASDAQ TotalView-ITCH 5.0 (day file, gzip, pcap/pcapng) into columnar numpy tables, batch "
                           "by batch (docs/python.md).")
      .def(nb::init<const std::string&, const std::vector<std::string>&, int, const std::vector<std::string>&,
                    std::size_t>(),
           "path"_a, "symbols"_a = std::vector<std::string>{}, "levels"_a = 10,
           "tables"_a = std::vector<std::string>{"depth", "bbo", "trades", "orders"},
           "batch_messages"_a = std::size_t{1} << 22)
      .def("next_batch", &PyItchReader::next, "The next batch: a dict of tables (each a dict of numpy columns), or None.")
      .def_prop_ro("symbols", &PyItchReader::symbols, "locate -> symbol, from the Stock Directory so far.")
      .def_prop_ro("kind", &PyItchReader::kind)
      .def("stats", &PyItchReader::stats, "Messages, decode and book integrity counters so far.");
  m.def("itch_features", &itch_features, "spec"_a, "path"_a, "symbols"_a, "date"_a = "",
        "The book features of a feature specification over an ITCH source: (column names, float64 [rows, columns]), "
        "as `tickinfer features SPEC --input PATH --symbols ...` writes them.");
}

}  // namespace tickinfer::python
