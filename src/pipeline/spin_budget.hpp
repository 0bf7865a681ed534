#pragma once
// Threads that busy-spin need a core each. A configuration whose spinning threads (the feed
// thread, the compute agents, and whatever else the caller runs beside them, such as a bench's
// exchange) outnumber the CPUs this process may use (affinity and cgroup quota:
// stats::usable_cpus) makes them take turns on a core: on the 2-core machine, `pipeline bench`
// in rings mode had measured send -> signal p50 3.6 ms, the receive stage waiting 3.5 ms for
// its turn. fit_spinning_to_cpus() says so, and unless [threading] oversubscribe is set, turns every
// "spin" idle strategy into "backoff" (spin, yield, then park: feed/idle_strategy.hpp).
#include <cstddef>
#include <string>

#include "pipeline/config.hpp"

namespace tickinfer::pipeline {

// The threads `cfg` starts that busy-spin when idle: inline, the one thread if [feed] idle is
// spin; rings, the feed thread (same) plus each compute agent if compute_idle is spin.
int spinning_threads(const PipelineConfig& cfg);

// Checks spinning_threads(cfg) + other_spinners against `usable` CPUs. Within budget: returns ""
// and changes nothing. Over it: returns a one-line warning naming the counts and what was done,
// and, unless cfg.oversubscribe, sets every "spin" idle of cfg to "backoff".
std::string fit_spinning_to_cpus(PipelineConfig& cfg, std::size_t usable, int other_spinners = 0);

}  // namespace tickinfer::pipeline
