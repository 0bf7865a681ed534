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
  if (!t.seen || t.session != p.session) {  // a new session: a new sequence space per line too
    for (auto& w : t.bits) w = 0;
    t.base = t.high = seq_.config().join_at_first_seen ? p.seq : seq_.config().first_seq;
    t.session = p.session;
    t.seen = true;
  }
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

std::size_t Arbiter::on_packet(int line, const PacketView& p, std::int64_t kernel_rx_ns,
                               std::int64_t now_ns) noexcept {
  Tracker& t = lines_[line];
  if (p.kind != PacketKind::Data) {
    ++t.stats.control_packets;
  } else {
    ++t.stats.packets;
    t.stats.messages += p.count;
    if (line < kLiveLines) {
      track(t, p);
      FirstSeen& f = first_seen_[p.seq & lead_mask_];
      if (f.seq != p.seq) {
        f = FirstSeen{p.seq, kernel_rx_ns, static_cast<std::uint8_t>(line), false};
      } else if (f.line != line && !f.matched) {
        f.matched = true;
        Tracker& leader = lines_[f.line];
        ++leader.stats.led;
        leader.lead.record(kernel_rx_ns - f.rx_ns);
      }
    }
  }
  RxMeta meta{kernel_rx_ns, static_cast<std::uint8_t>(line)};
  return seq_.on_packet(p, meta, now_ns);
}

void Arbiter::finish(std::uint64_t next_seq) noexcept {
  for (int i = 0; i < kLiveLines; ++i) {
    Tracker& t = lines_[i];
    if (!t.seen) {
      const std::uint64_t first = seq_.config().first_seq;
      if (next_seq > first) t.stats.lost_messages += next_seq - first;
      continue;
    }
    if (next_seq > t.base) settle(t, next_seq);
  }
}

}  // namespace tickinfer::feed
