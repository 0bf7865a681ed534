#pragma once
// What a run reports about itself: per model, per warm-up, and the run's totals. Filled by the
// Pipeline after run() (and by warmup()); read by the CLI, the run report and the bench.
#include "book/book_types.hpp"
#include <cstddef>
#include <cstdint>
#include <string>

namespace tickinfer::pipeline {

// [feed] protocol = "itch50": one configured symbol's book at the end of the run (its compute
// agent's books; read after run() returned).
struct BookSummary {
  std::string symbol;
  std::uint32_t instrument = 0;
  bool seen = false;            // its Stock Directory (R) arrived
  bool synced = true;
  std::uint64_t bid_levels = 0, ask_levels = 0, orders = 0;  // live
  book::Integrity integrity;
};

struct WarmupResult {
  std::string model;
  int iterations = 0;
  bool stable = false;
  std::int64_t p50_ns = 0;   // of the last block
  std::int64_t p99_ns = 0;
};

struct ModelRunStats {
  std::string name;
  std::uint32_t version = 0;
  std::uint64_t runs = 0;
  std::uint64_t row_calls = 0;  // Plan::run_rows calls that computed them (0: one Plan::run per tick)
  std::uint64_t long_signals = 0, short_signals = 0, flat_signals = 0;
  double score_min = 0, score_max = 0, score_sum = 0;
};

// One compute agent over the run ([threading] agents): its instruments, what it processed, the
// deepest its ring got at a cycle start, and its signals' kernel receive -> signal sent.
struct AgentRunStats {
  int index = 0, cpu = -1;
  std::size_t instruments = 0;
  std::uint64_t events = 0, signals = 0;
  std::size_t queue_depth_max = 0;
  std::int64_t rx_p50_ns = 0, rx_p99_ns = 0, rx_p999_ns = 0, rx_max_ns = 0;
};

// The signal writers' own counts. Every counter a writer keeps is here, so none goes unreported:
// the run report has them all, the CLI prints them, the metrics endpoint has the write errors.
struct WriterTotals {
  std::uint64_t udp_send_failures = 0;   // signals whose datagram send() refused (never retried)
  bool tx_stamps_on = false;             // kernel transmit stamps read back (rx_to_tx, end_to_end_tx)
  std::uint64_t tx_stamps_matched = 0;   // datagrams whose stamp was read and matched
  std::uint64_t tx_stamps_missing = 0;   // sent datagrams without one (error queue overflowed, or unread)
  std::uint64_t tx_stamps_stray = 0;     // stamps that matched no recorded datagram
  bool shm_on = false;
  std::uint64_t shm_published = 0;       // messages published into the shm ring (= signals)
  bool decision_log_on = false;
  std::uint64_t decision_log_records = 0;       // appended: the model declarations and one per signal
  std::uint64_t decision_log_bytes = 0;         // reached the file (its 8-byte header included)
  std::uint64_t decision_log_flushes = 0;
  std::uint64_t decision_log_write_errors = 0;  // write(2) calls that failed: their records are not in the file
  int decision_log_last_errno = 0;              // of the latest failed write (0: none)
  std::uint64_t decision_log_dropped = 0;       // records larger than the buffer, never written
  std::uint64_t decision_log_writer_waits = 0;  // the compute thread waited for the writer thread
};

struct RunTotals : WriterTotals {
  std::uint64_t events = 0;       // feed events processed by the compute side
  bool features_shm_on = false;   // [features] shm: the shared-memory feature store
  std::uint64_t features_published = 0;  // vectors published to it: one per accepted event
  bool features_ring_on = false;         // [features] ring: every vector, in order
  std::uint64_t features_ring_published = 0;  // records written to it (= accepted events)
  bool features_udp_on = false;           // [features] udp
  std::uint64_t features_udp_records = 0, features_udp_datagrams = 0;  // records numbered, datagrams sent
  std::uint64_t features_udp_send_failures = 0;  // datagrams the kernel refused (their records lost)
  // The feature plan (features/feature_plan.hpp): columns the one pipeline computes per tick,
  // how many of them the [features] spec has, how many the models declare in all (what separate
  // pipelines per model would compute), the distinct views; then, over the run, how often a
  // view's buffer was gathered and how often a model reused one another model of its group had
  // gathered for the same tick (a model reading the plan in place counts in neither).
  std::uint64_t feature_columns = 0, feature_pipeline_columns = 0, feature_requested_columns = 0, feature_views = 0;
  std::uint64_t feature_view_builds = 0, feature_view_reuses = 0;
  double feature_view_saved_ns = 0;  // the reuses at their view's gather time (timed in warm-up)
  // [shard]: the instruments this process computes, of the spec's universe, and the feed events
  // of the other shards' instruments it received and skipped.
  bool shard_on = false;
  std::uint64_t shard_instruments = 0, universe_instruments = 0, other_shard_events = 0;
  std::uint64_t signals = 0;
  std::uint64_t feed_loss_reports = 0;   // ranges the feed reported lost
  std::uint64_t feed_lost_messages = 0;
  std::uint64_t allocations_at_ready = 0;
  std::uint64_t allocations_at_end = 0;  // equal to the above: nothing allocated in steady state
  double seconds = 0;
  bool end_of_session = false;
  bool degraded = false;           // the feed went silent, or lost data
  std::string degraded_reason;
  bool wall_clock_exchange = false;  // exchange timestamps comparable with receive times
};

}  // namespace tickinfer::pipeline
