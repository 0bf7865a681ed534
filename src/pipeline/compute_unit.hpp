#pragma once
// One compute agent's own state ([threading] agents): the features of its instruments, its
// routers' model plans, its statistics, its signal publisher and tick processor, and the SPSC
// ring the feed thread fills with its instruments' events. Nothing here is shared with another
// agent on the hot path but what SharedSignals holds (the signal sequence, the shm ring, both
// lock-free) and the shm feature store's slots (each instrument's written by its agent alone).
//
// AgentDispatch is the feed thread's side: instrument -> agent ring, a binary search over the
// sorted ids (no allocation); an event of an instrument no agent computes goes to agent 0, which
// counts it (unknown, or another [shard]'s). A full ring makes the feed thread wait for it and
// count the spins: nothing is dropped.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "features/feature_pipeline.hpp"
#include "features/feature_plan.hpp"
#include "pipeline/config.hpp"
#include "pipeline/model_router.hpp"
#include "pipeline/signal_publisher.hpp"
#include "pipeline/stage_stats.hpp"
#include "pipeline/tick_processor.hpp"
#include "tickinfer/feed.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer::pipeline {

// The instruments of `plan` (this process's shard) by agent: [k] = agent k's, in the spec's order.
// Throws tickinfer::Error when agent_instruments names an instrument outside the shard's spec
// or an agent is left with none.
std::vector<std::vector<std::uint32_t>> assign_agents(const PipelineConfig& cfg, const features::FeaturePlan& plan);

struct ComputeUnit {
  // run_plan: the run's feature plan; `instruments`: this agent's part of it. prototype: the
  // router whose plans this one clones (nullptr: load the models; the first agent).
  ComputeUnit(const PipelineConfig& cfg, const features::FeaturePlan& run_plan, std::vector<std::uint32_t> instruments,
              int index, const ModelRouter* prototype);
  // Outputs (not with --check): join_log: a previous unit created the decision log.
  void open_outputs(const PipelineConfig& cfg, SharedSignals& shared, bool join_log, std::size_t max_intervals,
                    const std::atomic<std::uint64_t>& feed_lost);

  int index = 0;
  int cpu = -1;  // where its thread is pinned (-1: not)
  features::FeaturePlan plan;  // the run's plan, restricted to this agent's instruments
  std::unique_ptr<features::FeaturePipeline> features;
  std::unique_ptr<ModelRouter> router;
  StageStats stats;
  std::unique_ptr<SignalPublisher> publisher;
  std::unique_ptr<TickProcessor> compute;
  std::unique_ptr<SpscRing<feed::FeedEvent>> ring;  // from the feed thread (agents > 1, or rings mode)
};

class AgentDispatch {
 public:
  explicit AgentDispatch(const std::vector<std::unique_ptr<ComputeUnit>>& units);
  // Feed thread, hot path.
  void on_event(const feed::FeedEvent& e) noexcept {
    if (e.event.kind == md::Event::Kind::Exchange && e.event.exchange.size == 0) {  // a loss notice: every agent
      for (SpscRing<feed::FeedEvent>* r : rings_)
        while (!r->try_push(e)) full_spins_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    SpscRing<feed::FeedEvent>& r = *rings_[static_cast<std::size_t>(agent(e.event.instrument()))];
    while (!r.try_push(e)) full_spins_.fetch_add(1, std::memory_order_relaxed);
  }
  int agent(std::uint32_t instrument) const noexcept;
  std::uint64_t full_spins() const noexcept { return full_spins_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::uint32_t> ids_;  // sorted
  std::vector<int> agent_;          // of ids_[i]
  std::vector<SpscRing<feed::FeedEvent>*> rings_;
  std::atomic<std::uint64_t> full_spins_{0};
};

}  // namespace tickinfer::pipeline
