#include "stats/cpu_quota.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace tickinfer::stats {

std::size_t cpus_from_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || period <= 0) return 0;
  if (quota == "max") return 0;
  char* end = nullptr;
  const long long q = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end != '\0' || q <= 0) return 0;
  return static_cast<std::size_t>((q + period - 1) / period);
}

std::size_t cgroup_cpu_limit(const std::string& cgroup_root, const std::string& proc_self_cgroup) {
  std::istringstream lines(proc_self_cgroup);
  std::string path;
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("0::", 0) == 0) path = l.substr(3);
  if (path.empty() || path[0] != '/') return 0;
  std::size_t limit = 0;
  for (;;) {
    std::ifstream f(cgroup_root + (path == "/" ? "" : path) + "/cpu.max");
    std::string text;
    if (f && std::getline(f, text)) {
      const std::size_t n = cpus_from_cpu_max(text);
      if (n > 0) limit = limit == 0 ? n : std::min(limit, n);
    }
    if (path == "/") break;
    const auto slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return limit;
}

std::size_t usable_cpus() {
  std::size_t n = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = std::max(1, CPU_COUNT(&set));
  std::ifstream self("/proc/self/cgroup");
  std::stringstream text;
  text << self.rdbuf();
  const std::size_t limit = cgroup_cpu_limit("/sys/fs/cgroup", text.str());
  if (limit > 0) n = std::min(n, limit);
  return std::max<std::size_t>(1, n);
}

}  // namespace tickinfer::stats
