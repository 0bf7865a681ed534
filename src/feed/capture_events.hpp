#pragma once
// Offline sequencing of a capture file: the recorded datagrams of lines A, B and recovery go,
// in the order the kernel received them, through the same Arbiter and Sequencer the live feed
// uses (Skip policy: a capture cannot re-request), and every decoded message comes out exactly
// once, in sequence order. This is how research tools (`tickinfer features` over a .cap file)
// see the same ordered stream production saw.
#include <cstdint>
#include <functional>

#include "feed/capture_file.hpp"
#include "tickinfer/market_data.hpp"

namespace tickinfer::feed {

struct CaptureSequenceStats {
  std::uint64_t records = 0;          // capture records read
  std::uint64_t bad_packets = 0;      // records that are not a valid MoldUDP64 packet
  std::uint64_t delivered = 0;        // messages delivered in order
  std::uint64_t undecodable = 0;      // delivered blocks that are not a known message
  std::uint64_t duplicates = 0;       // messages dropped as already delivered (A/B copies)
  std::uint64_t lost = 0;             // sequence numbers no line delivered
  std::uint64_t lost_ranges = 0;
  std::uint64_t corrupt_records = 0;  // from the capture reader (CRC/length damage skipped)
  bool truncated_tail = false;
};

// Calls on_event for every decoded message in sequence order (seq is its MoldUDP64 sequence,
// rx_ns the kernel receive time of the packet that carried it). Never throws for damaged input:
// damage is counted in the result.
CaptureSequenceStats sequence_capture(
    const CaptureContents& capture,
    const std::function<void(const md::Event& event, std::uint64_t seq, std::int64_t rx_ns)>& on_event);

}  // namespace tickinfer::feed
