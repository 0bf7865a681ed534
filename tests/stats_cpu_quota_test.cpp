// The CPU count thread defaults come from: cgroup v2 cpu.max lines, a cgroup tree written here
// (a limit on the cgroup itself, on an ancestor, on both: the smallest wins; none), and the
// process's real count never above its affinity mask.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stats/cpu_quota.hpp"

namespace tickinfer::stats {
namespace {

TEST(CpuQuota, CpuMaxLines) {
  EXPECT_EQ(cpus_from_cpu_max("200000 100000"), 2u);
  EXPECT_EQ(cpus_from_cpu_max("150000 100000\n"), 2u);  // 1.5 CPUs: two threads can use them
  EXPECT_EQ(cpus_from_cpu_max("50000 100000"), 1u);
  EXPECT_EQ(cpus_from_cpu_max("max 100000"), 0u);        // no limit
  EXPECT_EQ(cpus_from_cpu_max(""), 0u);
  EXPECT_EQ(cpus_from_cpu_max("abc 100000"), 0u);
  EXPECT_EQ(cpus_from_cpu_max("100000 0"), 0u);
  EXPECT_EQ(cpus_from_cpu_max("-5 100000"), 0u);
}

TEST(CpuQuota, TheSmallestLimitOnThePathToTheRootWins) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tickinfer_cgroup_" + std::to_string(getpid()));
  fs::create_directories(root / "kubepods" / "pod1" / "ctr");
  auto write = [&](const fs::path& p, const std::string& text) { std::ofstream(root / p / "cpu.max") << text << "\n"; };
  const std::string self = "0::/kubepods/pod1/ctr\n";
  EXPECT_EQ(cgroup_cpu_limit(root.string(), self), 0u);  // no cpu.max anywhere
  write("kubepods/pod1/ctr", "max 100000");
  EXPECT_EQ(cgroup_cpu_limit(root.string(), self), 0u);
  write("kubepods/pod1", "400000 100000");                // the pod's limit: 4
  EXPECT_EQ(cgroup_cpu_limit(root.string(), self), 4u);
  write("kubepods/pod1/ctr", "250000 100000");            // the container's own: 2.5 -> 3
  EXPECT_EQ(cgroup_cpu_limit(root.string(), self), 3u);
  write("kubepods", "100000 100000");                     // an ancestor's: 1
  EXPECT_EQ(cgroup_cpu_limit(root.string(), self), 1u);
  EXPECT_EQ(cgroup_cpu_limit(root.string(), "12:cpu:/legacy\n"), 0u);  // cgroup v1 only: no v2 line
  EXPECT_EQ(cgroup_cpu_limit(root.string(), ""), 0u);
  fs::remove_all(root);
}

TEST(CpuQuota, NeverMoreThanTheAffinityMaskAllows) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const std::size_t n = usable_cpus();
  EXPECT_GE(n, 1u);
  EXPECT_LE(n, static_cast<std::size_t>(CPU_COUNT(&set)));
}

}  // namespace
}  // namespace tickinfer::stats
