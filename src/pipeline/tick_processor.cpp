#include "pipeline/tick_processor.hpp"

#include <algorithm>
#include <cstdlib>

#include "pipeline/alloc_counter.hpp"
#include "stats/clock.hpp"

namespace tickinfer::pipeline {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

TickProcessor::TickProcessor(features::FeaturePipeline& features, ModelRouter& router, SignalPublisher& out,
                             StageStats& stats, std::int64_t status_interval_ns, std::size_t max_intervals,
                             const std::atomic<std::uint64_t>& feed_lost)
    : features_(features), router_(router), out_(out), stats_(stats), feed_lost_(feed_lost),
      interval_ns_(status_interval_ns), intervals_(max_intervals) {}

void TickProcessor::start(std::int64_t run_start_ns) noexcept {
  run_start_ns_ = run_start_ns;
  next_interval_ns_ = run_start_ns + interval_ns_;
  next_heartbeat_ns_ = run_start_ns;
  if (store_) store_->heartbeat(stats::realtime_ns());
}

void TickProcessor::enable_books(const ItchBookTickConfig& config) {
  books_ = std::make_unique<BookStage>(config, [this](const features::BookTick& t) { on_book_tick(t); });
}

void TickProcessor::on_event(const feed::FeedEvent& fe) noexcept {
  const std::int64_t t0 = stats::realtime_ns();
  ++events_;
  const std::int64_t ex = fe.event.exchange_ts_ns();
  const bool wall = same_clock(fe.ts.kernel_rx_ns, ex);
  wall_clock_ = wall_clock_ || wall;
  if (wall) stats_.stage[kWire].record(fe.ts.kernel_rx_ns - ex);
  stats_.stage[kReceive].record(fe.ts.sequenced_ns - fe.ts.kernel_rx_ns);
  stats_.stage[kQueue].record(t0 - fe.ts.sequenced_ns);
  if (fe.event.kind == md::Event::Kind::Exchange) {
    if (!books_) {  // a forwarding feed without the stage that applies it: configuration error
      ++unapplied_messages_;
      return;
    }
    current_ = &fe;
    book_start_ns_ = t0;
    book_ticked_ = false;
    books_->on_message(fe.seq, fe.event.exchange);  // on_book_tick for each book tick
    if (!book_ticked_) stats_.stage[kBook].record(stats::realtime_ns() - t0);
    return;
  }
  const features::FeatureUpdate& u = features_.on_event(fe.event, t0);
  const std::int64_t t1 = stats::realtime_ns();
  stats_.stage[kFeatures].record(t1 - t0);
  after_features(fe, u, t1, ex);
}

void TickProcessor::on_book_tick(const features::BookTick& t) noexcept {
  const std::int64_t tb = stats::realtime_ns();
  stats_.stage[kBook].record(tb - book_start_ns_);
  book_ticked_ = true;
  const features::FeatureUpdate& u = features_.on_book(t, tb);
  const std::int64_t t1 = stats::realtime_ns();
  stats_.stage[kFeatures].record(t1 - tb);
  after_features(*current_, u, t1, t.ts_ns);
}

void TickProcessor::after_features(const feed::FeedEvent& fe, const features::FeatureUpdate& u, std::int64_t t1,
                                   std::int64_t ex) noexcept {
  if (u.status == features::UpdateStatus::UnknownInstrument) {
    // O(log n), no allocation: only events this process does not compute get here.
    if (std::binary_search(other_shards_.begin(), other_shards_.end(), u.instrument)) ++other_shard_events_;
    return;
  }
  const int idx = features_.instrument_index(u.instrument);
  if (idx < 0) return;
  router_.route(fe, u, idx, t1, features_, out_, stats_);
  if (u.status != features::UpdateStatus::Applied || !u.has_values) return;
  const std::uint64_t flags = (u.all_warm ? features::kShmAllWarm : 0) | (u.window_ready ? features::kShmWindowReady : 0);
  if (store_) {
    features::ShmRowMeta meta;
    meta.ts_ns = ex;
    meta.bar = floor_div(ex, features_.spec().bar_ns);
    meta.flags = flags;
    meta.published_ns = t1;  // the vector is as of the features stage's end
    meta.tick_seq = fe.seq;
    store_->publish(store_slots_.empty() ? static_cast<std::size_t>(idx) : store_slots_[static_cast<std::size_t>(idx)],
                    u.values, meta);
    ++features_published_;
  }
  if (ring_ || udp_) {
    features::RingRecord r;
    r.instrument = u.instrument;
    r.tick_seq = fe.seq;
    r.ts_ns = ex;
    r.published_ns = t1;
    r.flags = flags;
    if (ring_) ring_->publish(r, u.values);
    if (udp_) udp_->add(r, u.values);
  }
}

void TickProcessor::end_batch() noexcept {
  router_.flush_rows(out_, stats_);
  out_.flush();
  if (udp_) udp_->flush();
}

int TickProcessor::housekeeping(std::int64_t now_ns, bool idle) noexcept {
  out_.read_tx_stamps(now_ns, idle, false);
  out_.maintain(now_ns);
  if (store_ && now_ns >= next_heartbeat_ns_) {
    store_->heartbeat(stats::realtime_ns());
    next_heartbeat_ns_ = now_ns + 1'000'000;
  }
  if (now_ns < next_interval_ns_) return 0;
  return close_interval(now_ns);
}

void TickProcessor::finish() noexcept {
  end_batch();
  out_.read_tx_stamps(0, true, true);
}

// A run that outlives its sample capacity keeps resetting the interval histograms, unpublished.
int TickProcessor::close_interval(std::int64_t now_ns) noexcept {
  const std::size_t k = published_.load(std::memory_order_relaxed);
  int work = 0;
  if (k < intervals_.size()) {
    IntervalSample& s = intervals_[k];
    s.t_s = static_cast<double>(now_ns - run_start_ns_) / 1e9;
    s.ticks = events_ - events_before_;
    s.signals = out_.signals() - signals_before_;
    s.rx_p50_ns = stats_.interval_rx.value_at_percentile(50);
    s.rx_p99_ns = stats_.interval_rx.value_at_percentile(99);
    s.rx_max_ns = stats_.interval_rx.max();
    s.e2e_p50_ns = stats_.interval_e2e.value_at_percentile(50);
    s.e2e_p99_ns = stats_.interval_e2e.value_at_percentile(99);
    s.e2e_max_ns = stats_.interval_e2e.max();
    s.e2e_tx_p99_ns = stats_.interval_e2e_tx.value_at_percentile(99);
    s.allocations = allocation_count();
    s.feed_lost = feed_lost_.load(std::memory_order_relaxed);
    s.log_write_errors = out_.log_write_errors();
    s.features_published = features_published_;
    s.feature_ring_records = ring_ ? ring_->published() : 0;
    s.feature_udp_records = udp_ ? udp_->records() : 0;
    const ViewCounts vc = router_.view_counts();
    s.feature_view_builds = vc.builds;
    s.feature_view_reuses = vc.reuses;
    s.other_shard_events = other_shard_events_;
    s.queue_depth_max = interval_queue_max_;
    published_.store(k + 1, std::memory_order_release);
    work = 1;
  }
  stats_.interval_rx.reset();
  stats_.interval_e2e.reset();
  stats_.interval_e2e_tx.reset();
  interval_queue_max_ = 0;
  events_before_ = events_;
  signals_before_ = out_.signals();
  next_interval_ns_ += interval_ns_;
  if (next_interval_ns_ <= now_ns) next_interval_ns_ = now_ns + interval_ns_;
  return work;
}

}  // namespace tickinfer::pipeline
