#pragma once
// The compute side of a run: what happens to one feed event, and the housekeeping of the compute
// thread's duty cycle. Both threading modes use it: inline from the feed's delivery callback,
// rings from the ring's consumer (agents.hpp).
//
//   on_event (hot path): stamp compute start -> FeaturePipeline::on_event -> features done ->
//     the wire / receive / queue / features stages -> ModelRouter::route (models, signals) ->
//     the instrument's new vector into the shared-memory feature store and ring, when set (after
//     the signals: a reader in another process never delays them);
//     an exchange message (a forwarding feed, ITCH) goes to the book stage first: applied to the
//     books (the book stage), then for each book tick it yields FeaturePipeline::on_book and the
//     same steps as above;
//   end_batch: the queued model rows, then the pending signals (one datagram), then the feature
//     vectors waiting for their UDP datagram;
//   housekeeping(now_ns): transmit stamps (idle rounds), the decision log's interval flush, the
//     feature store's heartbeat (at most once a millisecond of the agent's clock) and,
//     once a status interval has passed, its IntervalSample (published for the supervisor).
//
// Threading: one compute thread calls everything but intervals()/published() (any thread: a
// sample is written before `published` is released, never after). noexcept, no allocation.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "features/feature_pipeline.hpp"
#include "features/shm_feature_ring.hpp"
#include "features/shm_feature_store.hpp"
#include "pipeline/book_stage.hpp"
#include "pipeline/feature_udp_publisher.hpp"
#include "pipeline/model_router.hpp"
#include "pipeline/signal_publisher.hpp"
#include "pipeline/stage_stats.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::pipeline {

class TickProcessor {
 public:
  // max_intervals: the samples a run can publish (allocated here); feed_lost: the feed's running
  // count of lost messages (sampled into every interval).
  TickProcessor(features::FeaturePipeline& features, ModelRouter& router, SignalPublisher& out, StageStats& stats,
                std::int64_t status_interval_ns, std::size_t max_intervals,
                const std::atomic<std::uint64_t>& feed_lost);
  TickProcessor(const TickProcessor&) = delete;
  TickProcessor& operator=(const TickProcessor&) = delete;

  // Set-up: every accepted event's vector is published to `store` (spec slot order). The store
  // must outlive this object.
  // slots: this processor's instrument index -> the store's slot (a compute agent computes a
  // part of the store's instruments); empty: the same index.
  void publish_features(features::ShmFeatureWriter* store, std::vector<std::uint32_t> slots = {}) {
    store_ = store;
    store_slots_ = std::move(slots);
  }
  // Set-up: every accepted event's vector also goes, in order, into `ring` (outlives this).
  void stream_features(features::FeatureRingWriter* ring) noexcept { ring_ = ring; }
  // Set-up: ... and over UDP, sent at the end of each batch (outlives this).
  void send_features(FeatureUdpPublisher* udp) noexcept { udp_ = udp; }
  // Set-up: this process is one shard ([shard]); events of `others` (sorted: the spec's
  // instruments another shard computes) are counted as skipped.
  void set_other_shards(std::vector<std::uint32_t> others) { other_shards_ = std::move(others); }
  // The run starts (clock time): the first status interval ends one interval later.
  void start(std::int64_t run_start_ns) noexcept;
  // A duty cycle begins at now_ns (the agent's clock).
  void begin_cycle(std::int64_t now_ns) noexcept { out_.begin_cycle(now_ns); }
  void on_event(const feed::FeedEvent& fe) noexcept;
  // Set-up: the feed forwards exchange messages (itch::ItchForwarder); this processor keeps the
  // full-depth books of its instruments and feeds the features from them.
  void enable_books(const ItchBookTickConfig& config);
  const BookStage* books() const noexcept { return books_.get(); }
  // Exchange messages that arrived with no book stage to apply them (a configuration error).
  std::uint64_t unapplied_messages() const noexcept { return unapplied_messages_; }
  // Rings: the events waiting in this processor's ring at the start of a duty cycle.
  void note_queue_depth(std::size_t depth) noexcept {
    interval_queue_max_ = std::max(interval_queue_max_, depth);
    queue_max_ = std::max(queue_max_, depth);
  }
  std::size_t queue_depth_max() const noexcept { return queue_max_; }
  void end_batch() noexcept;
  // idle: the duty cycle found no work. Returns 1 when it closed a status interval.
  int housekeeping(std::int64_t now_ns, bool idle) noexcept;
  // After the last duty cycle: what is still batched goes out, every transmit stamp is read.
  void finish() noexcept;

  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t features_published() const noexcept { return features_published_; }
  // Events of instruments another shard owns (this process skipped them after the lookup).
  std::uint64_t other_shard_events() const noexcept { return other_shard_events_; }
  bool wall_clock() const noexcept { return wall_clock_; }  // an exchange on this host's clock was seen
  const std::vector<IntervalSample>& intervals() const noexcept { return intervals_; }
  std::size_t published() const noexcept { return published_.load(std::memory_order_acquire); }

 private:
  int close_interval(std::int64_t now_ns) noexcept;
  void on_book_tick(const features::BookTick& t) noexcept;
  void after_features(const feed::FeedEvent& fe, const features::FeatureUpdate& u, std::int64_t t1,
                      std::int64_t ex) noexcept;

  features::FeaturePipeline& features_;
  ModelRouter& router_;
  SignalPublisher& out_;
  StageStats& stats_;
  const std::atomic<std::uint64_t>& feed_lost_;
  const std::int64_t interval_ns_;
  features::ShmFeatureWriter* store_ = nullptr;
  std::vector<std::uint32_t> store_slots_;
  std::size_t interval_queue_max_ = 0, queue_max_ = 0;
  features::FeatureRingWriter* ring_ = nullptr;
  FeatureUdpPublisher* udp_ = nullptr;
  std::vector<std::uint32_t> other_shards_;
  std::uint64_t other_shard_events_ = 0;
  std::int64_t next_heartbeat_ns_ = 0;
  std::uint64_t events_ = 0, features_published_ = 0;
  bool wall_clock_ = false;
  std::int64_t run_start_ns_ = 0, next_interval_ns_ = 0;
  std::uint64_t events_before_ = 0, signals_before_ = 0;  // at the start of the current interval
  std::vector<IntervalSample> intervals_;                 // allocated once: max_intervals
  std::unique_ptr<BookStage> books_;                      // forwarding feeds only
  const feed::FeedEvent* current_ = nullptr;              // the event the book stage is applying
  std::int64_t book_start_ns_ = 0;
  bool book_ticked_ = false;
  std::uint64_t unapplied_messages_ = 0;
  std::atomic<std::size_t> published_{0};
};

}  // namespace tickinfer::pipeline
