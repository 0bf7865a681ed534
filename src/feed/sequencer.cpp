#include "feed/sequencer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
constexpr std::uint64_t kEmpty = UINT64_MAX;
}

const char* to_string(LossReason reason) noexcept {
  switch (reason) {
    case LossReason::Skipped: return "skipped";
    case LossReason::Unrecoverable: return "unrecoverable";
    case LossReason::SessionChanged: return "session changed";
  }
  return "unknown";
}

Sequencer::Sequencer(const SequencerConfig& config, SequencerSink& sink) : cfg_(config), sink_(sink) {
  const std::uint32_t w = cfg_.window;
  if (w < 2 || w > (1u << 24) || (w & (w - 1)) != 0) {
    throw Error("sequencer: window " + std::to_string(w) + " must be a power of two in [2, 16777216]");
  }
  if (cfg_.max_message_bytes == 0) throw Error("sequencer: max_message_bytes must be > 0");
  if (cfg_.far_future_limit <= w) {
    throw Error("sequencer: far_future_limit must exceed the window (" + std::to_string(w) + ")");
  }
  if (cfg_.first_seq == 0) throw Error("sequencer: first_seq must be >= 1 (MoldUDP64 counts from 1)");
  mask_ = w - 1;
  slots_.resize(w);
  storage_.resize(static_cast<std::size_t>(w) * cfg_.max_message_bytes);
  for (std::size_t i = 0; i < w; ++i) {
    slots_[i] = Slot{kEmpty, RxMeta{}, 0, storage_.data() + i * cfg_.max_message_bytes};
  }
  next_ = cfg_.first_seq;
  highest_ = next_ - 1;
  requested_end_ = next_;
}

bool Sequencer::is_missing(std::uint64_t seq) const noexcept {
  if (seq < next_) return false;
  if (seq - next_ < cfg_.window && slots_[seq & mask_].seq == seq) return false;
  return true;
}

void Sequencer::start_session(const Session& s, std::uint64_t first_seen, bool locked, std::int64_t now_ns) noexcept {
  stats_.joined_at = first_seen;  // joining and catching up are of this sequence space
  stats_.first_packet_ns = now_ns;
  stats_.in_sync_seq = 0;
  stats_.in_sync_ns = 0;
  for (auto& slot : slots_) slot.seq = kEmpty;
  buffered_ = 0;
  session_ = s;
  has_session_ = true;
  next_ = cfg_.join_at_first_seen ? std::max<std::uint64_t>(first_seen, 1) : cfg_.first_seq;
  highest_ = next_ - 1;
  requested_end_ = next_;
  gap_open_ = false;
  abandoned_count_ = 0;
  ended_ = false;
  ended_next_ = 0;
  locked_ = false;
  candidate_packets_ = 0;
  candidate_last_ = 0;
  challenger_packets_ = 0;
  session_start_ = next_;
  ++epoch_;
  if (locked) lock();
}

void Sequencer::lock() noexcept {
  locked_ = true;
  if (first_locked_epoch_ == 0) first_locked_epoch_ = epoch_;
  ++stats_.sessions;
  sink_.on_session_start(session_);
}

// A packet of another session than session_: may it replace it? (The rules: sequencer.hpp.)
bool Sequencer::may_replace(const PacketView& p) noexcept {
  if (locked_) return ended_ && p.seq == cfg_.first_seq;
  if (p.kind != PacketKind::Data) return false;
  if (!cfg_.join_at_first_seen && p.seq <= cfg_.first_seq && cfg_.first_seq < p.end_seq()) return true;
  if (challenger_packets_ == 0 || p.session != challenger_) {
    challenger_ = p.session;
    challenger_packets_ = 1;
    challenger_last_ = p.seq;
  } else if (p.seq > challenger_last_) {
    ++challenger_packets_;
    challenger_last_ = p.seq;
  }
  return challenger_packets_ >= cfg_.confirm_packets;
}

// A packet of the candidate session: does it confirm it?
bool Sequencer::confirms(const PacketView& p) noexcept {
  if (p.kind != PacketKind::Data) return false;
  if (!cfg_.join_at_first_seen && p.seq <= next_ && next_ < p.end_seq()) return true;
  if (candidate_packets_ == 0 || p.seq > candidate_last_) {
    ++candidate_packets_;
    candidate_last_ = p.seq;
  }
  return candidate_packets_ >= cfg_.confirm_packets;
}

// A candidate's data: kept in the window for when it is confirmed, never delivered before.
void Sequencer::hold(const PacketView& p, const RxMeta& meta) noexcept {
  ++stats_.packets;
  MessageCursor cursor(p);
  const std::uint8_t* msg;
  std::uint16_t len;
  std::uint64_t s = p.seq;
  for (std::uint16_t i = 0; i < p.count && cursor.next(msg, len); ++i, ++s) {
    if (s < next_) {
      ++stats_.duplicates;
      continue;
    }
    if (s - next_ >= cfg_.window) {
      ++stats_.window_overruns;
      continue;
    }
    buffer(s, msg, len, meta);
  }
}

// Stores message s (next_ <= s < next_ + window) in its window slot; counts it a duplicate if
// the slot already holds it, an overrun if it is longer than a slot (parse_packet bounds this:
// never store past a slot).
void Sequencer::buffer(std::uint64_t s, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta) noexcept {
  Slot& slot = slots_[s & mask_];
  if (slot.seq == s) {
    ++stats_.duplicates;
    return;
  }
  if (len > cfg_.max_message_bytes) {
    ++stats_.window_overruns;
    return;
  }
  slot.seq = s;
  slot.len = len;
  slot.meta = meta;
  std::memcpy(slot.data, msg, len);
  ++buffered_;
  if (buffered_ > stats_.max_buffered) stats_.max_buffered = buffered_;
  note_highest(s);
}

void Sequencer::deliver(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
                        const RxMeta& meta, std::int64_t now_ns) noexcept {
  ++stats_.delivered;
  if (stats_.in_sync_seq == 0 && seq >= highest_) [[unlikely]] {  // nothing known is missing past it
    stats_.in_sync_seq = seq;
    stats_.in_sync_ns = now_ns;
  }
  sink_.on_message(seq, msg, len, meta, now_ns);
}

void Sequencer::note_highest(std::uint64_t seq) noexcept {
  if (seq > highest_) highest_ = seq;
}

std::size_t Sequencer::drain(std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  while (buffered_ > 0) {
    Slot& slot = slots_[next_ & mask_];
    if (slot.seq != next_) break;
    slot.seq = kEmpty;
    --buffered_;
    deliver(next_, slot.data, slot.len, slot.meta, now_ns);
    ++next_;
    ++n;
  }
  return n;
}

std::size_t Sequencer::skip_to(std::uint64_t target, LossReason reason, std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  while (next_ < target) {
    n += drain(now_ns);
    if (next_ >= target) break;
    // next_ is missing: find the end of the missing run (bounded by the window while anything is
    // buffered, since every buffered message lies in [next_, next_ + window)).
    const std::uint64_t run_start = next_;
    if (buffered_ == 0) {
      next_ = target;
    } else {
      while (next_ < target && slots_[next_ & mask_].seq != next_) ++next_;
    }
    const std::uint64_t count = next_ - run_start;
    stats_.lost += count;
    ++stats_.lost_ranges;
    sink_.on_lost(run_start, count, reason);
  }
  n += drain(now_ns);
  if (next_ > 0 && highest_ < next_ - 1) highest_ = next_ - 1;
  if (requested_end_ < next_) requested_end_ = next_;
  return n;
}

std::size_t Sequencer::trigger(std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  if (cfg_.policy == GapPolicy::Skip) {
    // Skip the first hole only: [N, first buffered), or up to highest_ + 1 for a tail hole.
    std::uint64_t target = highest_ + 1;
    if (buffered_ > 0) {
      for (std::uint64_t s = next_ + 1; s <= highest_ && s - next_ < cfg_.window; ++s) {
        if (slots_[s & mask_].seq == s) {
          target = s;
          break;
        }
      }
    }
    n = skip_to(target, LossReason::Skipped, now_ns);
  } else {
    // Report every missing run in [max(N, requested_end_), highest_] not yet reported.
    std::uint64_t s = std::max(next_, requested_end_);
    while (s <= highest_) {
      if (s - next_ < cfg_.window && slots_[s & mask_].seq == s) {
        ++s;
        continue;
      }
      const std::uint64_t run_start = s;
      while (s <= highest_) {
        if (s - next_ >= cfg_.window) {
          s = highest_ + 1;  // beyond the window nothing is stored: all missing
          break;
        }
        if (slots_[s & mask_].seq == s) break;
        ++s;
      }
      ++stats_.gap_ranges_requested;
      stats_.gap_messages_requested += s - run_start;
      sink_.on_gap_detected(run_start, s - run_start, now_ns);
    }
    requested_end_ = highest_ + 1;
  }
  // Re-arm: the next trigger waits a full timeout / packet count again.
  gap_open_ = highest_ >= next_;
  gap_at_ = next_;
  gap_since_ns_ = now_ns;
  gap_packets_ = 0;
  return n;
}

// The session rules (sequencer.hpp) for one packet. False: it was dropped, or held for a candidate;
// n: what a session change or a confirmation delivered.
bool Sequencer::admit(const PacketView& p, const RxMeta& meta, std::int64_t now_ns, std::size_t& n) noexcept {
  verdict_ = PacketVerdict::Current;
  if (cfg_.pin_session && p.session != cfg_.session) {
    ++stats_.wrong_session_packets;
    verdict_ = PacketVerdict::OtherSession;
    return false;
  }
  if (!has_session_) {
    start_session(p.session, p.seq, cfg_.pin_session, now_ns);
  } else if (p.session != session_) {
    if (has_previous_ && p.session == previous_) {
      stats_.stale += p.kind == PacketKind::Data ? p.count : 1;
      verdict_ = PacketVerdict::OtherSession;
      return false;
    }
    if (!may_replace(p)) {
      ++stats_.wrong_session_packets;
      verdict_ = PacketVerdict::OtherSession;
      return false;
    }
    if (locked_) {
      n += skip_to(highest_ + 1, LossReason::SessionChanged, now_ns);
      previous_ = session_;
      has_previous_ = true;
      previous_end_ = ended_next_;
      start_session(p.session, p.seq, true, now_ns);
    } else {  // a challenger confirmed before the candidate: the candidate's held data goes
      ++stats_.candidates_dropped;
      stats_.held_dropped += buffered_;
      start_session(p.session, p.seq, false, now_ns);
      lock();
    }
  }
  if (p.seq > next_ && p.seq - next_ >= cfg_.far_future_limit) {
    // Corrupt or hostile: not even an End of Session of this session is believed.
    verdict_ = PacketVerdict::FarFuture;
    stats_.far_future += p.kind == PacketKind::Data ? p.count : 1;
    return false;
  }
  if (!locked_) {
    if (!confirms(p)) {
      if (p.kind == PacketKind::Data) {
        hold(p, meta);
      } else if (p.kind == PacketKind::Heartbeat) {
        ++stats_.heartbeats;
      } else {
        ++stats_.end_of_session;
      }
      return false;
    }
    lock();
    n += drain(now_ns);
  }
  return true;
}

std::size_t Sequencer::on_packet(const PacketView& p, const RxMeta& meta, std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  if (!admit(p, meta, now_ns, n)) return n;
  const std::uint64_t window = cfg_.window;

  if (p.kind != PacketKind::Data) {
    if (p.kind == PacketKind::Heartbeat) {
      ++stats_.heartbeats;
    } else {
      ++stats_.end_of_session;
    }
    if (p.seq > next_) {
      if (p.seq - next_ < cfg_.far_future_limit) {
        note_highest(p.seq - 1);
      } else {
        ++stats_.far_future;
      }
    }
    if (p.kind == PacketKind::EndOfSession) {
      if (!ended_) ended_next_ = p.seq;
      ended_ = true;
      sink_.on_end_of_session(session_, p.seq);
    }
  } else {
    ++stats_.packets;
    MessageCursor cursor(p);
    const std::uint8_t* msg;
    std::uint16_t len;
    std::uint64_t s = p.seq;
    for (std::uint16_t i = 0; i < p.count && cursor.next(msg, len); ++i, ++s) {
      if (s < next_) {
        if (next_ - s <= window) {
          ++stats_.duplicates;
        } else {
          ++stats_.stale;
        }
        continue;
      }
      std::uint64_t d = s - next_;
      if (d == 0) {  // the hot path: in order
        deliver(s, msg, len, meta, now_ns);
        ++next_;
        ++n;
        ++stats_.in_order_direct;
        if (buffered_) n += drain(now_ns);
        continue;
      }
      if (d >= cfg_.far_future_limit) {
        stats_.far_future += p.count - i;
        break;
      }
      if (d >= window) {
        if (cfg_.policy == GapPolicy::Recover) {
          // Dropped, but known to exist: the next time/count trigger requests it together with
          // the hole that holds N back, as one range (not one request per dropped message).
          ++stats_.window_overruns;
          note_highest(s);
          continue;
        }
        ++stats_.gap_triggers_overrun;
        n += skip_to(s - window + 1, LossReason::Skipped, now_ns);
        if (s < next_) {  // cannot happen (s was not buffered), kept for safety
          ++stats_.duplicates;
          continue;
        }
        d = s - next_;
        if (d == 0) {
          deliver(s, msg, len, meta, now_ns);
          ++next_;
          ++n;
          if (buffered_) n += drain(now_ns);
          continue;
        }
      }
      buffer(s, msg, len, meta);
    }
    if (highest_ < next_ - 1) highest_ = next_ - 1;
  }

  // Gap bookkeeping: a hole exists while highest_ >= next_. Here, driven by a packet, a hole ages
  // on the packets' receive times (meta.kernel_rx_ns), not on when we got round to reading them:
  // a receiver that was descheduled for a while must not count its own delay against a copy
  // still waiting in the other line's socket. poll(now_ns) ages holes by the clock.
  const std::int64_t t = meta.kernel_rx_ns;
  if (highest_ < next_) {
    gap_open_ = false;
  } else if (!gap_open_ || gap_at_ != next_) {
    // A new hole at N (or N moved on to a later one): its age starts now.
    gap_open_ = true;
    gap_at_ = next_;
    gap_since_ns_ = t;
    gap_packets_ = 0;
  } else {
    ++gap_packets_;
    if (cfg_.gap_packet_threshold && gap_packets_ >= cfg_.gap_packet_threshold) {
      ++stats_.gap_triggers_count;
      n += trigger(now_ns);
      gap_since_ns_ = t;
    } else if (cfg_.gap_timeout_ns > 0 && t - gap_since_ns_ >= cfg_.gap_timeout_ns) {
      ++stats_.gap_triggers_time;
      n += trigger(now_ns);
      gap_since_ns_ = t;
    }
  }
  if (abandoned_count_) n += resolve_abandoned(now_ns);
  return n;
}

std::size_t Sequencer::poll(std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  if (!locked_) return 0;  // no session, or a candidate: nothing is due before it is confirmed
  if (abandoned_count_) n += resolve_abandoned(now_ns);
  if (gap_open_ && gap_at_ != next_) {  // N moved without a packet (abandon): restart the clock
    gap_at_ = next_;
    gap_since_ns_ = now_ns;
    gap_packets_ = 0;
  }
  if (gap_open_ && highest_ >= next_ && cfg_.gap_timeout_ns > 0 &&
      now_ns - gap_since_ns_ >= cfg_.gap_timeout_ns) {
    ++stats_.gap_triggers_time;
    n += trigger(now_ns);
  }
  return n;
}

void Sequencer::abandon(std::uint64_t first, std::uint64_t end, std::int64_t now_ns) noexcept {
  if (!locked_ || end <= next_ || first >= end) return;
  if (abandoned_count_ < kMaxAbandoned) {
    abandoned_[abandoned_count_++] = Range{first, end};
  } else {  // full: widen the last range; a superset only gives up on what is missing there
    Range& last = abandoned_[kMaxAbandoned - 1];
    last.first = std::min(last.first, first);
    last.end = std::max(last.end, end);
  }
  resolve_abandoned(now_ns);
}

std::size_t Sequencer::resolve_abandoned(std::int64_t now_ns) noexcept {
  std::size_t n = 0;
  for (;;) {
    // Forget ranges already behind N.
    std::size_t w = 0;
    for (std::size_t i = 0; i < abandoned_count_; ++i) {
      if (abandoned_[i].end > next_) abandoned_[w++] = abandoned_[i];
    }
    abandoned_count_ = w;
    if (slots_[next_ & mask_].seq == next_) break;  // N is here: nothing to give up on
    const Range* hit = nullptr;
    for (std::size_t i = 0; i < abandoned_count_; ++i) {
      if (abandoned_[i].first <= next_ && next_ < abandoned_[i].end) hit = &abandoned_[i];
    }
    if (!hit) break;
    // Lose [N, first present in the range), then deliver what follows.
    std::uint64_t target = hit->end;
    if (buffered_ > 0) {
      for (std::uint64_t s = next_; s < hit->end && s - next_ < cfg_.window; ++s) {
        if (slots_[s & mask_].seq == s) {
          target = s;
          break;
        }
      }
    }
    if (highest_ < target - 1) highest_ = target - 1;
    n += skip_to(target, LossReason::Unrecoverable, now_ns);
  }
  if (highest_ < next_) gap_open_ = false;
  return n;
}

void Sequencer::flush(std::int64_t now_ns, LossReason reason) noexcept {
  if (!locked_) return;  // a candidate's held messages are never delivered
  if (highest_ >= next_) skip_to(highest_ + 1, reason, now_ns);
  gap_open_ = false;
}

}  // namespace tickinfer::feed
