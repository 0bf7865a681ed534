#include "book/itch_replay.hpp"

namespace tickinfer::book {

static_assert((ItchReplay::kLookahead & (ItchReplay::kLookahead - 1)) == 0);
static_assert(ItchReplay::kOrderStage < ItchReplay::kLookahead);

void ItchReplay::on_record(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len) noexcept {
  last_seq_ = seq;
  Held& slot = at(head_);  // a free slot: at most kLookahead - 1 are held between calls
  const itch::DecodeStatus status = itch::decode(msg, len, slot.m);
  counters_.count(len > 0 ? msg[0] : 0, status);
  if (status != itch::DecodeStatus::Ok) return;
  if (!lookahead_) {
    apply(seq, slot.m);
    return;
  }
  slot.seq = seq;
  // Stages by place in the ring: the newest gets its index entry requested; the one kOrderStage
  // places after the oldest gets its order requested, its entry having come in meanwhile; the
  // oldest is applied once the ring is full.
  books_.prefetch(slot.m, BookSet::LoadStage::Index);
  ++head_;
  const std::uint64_t held = head_ - tail_;
  if (held > kOrderStage) books_.prefetch(at(tail_ + kOrderStage).m, BookSet::LoadStage::Order);
  if (held == kLookahead) {
    const Held& oldest = at(tail_++);
    apply(oldest.seq, oldest.m);
  }
}

void ItchReplay::flush() noexcept {
  while (tail_ != head_) {
    const Held& h = at(tail_++);
    apply(h.seq, h.m);
  }
}

void ItchReplay::on_lost(std::uint64_t, std::uint64_t count) noexcept {
  flush();  // what came before the hole is applied before the books are marked
  lost_ += count;
  books_.mark_all_unsynced();
}

}  // namespace tickinfer::book
