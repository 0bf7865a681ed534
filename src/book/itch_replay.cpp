#include "book/itch_replay.hpp"

namespace tickinfer::book {

void ItchReplay::on_record(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len) noexcept {
  last_seq_ = seq;
  itch::Message m;
  const itch::DecodeStatus status = itch::decode(msg, len, m);
  counters_.count(len > 0 ? msg[0] : 0, status);
  if (status != itch::DecodeStatus::Ok) return;
  if (observer_ != nullptr) observer_->before(m);
  const Applied applied = books_.apply(m);
  if (observer_ != nullptr) observer_->on_message(seq, m, applied);
}

void ItchReplay::on_lost(std::uint64_t, std::uint64_t count) noexcept {
  lost_ += count;
  books_.mark_all_unsynced();
}

}  // namespace tickinfer::book
