#include "cli/cpu_stall_probe.hpp"

#include <algorithm>
#include <thread>

#include "stats/clock.hpp"

namespace tickinfer::cli {

namespace {
CpuStalls probe_one(int cpu, double seconds, std::int64_t threshold_ns) {
  stats::pin_current_thread(cpu);
  std::vector<std::int64_t> gaps;
  gaps.reserve(1 << 16);
  const std::int64_t start = stats::monotonic_ns();
  const std::int64_t end = start + static_cast<std::int64_t>(seconds * 1e9);
  std::int64_t prev = start, sum = 0;
  std::uint64_t count = 0;
  for (;;) {
    const std::int64_t t = stats::monotonic_ns();
    const std::int64_t d = t - prev;
    prev = t;
    if (d > threshold_ns) {
      if (gaps.size() < gaps.capacity()) gaps.push_back(d);  // percentiles from the first 65,536
      sum += d;
      ++count;
    }
    if (t >= end) break;
  }
  CpuStalls s;
  s.cpu = cpu;
  s.seconds = static_cast<double>(prev - start) / 1e9;
  s.count = count;
  s.per_second = static_cast<double>(count) / s.seconds;
  s.fraction = static_cast<double>(sum) / static_cast<double>(prev - start);
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    s.p50_ns = gaps[gaps.size() / 2];
    s.p90_ns = gaps[gaps.size() * 9 / 10];
    s.max_ns = gaps.back();
  }
  return s;
}
}  // namespace

std::vector<CpuStalls> probe_cpu_stalls(const std::vector<int>& cpus, double seconds, std::int64_t threshold_ns) {
  std::vector<CpuStalls> out(cpus.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cpus.size(); ++i)
    threads.emplace_back([&, i] { out[i] = probe_one(cpus[i], seconds, threshold_ns); });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace tickinfer::cli
