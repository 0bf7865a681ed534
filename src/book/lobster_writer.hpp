#pragma once
// LOBSTER's two files per symbol (message and orderbook, same number of rows), so research code
// written for LOBSTER reads tickinfer's books. The conventions, from LOBSTER's published data
// structure where it speaks and written down here where it does not (docs/book.md, "LOBSTER"):
//
// - window 09:30:00 <= t < 16:00:00 (LOBSTER's default); the book is built over the whole day;
// - time: seconds after midnight with 9 decimals; prices: the Price(4) integers;
// - types: A/F 1, X 2, D 3, E and C 4, P 5, Q 6, H and h 7; U is two rows at the same time:
//   3 (the original, its remaining shares) with the book between removal and re-entry, then 1
//   (the new reference) with the book after;
// - size: the shares the message names, except D and U's 3-row (the shares the order still had);
//   price: the resting order's display price, also for C (its execution price moved nothing);
//   direction: the resting order's side, 1 buy, -1 sell;
// - P: id 0, direction 1 (the wire always says 'B'); Q: id 0, direction -1; halts: id 0, size 0,
//   direction -1, price -1 halted or paused, 0 quotation only, 1 trading ('h': -1 halted, 1 resumed);
// - orderbook line: per level ask price, ask size, bid price, bid size; an empty level is
//   9999999999 / -9999999999 with size 0;
// - a message naming an unknown order, a dropped add and a U whose new order was not added write
//   no row for that part.
#include <cstdint>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "itch/itch_messages.hpp"

namespace tickinfer::book {

class LobsterWriter {
 public:
  // dir is created if missing; date is "YYYY-MM-DD" (it names the files). Throws tickinfer::Error.
  LobsterWriter(const std::string& dir, const std::string& date, std::size_t levels);
  ~LobsterWriter();
  LobsterWriter(const LobsterWriter&) = delete;
  LobsterWriter& operator=(const LobsterWriter&) = delete;

  // Symbols are selected by the caller as their R messages arrive.
  void select(std::uint16_t locate, bool selected);
  // Called with the books before m is applied (what the resting order was), then after.
  void before(const BookSet& books, const itch::Message& m) noexcept;
  void after(const BookSet& books, const itch::Message& m, const Applied& applied) noexcept;
  // Writes every buffered row; throws tickinfer::Error if this or any earlier write failed.
  void flush();
  std::uint64_t rows() const noexcept { return rows_; }

 private:
  struct SymbolFiles {
    std::string message, orderbook;  // buffered rows
    bool started = false;            // the files exist (truncated on first write)
  };
  void message_row(std::uint16_t locate, std::uint64_t ts, int type, std::uint64_t id,
                   std::uint64_t size, std::int64_t price, int direction) noexcept;
  void book_row(const BookSet& books, std::uint16_t locate, const OrderInfo* without) noexcept;
  void spill(const BookSet& books, std::uint16_t locate, bool force) noexcept;

  std::string dir_, date_;
  std::size_t levels_;
  std::vector<std::uint8_t> selected_;
  std::vector<SymbolFiles> files_;
  std::vector<Level> scratch_;
  // What before() saw of the order a message names (valid when found_).
  OrderInfo order_{};
  bool found_ = false;
  bool new_was_live_ = false;  // U: its new reference named another live order (nothing is added)
  std::uint64_t rows_ = 0;
  std::string error_;  // the first failed write, reported by flush()
  const BookSet* books_ = nullptr;  // for symbol names when spilling
};

}  // namespace tickinfer::book
