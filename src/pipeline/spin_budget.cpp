#include "pipeline/spin_budget.hpp"

namespace tickinfer::pipeline {

int spinning_threads(const PipelineConfig& cfg) {
  const int feed = cfg.feed_idle == "spin" ? 1 : 0;
  if (cfg.threading == ThreadingMode::Inline) return feed;
  return feed + (cfg.compute_idle == "spin" ? cfg.agents : 0);
}

std::string fit_spinning_to_cpus(PipelineConfig& cfg, std::size_t usable, int other_spinners) {
  const int mine = spinning_threads(cfg);
  const int total = mine + other_spinners;
  if (mine == 0 || static_cast<std::size_t>(total) <= usable) return "";
  std::string what = std::to_string(total) + " busy-spinning threads (" + std::to_string(mine) + " of this pipeline";
  if (other_spinners > 0) what += ", " + std::to_string(other_spinners) + " beside it";
  what += ") but " + std::to_string(usable) + " usable CPU" + (usable == 1 ? "" : "s") +
          " (affinity and cgroup quota): spinning threads would take turns on a core";
  if (cfg.oversubscribe) return what + "; spinning anyway ([threading] oversubscribe = true)";
  if (cfg.feed_idle == "spin") cfg.feed_idle = "backoff";
  if (cfg.compute_idle == "spin") cfg.compute_idle = "backoff";
  return what + "; idle strategy spin -> backoff (set [threading] oversubscribe = true to keep spinning)";
}

}  // namespace tickinfer::pipeline
