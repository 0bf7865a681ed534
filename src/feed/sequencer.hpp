#pragma once
// Per-session MoldUDP64 sequencer: turns packets that arrive in any order, possibly twice, from
// any line, into messages delivered exactly once and in sequence order, and reports every gap.
//
// Sequence space: one per session. next_expected() (N) is the next sequence to deliver. Messages
// with N <= seq < N + window wait in a reorder window (a ring of `window` fixed-size slots,
// allocated once). A message with seq < N is a duplicate (it was delivered or given up on).
//
// Gaps. A hole exists while highest_seen() >= N (something later than N was seen, or a heartbeat
// announced it). A hole that stays open for gap_timeout_ns or for gap_packet_threshold received
// packets triggers (time is passed in: on_packet ages holes on the packets' receive times
// RxMeta::kernel_rx_ns, so a reader that fell behind does not age them by its own delay; poll()
// ages them on its now_ns):
//   * GapPolicy::Skip: the first hole [N, first buffered) is reported lost (on_lost, Skipped)
//     and delivery continues after it;
//   * GapPolicy::Recover: every missing range in [N, highest_seen] not yet asked for is reported
//     with on_gap_detected (the recovery client re-requests it). Messages keep waiting. A range
//     the recovery client gives up on is passed to abandon(): its still-missing messages are then
//     reported lost (Unrecoverable) and delivery continues.
// Messages that would overrun the window under Recover are dropped and counted, but remembered as
// existing (highest_seen), so the next trigger requests them with the hole in one range and
// recovery brings them back; under Skip the window slides past the oldest hole instead.
//
// Sequence numbers at or beyond N + far_future_limit are counted and dropped: they are corrupt or
// hostile, and honouring them would declare millions of messages missing.
//
// Sessions (docs/feed.md, "Sessions"). A session is locked (adopted) only once confirmed: pinned,
// or a data packet covering N (first_seq; not in join mode), or confirm_packets data packets with
// increasing sequence numbers. Until then it is a candidate: its messages are held in the window,
// never delivered, no gap fires; a challenger session that confirms first replaces it (the held
// messages are dropped and counted). Once locked, every packet of another session is counted
// (wrong_session_packets) and dropped, except after the locked session's End of Session, when a
// packet of a new session at first_seq starts the next one: the old session's buffered messages
// are delivered, its holes reported lost (SessionChanged), and N restarts at first_seq. Packets of
// the session just left are counted stale; a session change is never a gap.
//
// Threading: single-threaded; no method allocates, locks or makes a syscall after construction.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "feed/moldudp64.hpp"

namespace tickinfer::feed {

enum class GapPolicy : std::uint8_t { Skip, Recover };

// Where a packet came from and when the kernel received it.
struct RxMeta {
  std::int64_t kernel_rx_ns = 0;  // SO_TIMESTAMPNS (CLOCK_REALTIME ns), or the read time if absent
  std::uint8_t line = 0;          // 0 = A, 1 = B, 2 = recovery
};

class SequencerSink {
 public:
  virtual ~SequencerSink() = default;
  // One message, in sequence order, exactly once. msg points into the packet or a window slot and
  // is valid only during the call. sequenced_ns is the now_ns of the call that released it.
  virtual void on_message(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
                          const RxMeta& meta, std::int64_t sequenced_ns) noexcept = 0;
  // Recover policy: [first, first + count) is missing and should be re-requested.
  virtual void on_gap_detected(std::uint64_t first, std::uint64_t count, std::int64_t now_ns) noexcept {}
  // [first, first + count) will never be delivered.
  virtual void on_lost(std::uint64_t first, std::uint64_t count, LossReason reason) noexcept {}
  virtual void on_session_start(const Session& session) noexcept {}
  virtual void on_end_of_session(const Session& session, std::uint64_t next_seq) noexcept {}
};

// What on_packet did with the last packet, for per-line accounting (Arbiter).
enum class PacketVerdict : std::uint8_t {
  Current,       // of the current session (locked or candidate): sequenced
  OtherSession,  // names another session: dropped
  FarFuture,     // starts >= N + far_future_limit: dropped
};

struct SequencerConfig {
  std::uint32_t window = 4096;              // messages; power of two
  std::uint16_t max_message_bytes = 64;     // slot size; longer blocks fail parse_packet upstream
  std::int64_t gap_timeout_ns = 1'000'000;  // a hole open this long triggers (<= 0: never by time)
  std::uint32_t gap_packet_threshold = 64;  // ... or after this many packets (0: never by count)
  GapPolicy policy = GapPolicy::Recover;
  std::uint64_t far_future_limit = std::uint64_t{1} << 22;  // messages ahead of N
  std::uint64_t first_seq = 1;              // N at session start
  bool join_at_first_seen = false;          // late joiner: N = first sequence seen in the session
  bool pin_session = false;                 // accept only `session`
  std::uint32_t confirm_packets = 3;        // increasing data packets that confirm a candidate
  Session session;
};

class Sequencer {
 public:
  // Throws tickinfer::Error if window is not a power of two in [2, 2^24] or a limit is zero.
  Sequencer(const SequencerConfig& config, SequencerSink& sink);

  // Feeds one validated packet. Returns the number of messages delivered.
  std::size_t on_packet(const PacketView& packet, const RxMeta& meta, std::int64_t now_ns) noexcept;
  // Time-based gap triggers and abandoned ranges. Returns messages delivered (or skipped) by it.
  // Pass a now_ns taken before the sockets were last drained, so that nothing which arrived
  // before now_ns is still unread when a hole is judged old.
  std::size_t poll(std::int64_t now_ns) noexcept;
  // Recovery of [first, end) failed: report what is still missing there as lost and move on.
  void abandon(std::uint64_t first, std::uint64_t end, std::int64_t now_ns) noexcept;
  // Ends the stream: every remaining hole up to highest_seen() is reported lost (reason) and
  // everything buffered is delivered.
  void flush(std::int64_t now_ns, LossReason reason) noexcept;

  std::uint64_t next_expected() const noexcept { return next_; }
  // Highest sequence known to exist (seen, or announced by a heartbeat); next_expected() - 1 if none.
  std::uint64_t highest_seen() const noexcept { return highest_; }
  bool has_session() const noexcept { return has_session_; }
  // The session is confirmed (delivering); false while it is only a candidate.
  bool locked() const noexcept { return locked_; }
  PacketVerdict last_verdict() const noexcept { return verdict_; }
  // Incremented by every new sequence space (candidate or session). Epochs below
  // first_locked_epoch() (or all, while it is 0) were candidates that were dropped.
  std::uint64_t epoch() const noexcept { return epoch_; }
  std::uint64_t first_locked_epoch() const noexcept { return first_locked_epoch_; }
  std::uint64_t session_start() const noexcept { return session_start_; }  // N at its start
  // The End of Session next sequence of the session left by the last change (0: none).
  std::uint64_t previous_end() const noexcept { return previous_end_; }
  const Session& session() const noexcept { return session_; }
  // True if seq is neither delivered/given up (seq < N) nor waiting in the window.
  bool is_missing(std::uint64_t seq) const noexcept;
  std::size_t buffered() const noexcept { return buffered_; }
  const SequencerStats& stats() const noexcept { return stats_; }
  const SequencerConfig& config() const noexcept { return cfg_; }

 private:
  struct Slot {
    std::uint64_t seq;  // UINT64_MAX when empty
    RxMeta meta;
    std::uint16_t len;
    std::uint8_t* data;  // max_message_bytes inside storage_
  };
  struct Range {
    std::uint64_t first, end;
  };
  static constexpr std::size_t kMaxAbandoned = 64;

  void start_session(const Session& s, std::uint64_t first_seen, bool locked, std::int64_t now_ns) noexcept;
  void lock() noexcept;
  bool may_replace(const PacketView& p) noexcept;
  bool confirms(const PacketView& p) noexcept;
  void hold(const PacketView& p, const RxMeta& meta) noexcept;
  bool admit(const PacketView& p, const RxMeta& meta, std::int64_t now_ns, std::size_t& n) noexcept;
  void deliver(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta,
               std::int64_t now_ns) noexcept;
  std::size_t drain(std::int64_t now_ns) noexcept;
  std::size_t skip_to(std::uint64_t target, LossReason reason, std::int64_t now_ns) noexcept;
  std::size_t trigger(std::int64_t now_ns) noexcept;
  std::size_t resolve_abandoned(std::int64_t now_ns) noexcept;
  void note_highest(std::uint64_t seq) noexcept;
  void buffer(std::uint64_t s, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta) noexcept;

  SequencerConfig cfg_;
  SequencerSink& sink_;
  std::uint64_t mask_;
  std::vector<Slot> slots_;
  std::vector<std::uint8_t> storage_;

  bool has_session_ = false;
  bool has_previous_ = false;
  bool locked_ = false;
  bool ended_ = false;               // the locked session's End of Session was seen
  std::uint64_t ended_next_ = 0;
  std::uint64_t previous_end_ = 0;
  PacketVerdict verdict_ = PacketVerdict::Current;
  std::uint64_t epoch_ = 0;
  std::uint64_t first_locked_epoch_ = 0;
  std::uint64_t session_start_ = 1;
  std::uint32_t candidate_packets_ = 0;  // increasing data packets of the candidate
  std::uint64_t candidate_last_ = 0;
  Session challenger_;
  std::uint32_t challenger_packets_ = 0;
  std::uint64_t challenger_last_ = 0;
  Session session_;
  Session previous_;
  std::uint64_t next_ = 1;
  std::uint64_t highest_ = 0;       // invariant: highest_ >= next_ - 1
  std::uint64_t requested_end_ = 0; // Recover: [.., requested_end_) already reported
  std::size_t buffered_ = 0;        // slots holding a message (all in [next_, next_ + window))
  bool gap_open_ = false;
  std::uint64_t gap_at_ = 0;        // the N at which the current hole's clock started
  std::int64_t gap_since_ns_ = 0;
  std::uint32_t gap_packets_ = 0;
  Range abandoned_[kMaxAbandoned];
  std::size_t abandoned_count_ = 0;
  SequencerStats stats_;
};

}  // namespace tickinfer::feed
