#pragma once
// How many CPUs this process may really use, for thread-count defaults: the smaller of its
// affinity mask (sched_getaffinity: taskset, cpusets) and its cgroup v2 CPU quota (cpu.max of
// its cgroup and of every ancestor: a container's `--cpus`, a Kubernetes CPU limit), rounded
// up. std::thread::hardware_concurrency() counts the host's logical CPUs and ignores both, so a
// server in a 2-CPU container on a 64-core host would start 64 workers that fight for 2 CPUs.
#include <cstddef>
#include <string>

namespace tickinfer::stats {

// CPUs a cgroup v2 `cpu.max` line allows ("200000 100000" -> 2, "150000 100000" -> 2,
// "max 100000" -> 0 meaning no limit). 0 for text that is not a cpu.max line.
std::size_t cpus_from_cpu_max(const std::string& text);

// The quota of the cgroup named in /proc/self/cgroup's text (the "0::/path" line), walking from
// it up to the root of the v2 hierarchy mounted at `cgroup_root`: the smallest limit found, or 0
// when none limits it (or the files are not there: cgroup v1, no /sys/fs/cgroup).
std::size_t cgroup_cpu_limit(const std::string& cgroup_root, const std::string& proc_self_cgroup);

// min(affinity count, cgroup limit), at least 1.
std::size_t usable_cpus();

}  // namespace tickinfer::stats
