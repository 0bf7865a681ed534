#pragma once
// ITCH records -> decoded messages -> the order books: the one loop every reader of exchange data
// runs (`tickinfer book`, the benchmarks, the features). It is the ItchSink a source fills, so the
// same code serves a day file, a gzip day file and a capture.
//
// A record that does not decode (unknown type, wrong length) is counted and skipped, never
// applied. A hole a capture could not fill marks every book unsynced: which instruments the lost
// messages touched is unknowable, so none may be trusted until rebuilt.
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

class ItchReplay : public itch::ItchSink {
 public:
  ItchReplay(BookSet& books, ReplayObserver* observer) : books_(books), observer_(observer) {}

  void on_record(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len) noexcept override;
  void on_lost(std::uint64_t first, std::uint64_t count) noexcept override;

  const itch::DecodeCounters& decode_counters() const noexcept { return counters_; }
  std::uint64_t lost() const noexcept { return lost_; }
  std::uint64_t last_seq() const noexcept { return last_seq_; }

 private:
  BookSet& books_;
  ReplayObserver* observer_;
  itch::DecodeCounters counters_;
  std::uint64_t lost_ = 0;
  std::uint64_t last_seq_ = 0;
};

}  // namespace tickinfer::book
