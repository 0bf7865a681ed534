#include "pipeline/compute_unit.hpp"

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

std::vector<std::vector<std::uint32_t>> assign_agents(const PipelineConfig& cfg, const features::FeaturePlan& plan) {
  const auto& mine = plan.spec.instruments;
  for (std::size_t k = 0; k < cfg.agent_instruments.size(); ++k)
    for (auto id : cfg.agent_instruments[k])
      if (std::find(mine.begin(), mine.end(), id) == mine.end())
        throw Error("[threading] agent_instruments: agent " + std::to_string(k) + " lists instrument " +
                    std::to_string(id) + ", which " +
                    (std::find(plan.universe.begin(), plan.universe.end(), id) == plan.universe.end()
                         ? std::string("is not in the feature spec")
                         : std::string("another [shard] computes")));
  std::vector<std::vector<std::uint32_t>> out(static_cast<std::size_t>(cfg.agents));
  for (auto id : mine) out[static_cast<std::size_t>(agent_of(cfg, id))].push_back(id);
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k].empty())
      throw Error("[threading] agent " + std::to_string(k) + " of " + std::to_string(cfg.agents) + " owns none of the " +
                  std::to_string(mine.size()) + " instruments (fewer agents, or list its instruments in agent_instruments)");
  return out;
}

ComputeUnit::ComputeUnit(const PipelineConfig& cfg, const features::FeaturePlan& run_plan,
                         std::vector<std::uint32_t> instruments, int k, const ModelRouter* prototype)
    : index(k), plan(run_plan) {
  plan.spec.instruments = std::move(instruments);
  if (cfg.agents == 1) cpu = cfg.compute_cpu;
  else if (static_cast<std::size_t>(k) < cfg.agent_cpus.size()) cpu = cfg.agent_cpus[static_cast<std::size_t>(k)];
  else cpu = k == 0 ? cfg.compute_cpu : -1;
  features = std::make_unique<features::FeaturePipeline>(plan.spec);
  router = std::make_unique<ModelRouter>(cfg, plan, *features, prototype);
  stats.track_models(cfg.models.size());
}

void ComputeUnit::open_outputs(const PipelineConfig& cfg, SharedSignals& shared, bool join_log,
                               std::size_t max_intervals, const std::atomic<std::uint64_t>& feed_lost) {
  publisher = std::make_unique<SignalPublisher>(cfg, router->logged_models(), router->widest_input(), stats, shared,
                                                join_log);
  if (publisher->batching()) router->enable_row_batches();
  compute = std::make_unique<TickProcessor>(*features, *router, *publisher, stats, cfg.status_interval_ns,
                                            max_intervals, feed_lost);
  if (cfg.threading == ThreadingMode::Rings) ring = std::make_unique<SpscRing<feed::FeedEvent>>(cfg.ring_capacity);
}

AgentDispatch::AgentDispatch(const std::vector<std::unique_ptr<ComputeUnit>>& units) {
  std::vector<std::pair<std::uint32_t, int>> all;
  for (const auto& u : units) {
    rings_.push_back(u->ring.get());
    for (auto id : u->plan.spec.instruments) all.emplace_back(id, u->index);
  }
  std::sort(all.begin(), all.end());
  for (const auto& [id, k] : all) {
    ids_.push_back(id);
    agent_.push_back(k);
  }
}

int AgentDispatch::agent(std::uint32_t instrument) const noexcept {
  const auto it = std::lower_bound(ids_.begin(), ids_.end(), instrument);
  if (it == ids_.end() || *it != instrument) return 0;
  return agent_[static_cast<std::size_t>(it - ids_.begin())];
}

}  // namespace tickinfer::pipeline
