#include "book/lobster_writer.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::book {
namespace {

constexpr std::uint64_t kNs = 1'000'000'000;
constexpr std::uint64_t kOpenNs = 34'200 * kNs;   // 09:30:00
constexpr std::uint64_t kCloseNs = 57'600 * kNs;  // 16:00:00
constexpr std::int64_t kEmptyAsk = 9'999'999'999;
constexpr std::size_t kSpillBytes = 1 << 16;      // per symbol, before appending to its files

int direction(Side s) { return s == Side::Bid ? 1 : -1; }

int halt_price(char state) {
  switch (state) {
    case 'Q': return 0;   // quotation only
    case 'T': return 1;   // trading
    default: return -1;   // halted, paused (and any state the spec may add)
  }
}

// Returns "" or what went wrong.
std::string append_file(const std::string& path, const std::string& text, bool truncate) {
  std::FILE* f = std::fopen(path.c_str(), truncate ? "wb" : "ab");
  if (f == nullptr) return "cannot write LOBSTER file '" + path + "': " + std::strerror(errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) return "writing LOBSTER file '" + path + "' failed";
  return "";
}

}  // namespace

LobsterWriter::LobsterWriter(const std::string& dir, const std::string& date, std::size_t levels)
    : dir_(dir), date_(date), levels_(levels), selected_(1 << 16, 0), files_(1 << 16), scratch_(levels + 1) {
  if (levels == 0 || levels > 1000) throw Error("LOBSTER: levels must be in [1, 1000]");
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error("cannot create LOBSTER directory '" + dir + "': " + std::strerror(errno));
  }
}

LobsterWriter::~LobsterWriter() = default;

void LobsterWriter::select(std::uint16_t locate, bool selected) { selected_[locate] = selected ? 1 : 0; }

void LobsterWriter::before(const BookSet& books, const itch::Message& m) noexcept {
  found_ = false;
  new_was_live_ = false;
  switch (m.type()) {
    case itch::Type::OrderExecuted: found_ = books.find_order(m.executed.order_ref, order_); break;
    case itch::Type::OrderExecutedWithPrice:
      found_ = books.find_order(m.executed_with_price.order_ref, order_);
      break;
    case itch::Type::OrderCancel: found_ = books.find_order(m.cancel.order_ref, order_); break;
    case itch::Type::OrderDelete: found_ = books.find_order(m.del.order_ref, order_); break;
    case itch::Type::OrderReplace: {
      found_ = books.find_order(m.replace.original_ref, order_);
      OrderInfo other;
      new_was_live_ = m.replace.new_ref != m.replace.original_ref && books.find_order(m.replace.new_ref, other);
      break;
    }
    default: break;
  }
}

void LobsterWriter::message_row(std::uint16_t locate, std::uint64_t ts, int type, std::uint64_t id,
                                std::uint64_t size, std::int64_t price, int dir) noexcept {
  char line[128];
  const int n = std::snprintf(line, sizeof line, "%llu.%09llu,%d,%llu,%llu,%lld,%d\n",
                              static_cast<unsigned long long>(ts / kNs), static_cast<unsigned long long>(ts % kNs),
                              type, static_cast<unsigned long long>(id), static_cast<unsigned long long>(size),
                              static_cast<long long>(price), dir);
  files_[locate].message.append(line, static_cast<std::size_t>(n));
  ++rows_;
}

// The orderbook line for locate; `without` removes one order the book holds (U's new order, for
// the book between the original's removal and the new order's entry).
void LobsterWriter::book_row(const BookSet& books, std::uint16_t locate, const OrderInfo* without) noexcept {
  Level ask[1024], bid[1024];
  Level* sides[2] = {bid, ask};
  std::size_t count[2];
  for (int s = 0; s < 2; ++s) {
    count[s] = books.top(locate, static_cast<Side>(s), sides[s], levels_ + 1);
    if (without != nullptr && static_cast<int>(without->side) == s) {
      for (std::size_t i = 0; i < count[s]; ++i) {
        if (sides[s][i].price != without->price) continue;
        sides[s][i].shares -= without->shares;
        if (--sides[s][i].orders == 0) {
          for (std::size_t k = i; k + 1 < count[s]; ++k) sides[s][k] = sides[s][k + 1];
          --count[s];
        }
        break;
      }
    }
  }
  std::string& out = files_[locate].orderbook;
  char cell[96];
  for (std::size_t i = 0; i < levels_; ++i) {
    const bool has_ask = i < count[1], has_bid = i < count[0];
    const int n = std::snprintf(cell, sizeof cell, "%s%lld,%llu,%lld,%llu", i == 0 ? "" : ",",
                                has_ask ? static_cast<long long>(ask[i].price) : kEmptyAsk,
                                has_ask ? static_cast<unsigned long long>(ask[i].shares) : 0ULL,
                                has_bid ? static_cast<long long>(bid[i].price) : -kEmptyAsk,
                                has_bid ? static_cast<unsigned long long>(bid[i].shares) : 0ULL);
    out.append(cell, static_cast<std::size_t>(n));
  }
  out += '\n';
}

void LobsterWriter::after(const BookSet& books, const itch::Message& m, const Applied& applied) noexcept {
  books_ = &books;
  const std::uint64_t ts = m.header.timestamp_ns;
  if (ts < kOpenNs || ts >= kCloseNs) return;
  const std::uint16_t header_locate = m.header.locate;
  auto row = [&](std::uint16_t locate, int type, std::uint64_t id, std::uint64_t size, std::int64_t price, int dir,
                 const OrderInfo* without = nullptr) {
    if (!selected_[locate]) return;
    message_row(locate, ts, type, id, size, price, dir);
    book_row(books, locate, without);
    spill(books, locate, false);
  };
  switch (m.type()) {
    case itch::Type::AddOrder:
    case itch::Type::AddOrderMpid:
      if (applied.changed) {
        row(applied.locate, 1, m.add.order_ref, m.add.shares, m.add.price, m.add.side == 'B' ? 1 : -1);
      }
      break;
    case itch::Type::OrderExecuted:
      if (found_) row(order_.locate, 4, m.executed.order_ref, m.executed.shares, order_.price, direction(order_.side));
      break;
    case itch::Type::OrderExecutedWithPrice:
      if (found_) {
        row(order_.locate, 4, m.executed_with_price.order_ref, m.executed_with_price.shares, order_.price,
            direction(order_.side));
      }
      break;
    case itch::Type::OrderCancel:
      if (found_) row(order_.locate, 2, m.cancel.order_ref, m.cancel.shares, order_.price, direction(order_.side));
      break;
    case itch::Type::OrderDelete:
      if (found_) row(order_.locate, 3, m.del.order_ref, order_.shares, order_.price, direction(order_.side));
      break;
    case itch::Type::OrderReplace: {
      if (!found_) break;
      OrderInfo added;
      const bool was_added = !new_was_live_ && books.find_order(m.replace.new_ref, added);
      row(order_.locate, 3, m.replace.original_ref, order_.shares, order_.price, direction(order_.side),
          was_added ? &added : nullptr);
      if (was_added) {
        row(order_.locate, 1, m.replace.new_ref, m.replace.shares, m.replace.price, direction(order_.side));
      }
      break;
    }
    case itch::Type::Trade: row(header_locate, 5, 0, m.trade.shares, m.trade.price, 1); break;
    case itch::Type::CrossTrade: row(header_locate, 6, 0, m.cross.shares, m.cross.price, -1); break;
    case itch::Type::StockTradingAction:
      row(header_locate, 7, 0, 0, halt_price(m.trading_action.trading_state), -1);
      break;
    case itch::Type::OperationalHalt:
      row(header_locate, 7, 0, 0, m.operational_halt.action == 'H' ? -1 : 1, -1);
      break;
    default: break;
  }
}

// Appends a symbol's buffered rows to its two files once they are large (or when forced), so a
// day of every symbol neither holds all rows in memory nor keeps thousands of files open.
void LobsterWriter::spill(const BookSet& books, std::uint16_t locate, bool force) noexcept {
  SymbolFiles& f = files_[locate];
  if (f.message.empty() || (!force && f.message.size() < kSpillBytes)) return;
  const std::string stem = dir_ + "/" + std::string(books.symbol(locate)) + "_" + date_ + "_34200000_57600000_";
  const std::string suffix = "_" + std::to_string(levels_) + ".csv";
  // Books are being applied here, where nothing may throw: the first failure waits for flush().
  for (const auto& [kind, text] : {std::pair{"message", &f.message}, std::pair{"orderbook", &f.orderbook}}) {
    std::string e = append_file(stem + kind + suffix, *text, !f.started);
    if (error_.empty()) error_ = std::move(e);
  }
  f.started = true;
  f.message.clear();
  f.orderbook.clear();
}

void LobsterWriter::flush() {
  if (books_ != nullptr) {
    for (std::size_t l = 0; l < files_.size(); ++l) spill(*books_, static_cast<std::uint16_t>(l), true);
  }
  if (!error_.empty()) throw Error(error_);
}

}  // namespace tickinfer::book
