#include "feed/capture_events.hpp"

#include "feed/arbiter.hpp"
#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "feed/sequencer.hpp"

namespace tickinfer::feed {
namespace {

class CaptureSink final : public SequencerSink {
 public:
  CaptureSink(CaptureSequenceStats& stats,
              const std::function<void(const md::Event&, std::uint64_t, std::int64_t)>& on_event)
      : stats_(stats), on_event_(on_event) {}

  void on_message(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta,
                  std::int64_t) noexcept override {
    md::Event ev;
    if (decode_message(msg, len, ev) != DecodeStatus::Ok) {
      ++stats_.undecodable;
      return;
    }
    ++stats_.delivered;
    on_event_(ev, seq, meta.kernel_rx_ns);
  }
  void on_lost(std::uint64_t, std::uint64_t count, LossReason) noexcept override {
    stats_.lost += count;
    ++stats_.lost_ranges;
  }

 private:
  CaptureSequenceStats& stats_;
  const std::function<void(const md::Event&, std::uint64_t, std::int64_t)>& on_event_;
};

}  // namespace

CaptureSequenceStats sequence_capture(
    const CaptureContents& capture,
    const std::function<void(const md::Event&, std::uint64_t, std::int64_t)>& on_event) {
  CaptureSequenceStats stats;
  stats.corrupt_records = capture.corrupt_records;
  stats.truncated_tail = capture.truncated_tail;
  CaptureSink sink(stats, on_event);
  SequencerConfig cfg;
  cfg.policy = GapPolicy::Skip;
  // Default slot size (64 bytes): a packet with a longer block is counted as bad, as live.
  cfg.gap_timeout_ns = 0;          // offline: a hole closes by packet count or at the end
  cfg.window = 1u << 16;
  cfg.gap_packet_threshold = 1u << 14;
  Sequencer seq(cfg, sink);
  Arbiter arb(seq, 1u << 16);
  std::int64_t last_ns = 0;
  for (const CaptureRecord& r : capture.records) {
    ++stats.records;
    PacketView p;
    if (parse_packet(r.payload.data(), r.payload.size(), p, cfg.max_message_bytes) != ParseStatus::Ok) {
      ++stats.bad_packets;
      arb.on_malformed(r.line <= kLineRecovery ? r.line : kLineA);
      continue;
    }
    const int line = r.line <= kLineRecovery ? r.line : kLineA;
    arb.on_packet(line, p, r.rx_ns, r.rx_ns);
    last_ns = r.rx_ns;
  }
  seq.flush(last_ns, LossReason::Skipped);
  stats.duplicates = seq.stats().duplicates;
  return stats;
}

}  // namespace tickinfer::feed
