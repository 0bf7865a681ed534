#pragma once
// Per-stage latency of every tick through the pipeline, in HdrHistogram-style histograms
// (src/stats/), and the per-interval samples behind "p99 over time". All values are ns of
// CLOCK_REALTIME differences (the kernel's SO_TIMESTAMPNS uses the same clock).
//
//   stage        from                              to                                 kind
//   wire         exchange timestamp                kernel receive                     network
//   receive      kernel receive                    sequenced (released in order)      network/queue
//   queue        sequenced                         compute thread starts the tick     queue
//   features     compute start                     feature vector updated             compute
//   model        features done (or last signal)    model output                       compute
//   signal       model output                      signal sent (sendto + shm returned) compute/IO
//   rx_to_signal kernel receive                    signal sent                        end to end in process
//   end_to_end   exchange timestamp                signal sent                        end to end
//   rx_to_tx     kernel receive                    kernel transmit of the signal      end to end in process
//   end_to_end_tx exchange timestamp               kernel transmit of the signal      end to end
// The _tx pair ends where the signal's datagram was handed to the network device (tx_stamps.hpp):
// UDP signals with [signals] tx_timestamps on; recorded when the pipeline reads the stamps back.
// wire and end_to_end are recorded only when the exchange timestamp is on this host's wall clock
// (within 10 s of the receive time); a synthetic exchange clock makes them meaningless.
#include <cstdint>
#include <vector>

#include "stats/latency_histogram.hpp"
#include "tickinfer/feed_stats.hpp"

namespace tickinfer::pipeline {

// Whether a kernel receive stamp and an exchange timestamp are on one clock (the synthetic
// exchange on this host stamps wall time; a replayed or foreign feed does not): only then is
// their difference a latency.
inline bool same_clock(std::int64_t rx_ns, std::int64_t exchange_ns) noexcept {
  const std::int64_t d = rx_ns - exchange_ns;
  return (d < 0 ? -d : d) < 10'000'000'000;
}

enum Stage : int {
  kWire, kReceive, kQueue, kBook, kFeatures, kModel, kSignal, kRxToSignal, kEndToEnd, kRxToTx, kEndToEndTx, kStageCount
};
const char* stage_name(int stage) noexcept;
bool stage_is_compute(int stage) noexcept;

struct IntervalSample {
  double t_s = 0;               // seconds since the run started (end of the interval)
  std::uint64_t ticks = 0;      // in this interval
  std::uint64_t signals = 0;
  std::int64_t rx_p50_ns = 0, rx_p99_ns = 0, rx_max_ns = 0;   // rx_to_signal
  std::int64_t e2e_p50_ns = 0, e2e_p99_ns = 0, e2e_max_ns = 0;  // end_to_end (0 when not recorded)
  std::int64_t e2e_tx_p99_ns = 0;  // end_to_end_tx, of the stamps read back in the interval (0: none)
  std::uint64_t allocations = 0;  // process allocation count at the end of the interval
  std::uint64_t feed_lost = 0;    // messages the feed reported lost so far
  std::uint64_t log_write_errors = 0;  // decision log writes that failed so far
  // What the feed rejected so far (published by the feed agent every End of Session check, ~10 ms):
  std::uint64_t feed_malformed[feed::kParseStatusCount] = {};  // datagrams, by feed::ParseStatus
  std::uint64_t feed_other_session = 0;  // packets of another session than the one adopted
  std::uint64_t feed_far_future = 0;     // packets whose sequence is too far ahead to be real
  // The features' consumers, so far (the compute thread's counts at the end of the interval):
  std::uint64_t features_published = 0;   // vectors into the shm feature store
  std::uint64_t feature_ring_records = 0; // records into the feature ring
  std::uint64_t feature_udp_records = 0;  // records numbered for UDP datagrams
  std::uint64_t feature_view_builds = 0, feature_view_reuses = 0;  // ModelRouter::view_counts()
  std::uint64_t other_shard_events = 0;   // [shard]: events of other shards' instruments skipped
  std::size_t queue_depth_max = 0;        // rings: most events waiting in the compute ring at a cycle start
};

struct StageStats {
  StageStats();
  stats::LatencyHistogram stage[kStageCount];
  stats::LatencyHistogram interval_rx, interval_e2e, interval_e2e_tx;
  // Per model (the decision log's index): rx_to_signal and end_to_end of its signals alone, so
  // a fast model's tail is seen apart from a slow one's. Sized by track_models (set-up).
  std::vector<stats::LatencyHistogram> model_rx, model_e2e;
  void track_models(std::size_t n);
  void reset() noexcept;
  // Adds every histogram of `o` (the agents' statistics into the run's).
  void merge(const StageStats& o);
};

}  // namespace tickinfer::pipeline
