#include "feed/arbiter.hpp"

#include <algorithm>
#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

Arbiter::Arbiter(Sequencer& sequencer, std::uint32_t track_window) : seq_(sequencer) {
  if (track_window < 64 || (track_window & (track_window - 1)) != 0) {
    throw Error("arbiter: track window " + std::to_string(track_window) +
                " must be a power of two >= 64");
  }
  window_ = track_window;
  mask_ = track_window - 1;
  for (auto& t : lines_) {
    t.bits.assign(track_window / 64, 0);
    t.base = t.high = sequencer.config().first_seq;
  }
  // Lead tracking only needs the packets in flight between the two lines: a small ring (96 KiB)
  // stays in cache, where one as long as the loss bitmap (1.5 MiB) would miss on every packet.
  first_seen_.resize(std::min<std::uint32_t>(track_window, kLeadWindow));
  lead_mask_ = first_seen_.size() - 1;
}

void Arbiter::settle(Tracker& t, std::uint64_t new_base) noexcept {
  // Every seq in [base, new_base) leaves the bitmap: unset means this line never delivered it.
  if (new_base - t.base > window_) {  // a jump past the whole bitmap: count whole-range losses
    std::uint64_t set = 0;
    for (auto w : t.bits) set += static_cast<std::uint64_t>(__builtin_popcountll(w));
    t.stats.lost_messages += (new_base - t.base) - set;
    for (auto& w : t.bits) w = 0;
    t.base = new_base;
    return;
  }
  for (; t.base < new_base; ++t.base) {
    std::uint64_t& word = t.bits[(t.base & mask_) >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (t.base & 63);
    if (!(word & bit)) ++t.stats.lost_messages;
    word &= ~bit;
  }
}

void Arbiter::track(Tracker& t, const PacketView& p) noexcept {
  const std::uint64_t s = p.seq;
  const std::uint64_t e = p.end_seq();
  if (s < t.base) {
    ++t.stats.too_late_packets;
    return;
  }
  // Keep [base, e) inside the bitmap before touching bits, so no bit aliases an unsettled seq.
  if (e - t.base > window_) settle(t, e - window_);
  if (s < t.base) {  // a packet longer than the whole bitmap: cannot be tracked
    ++t.stats.too_late_packets;
    return;
  }
  if (test_bit(t, s)) {
    ++t.stats.duplicate_packets;
    return;
  }
  if (s < t.high) ++t.stats.reordered_packets;
  for (std::uint64_t q = s; q < e; ++q) t.bits[(q & mask_) >> 6] |= std::uint64_t{1} << (q & 63);
  if (e > t.high) t.high = e;
}

// The sequencer began a new sequence space: close the old one on every line, start the new.
void Arbiter::sync_epoch() noexcept {
  const std::uint64_t old = epoch_;
  epoch_ = seq_.epoch();
  const std::uint64_t first_locked = seq_.first_locked_epoch();
  const bool dropped = old != 0 && (first_locked == 0 || old < first_locked);
  for (int i = 0; i <= kLiveLines; ++i) {
    Tracker& t = lines_[i];
    if (dropped) {  // a candidate that never was the session: its packets were another session's
      const LineStats& a = t.at_epoch;
      t.stats.other_session_packets += (t.stats.packets - a.packets) + (t.stats.control_packets - a.control_packets);
      t.stats.packets = a.packets;
      t.stats.messages = a.messages;
      t.stats.control_packets = a.control_packets;
      t.stats.duplicate_packets = a.duplicate_packets;
      t.stats.reordered_packets = a.reordered_packets;
      t.stats.too_late_packets = a.too_late_packets;
      t.stats.lost_messages = a.lost_messages;
    } else if (old != 0 && i < kLiveLines && seq_.previous_end() > t.base) {
      settle(t, seq_.previous_end());
    }
    for (auto& w : t.bits) w = 0;
    t.base = t.high = seq_.session_start();
    t.at_epoch = t.stats;
  }
}

void Arbiter::record_lead(int line, const PacketView& p, std::int64_t rx_ns, bool stamped) noexcept {
  FirstSeen& f = first_seen_[p.seq & lead_mask_];
  if (f.seq != p.seq || f.epoch != epoch_) {
    f = FirstSeen{p.seq, rx_ns, epoch_, static_cast<std::uint8_t>(line), stamped, false};
    return;
  }
  if (f.line == line || f.matched) return;
  f.matched = true;
  if (!stamped || !f.stamped) {  // no kernel stamp to compare: the copy read first leads
    ++lines_[f.line].stats.led;
    ++lines_[f.line].stats.lead_by_read_order;
    return;
  }
  const bool this_first = rx_ns < f.rx_ns;
  Tracker& leader = lines_[this_first ? line : f.line];
  ++leader.stats.led;
  leader.lead.record(this_first ? f.rx_ns - rx_ns : rx_ns - f.rx_ns);
}

std::size_t Arbiter::on_packet(int line, const PacketView& p, std::int64_t kernel_rx_ns,
                               std::int64_t now_ns, bool kernel_stamped) noexcept {
  RxMeta meta{kernel_rx_ns, static_cast<std::uint8_t>(line)};
  const std::size_t n = seq_.on_packet(p, meta, now_ns);
  if (seq_.epoch() != epoch_) sync_epoch();
  Tracker& t = lines_[line];
  switch (seq_.last_verdict()) {
    case PacketVerdict::OtherSession: ++t.stats.other_session_packets; return n;
    case PacketVerdict::FarFuture: ++t.stats.far_future_packets; return n;
    case PacketVerdict::Current: break;
  }
  if (p.kind != PacketKind::Data) {
    ++t.stats.control_packets;
    return n;
  }
  ++t.stats.packets;
  t.stats.messages += p.count;
  if (line < kLiveLines) {
    track(t, p);
    if (seq_.locked()) record_lead(line, p, kernel_rx_ns, kernel_stamped);
  }
  return n;
}

void Arbiter::finish(std::uint64_t next_seq) noexcept {
  if (seq_.epoch() != epoch_) sync_epoch();
  if (epoch_ == 0 || !seq_.locked()) {  // no session: everything below next_seq was lost on each line
    const std::uint64_t first = seq_.config().first_seq;
    for (int i = 0; i < kLiveLines; ++i) {
      if (epoch_ == 0 && next_seq > first) lines_[i].stats.lost_messages += next_seq - first;
    }
    return;
  }
  for (int i = 0; i < kLiveLines; ++i) {
    Tracker& t = lines_[i];
    if (next_seq > t.base) settle(t, next_seq);
  }
}

}  // namespace tickinfer::feed
