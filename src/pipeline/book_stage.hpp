#pragma once
// The compute side's full-depth books, for a feed that forwards the exchange's own messages
// (itch::ItchForwarder): each md::ExchangeMessage is decoded and applied to this stage's books
// (book::ItchReplay), and each message that changed a selected symbol's book or printed a trade
// becomes a features::BookTick (ItchBookTicks) handed to `sink` on this thread, with the book's
// top-N view as it stands after the message. A loss notice (size 0) marks every book unsynced.
//
// One per compute agent: it sees only its instruments' messages (the feed dispatches by
// instrument), and a loss notice goes to every agent. Hot path: no allocation, lock or syscall.
#include <cstdint>

#include "book/book_set.hpp"
#include "book/itch_replay.hpp"
#include "pipeline/itch_book_ticks.hpp"
#include "tickinfer/market_data.hpp"

namespace tickinfer::pipeline {

class BookStage {
 public:
  BookStage(const ItchBookTickConfig& config, ItchBookTicks::Sink sink)
      : books_(config.capacity), ticks_(books_, config, std::move(sink)), replay_(books_, &ticks_) {}
  BookStage(const BookStage&) = delete;
  BookStage& operator=(const BookStage&) = delete;

  void on_message(std::uint64_t seq, const md::ExchangeMessage& x) noexcept {
    if (x.size == 0) {
      ++loss_notices_;
      replay_.on_lost(seq, 0);
      return;
    }
    replay_.on_record(seq, x.bytes, x.size);
  }

  const book::BookSet& books() const noexcept { return books_; }
  const itch::DecodeCounters& decode_counters() const noexcept { return replay_.decode_counters(); }
  std::uint64_t ticks() const noexcept { return ticks_.ticks(); }
  std::uint64_t loss_notices() const noexcept { return loss_notices_; }

 private:
  book::BookSet books_;
  ItchBookTicks ticks_;
  book::ItchReplay replay_;
  std::uint64_t loss_notices_ = 0;
};

}  // namespace tickinfer::pipeline
