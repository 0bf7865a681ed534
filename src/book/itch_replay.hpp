#pragma once
// ITCH records -> decoded messages -> the order books: the one loop every reader of exchange data
// runs (`tickinfer book`, the benchmarks, the features). It is the ItchSink a source fills, so the
// same code serves a day file, a gzip day file and a capture.
//
// A record that does not decode (unknown type, wrong length) is counted and skipped, never
// applied. A hole a capture could not fill marks every book unsynced: which instruments the lost
// messages touched is unknowable, so none may be trusted until rebuilt.
//
// Look-ahead (files): a message is decoded when it arrives and held in a ring of kLookahead; it is
// applied when the ring is full, that is when kLookahead - 1 more have arrived (so up to
// kLookahead - 1 are held between calls). Meanwhile BookSet::prefetch starts the loads its apply
// will take, in stages. The books' misses (a delete is two dependent ones before it can start on
// its level and neighbours) then overlap across messages instead of running one after another.
// The books and the observer still see every message in sequence order, only later; the decode
// counters and last_seq() count messages as they arrive, so they run ahead of the books by what
// is held. flush() applies what is held: on_end() and on_lost() call it, and a reader that stops
// part-way through a source must call it before it looks at the books. The live feed keeps it
// off: there a message must not wait for the next ones.
#include <array>
#include <cstdint>

#include "book/book_set.hpp"
#include "itch/itch_decoder.hpp"
#include "itch/itch_source.hpp"

namespace tickinfer::book {

// Told about every message that decoded: before the books apply it (to see what it will touch)
// and after.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void before(const itch::Message& m) noexcept {}
  virtual void on_message(std::uint64_t seq, const itch::Message& m, const Applied& applied) noexcept = 0;
};

enum class Lookahead : std::uint8_t { Off, On };

class ItchReplay : public itch::ItchSink {
 public:
  static constexpr unsigned kLookahead = 32;  // the ring's slots; a power of two
  static constexpr unsigned kOrderStage = 16;  // a message's order is requested when it is this many from the tail

  ItchReplay(BookSet& books, ReplayObserver* observer, Lookahead lookahead = Lookahead::Off)
      : books_(books), observer_(observer), lookahead_(lookahead == Lookahead::On) {}

  void on_record(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len) noexcept override;
  void on_lost(std::uint64_t first, std::uint64_t count) noexcept override;
  void on_end() noexcept override { flush(); }
  void flush() noexcept;  // applies every message held by the look-ahead

  const itch::DecodeCounters& decode_counters() const noexcept { return counters_; }
  std::uint64_t lost() const noexcept { return lost_; }
  std::uint64_t last_seq() const noexcept { return last_seq_; }
  unsigned held() const noexcept { return static_cast<unsigned>(head_ - tail_); }

 private:
  struct Held {
    std::uint64_t seq;
    itch::Message m;
  };
  void apply(std::uint64_t seq, const itch::Message& m) noexcept {
    if (observer_ != nullptr) observer_->before(m);
    const Applied applied = books_.apply(m);
    if (observer_ != nullptr) observer_->on_message(seq, m, applied);
  }
  Held& at(std::uint64_t i) noexcept { return ring_[i & (kLookahead - 1)]; }

  BookSet& books_;
  ReplayObserver* observer_;
  bool lookahead_;
  itch::DecodeCounters counters_;
  std::uint64_t lost_ = 0;
  std::uint64_t last_seq_ = 0;
  std::array<Held, kLookahead> ring_{};
  std::uint64_t head_ = 0;  // messages taken into the ring
  std::uint64_t tail_ = 0;  // messages applied from it
};

}  // namespace tickinfer::book
