#pragma once
// A/B arbitration: packets from line A (0), line B (1) and the recovery socket (2) are merged by
// sequence number through one Sequencer, so a message is lost only if both lines (and recovery)
// lost it. Beside that, each live line is tracked on its own, to say how good it is:
//
//   * lost_messages: sequence numbers this line never delivered. A per-line bitmap of
//     `track_window` messages trails the line's highest sequence; a bit that leaves it unset is
//     a loss. finish(next_seq) counts what is still unset, including the tail the line never
//     reached. A copy arriving after its bit left the bitmap counts as `too_late` (not a loss
//     correction).
//   * duplicate_packets: a packet whose first sequence this line already delivered (abnormal on
//     one line, unlike the A/B copy).
//   * reordered_packets: a packet whose first sequence is below one this line already delivered.
//   * led / lead_ns: for each packet of a locked session seen on both lines, the line whose copy
//     the kernel stamped first gets a lead, and the stamp difference goes into that line's
//     histogram (for lines less than 4096 sequence numbers apart; a larger skew is not timed).
//     Where a copy has no kernel stamp the copy read first leads (lead_by_read_order), untimed.
//   * Only packets the sequencer took as the current session's are tracked (Sequencer verdict):
//     other-session and far-future packets have their own counters and move nothing else;
//     malformed datagrams are counted by the caller through on_malformed(). The packets of a
//     candidate session that is dropped are moved from the sequence counters to other_session.
//
// Packets count the same way on the exchange side (src/feed/exchange.cpp) so the two can be
// compared one for one. Single-threaded; nothing here allocates after construction.
#include <cstdint>
#include <vector>

#include "feed/sequencer.hpp"
#include "stats/latency_histogram.hpp"

namespace tickinfer::feed {

class Arbiter {
 public:
  // track_window: messages per line bitmap (power of two, >= sequencer window). Throws
  // tickinfer::Error otherwise.
  Arbiter(Sequencer& sequencer, std::uint32_t track_window = 1u << 16);

  // Arbitrates one validated packet from `line` (kLineA, kLineB or kLineRecovery). Returns the
  // messages delivered.
  // kernel_stamped: kernel_rx_ns is the kernel's stamp (false: a read time stands in for it).
  std::size_t on_packet(int line, const PacketView& packet, std::int64_t kernel_rx_ns,
                        std::int64_t now_ns, bool kernel_stamped = true) noexcept;
  void on_malformed(int line) noexcept { ++lines_[line].stats.malformed_packets; }
  // Closes the per-line loss accounting at next_seq (the session's end, e.g. from End of
  // Session): everything below it that a line never delivered counts as lost on that line.
  void finish(std::uint64_t next_seq) noexcept;

  const LineStats& line(int i) const noexcept { return lines_[i].stats; }
  // Kernel-receive lead of line i over the other line, ns, one sample per packet it led.
  const stats::LatencyHistogram& lead_ns(int i) const noexcept { return lines_[i].lead; }
  Sequencer& sequencer() noexcept { return seq_; }

 private:
  struct Tracker {
    LineStats stats;
    stats::LatencyHistogram lead{60'000'000'000};
    std::vector<std::uint64_t> bits;  // track_window bits, indexed by seq & mask
    std::uint64_t base = 1;           // every seq < base is settled
    std::uint64_t high = 1;           // one past the highest seq delivered on this line
    LineStats at_epoch;               // stats when the current sequence space began
  };
  struct FirstSeen {
    std::uint64_t seq = UINT64_MAX;
    std::int64_t rx_ns = 0;
    std::uint64_t epoch = 0;
    std::uint8_t line = 0;
    bool stamped = false;
    bool matched = false;
  };
  void sync_epoch() noexcept;
  void record_lead(int line, const PacketView& p, std::int64_t rx_ns, bool stamped) noexcept;
  void track(Tracker& t, const PacketView& p) noexcept;
  void settle(Tracker& t, std::uint64_t new_base) noexcept;
  bool test_bit(const Tracker& t, std::uint64_t s) const noexcept {
    return (t.bits[(s & mask_) >> 6] >> (s & 63)) & 1u;
  }

  static constexpr std::uint32_t kLeadWindow = 4096;  // packets; a larger A/B skew is not timed
  Sequencer& seq_;
  std::uint64_t mask_;
  std::uint64_t lead_mask_;
  std::uint64_t window_;
  Tracker lines_[kLiveLines + 1];
  std::vector<FirstSeen> first_seen_;
  std::uint64_t epoch_ = 0;  // the sequencer epoch the trackers follow
};

}  // namespace tickinfer::feed
