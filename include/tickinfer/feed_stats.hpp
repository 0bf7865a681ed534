#pragma once
// The feed's counters and reasons, as the public FeedHandler API (tickinfer/feed.hpp) reports
// them. The feed's internals (src/feed/: parser, sequencer, arbiter, recovery client) fill these
// same structs, so what a user reads is exactly what the code counts.
#include <cstdint>

namespace tickinfer::feed {

// The lines, as FeedStats::lines, FeedEvent::line and FeedHandler::port index them.
inline constexpr int kLineA = 0;
inline constexpr int kLineB = 1;
inline constexpr int kLineRecovery = 2;
inline constexpr int kLiveLines = 2;

// Why a datagram was rejected. Every value except Ok means "count it and drop it".
enum class ParseStatus : std::uint8_t {
  Ok,
  TooShort,              // fewer than 20 bytes: no complete header
  TooLong,               // larger than the caller's limit (or than any UDP payload)
  BlockHeaderTruncated,  // a block's 2-byte length runs past the end of the datagram
  BlockTruncated,        // a block's payload runs past the end of the datagram
  MessageTooLong,        // a block is longer than the caller's max_message_bytes
  TrailingBytes,         // bytes left after `count` blocks
  SequenceOverflow,      // seq + count wraps past 2^64 - 1
  ControlWithData,       // a heartbeat or end-of-session packet that carries bytes after the header
};
const char* to_string(ParseStatus status) noexcept;
// A short snake_case name ("too_short", "trailing_bytes", ...): a report key, a metric label.
const char* key_of(ParseStatus status) noexcept;
inline constexpr int kParseStatusCount = 9;

enum class LossReason : std::uint8_t { Skipped, Unrecoverable, SessionChanged };
const char* to_string(LossReason reason) noexcept;

// One range of messages reported lost: [first, first + count).
struct LostRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  LossReason reason = LossReason::Skipped;
};
inline constexpr int kLostRangesKept = 16;  // FeedStats keeps the first ones; the rest are counted

// Per line (A, B, recovery): how good the line is on its own (src/feed/arbiter.hpp), counted
// only over packets of the current session (docs/feed.md, "Statistics"). A packet counts in
// exactly one of: packets/control_packets (the session's), malformed_packets,
// other_session_packets, far_future_packets; only the first kind moves the sequence counters.
struct LineStats {
  std::uint64_t packets = 0;          // data packets of the current session
  std::uint64_t messages = 0;         // message blocks in them
  std::uint64_t control_packets = 0;  // heartbeats and end of session of the current session
  std::uint64_t lost_messages = 0;
  std::uint64_t duplicate_packets = 0;
  std::uint64_t reordered_packets = 0;
  std::uint64_t too_late_packets = 0;
  std::uint64_t led = 0;              // packets whose copy on this line the kernel received first
  std::uint64_t lead_by_read_order = 0;     // of `led`: a stamp was missing, decided by read order
  std::uint64_t malformed_packets = 0;      // datagrams that failed parse_packet (any reason)
  std::uint64_t other_session_packets = 0;  // packets naming another session (dropped)
  std::uint64_t far_future_packets = 0;     // packets starting >= N + far_future_limit (dropped)
};

// The gap recovery client (src/feed/recovery_client.hpp).
struct RecoveryStats {
  std::uint64_t ranges = 0;             // ranges received from the sequencer
  std::uint64_t requests_sent = 0;      // request packets, retries included
  std::uint64_t retries = 0;
  std::uint64_t send_failures = 0;      // sendto refused (still retried on timeout)
  std::uint64_t completed = 0;          // requests fully answered
  std::uint64_t failed = 0;             // requests given up after max_attempts
  std::uint64_t messages_abandoned = 0; // size of the failed requests (missing part may be less)
  std::uint64_t cancelled = 0;          // dropped because the session changed
};

// The sequencer, over all lines (src/feed/sequencer.hpp).
struct SequencerStats {
  std::uint64_t packets = 0;              // data packets accepted for sequencing
  std::uint64_t heartbeats = 0;
  std::uint64_t end_of_session = 0;
  std::uint64_t delivered = 0;            // messages
  std::uint64_t in_order_direct = 0;      // delivered straight from the packet (no buffering)
  std::uint64_t duplicates = 0;           // messages with seq < N (recent) or already buffered
  std::uint64_t stale = 0;                // messages far behind N, or of the session just left
  std::uint64_t far_future = 0;           // messages dropped as >= N + far_future_limit
  std::uint64_t window_overruns = 0;      // messages dropped because the window was full (Recover)
  std::uint64_t wrong_session_packets = 0; // packets of another session than the locked one
  std::uint64_t sessions = 0;             // sessions locked (adopted)
  std::uint64_t candidates_dropped = 0;   // unconfirmed candidate sessions replaced by another
  std::uint64_t held_dropped = 0;         // messages held for a dropped candidate
  std::uint64_t gap_triggers_time = 0;
  std::uint64_t gap_triggers_count = 0;
  std::uint64_t gap_triggers_overrun = 0;  // Skip: the window slid past a hole
  std::uint64_t gap_ranges_requested = 0;
  std::uint64_t gap_messages_requested = 0;
  std::uint64_t lost = 0;                 // messages reported lost
  std::uint64_t lost_ranges = 0;
  std::uint64_t max_buffered = 0;
  // Joining and catching up (of the session seen last). joined_at: the sequence of the first
  // packet of the session, at first_packet_ns (the feed's clock); a late joiner (joined_at > 1)
  // re-requests 1 .. joined_at - 1 like any gap, so its books are rebuilt from the day's start.
  // in_sync_seq: the first message delivered when no message known to exist beyond it was
  // missing (0: not yet), at in_sync_ns; a start at 1 is in sync with its first message.
  std::uint64_t joined_at = 0;
  std::uint64_t in_sync_seq = 0;
  std::int64_t first_packet_ns = 0, in_sync_ns = 0;
};

}  // namespace tickinfer::feed
