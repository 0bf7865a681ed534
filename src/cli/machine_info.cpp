#include "cli/machine_info.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "tickinfer/error.hpp"

namespace tickinfer::cli {

namespace {
// The value of the first "key<spaces>: value" line in /proc/cpuinfo, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    // The key must be followed only by blanks before the colon ("model" vs "model name").
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}
}  // namespace

std::string cpu_model_name() {
  for (const char* key : {"model name", "Model", "cpu model", "Hardware"}) {
    std::string v = cpuinfo_field(key);
    if (!v.empty()) return v;
  }
  return "unknown";
}

bool cpu_has_invariant_tsc() {
  std::string flags(1, ' ');  // padded so every flag is found as " name "
  flags += cpuinfo_field("flags");
  flags += ' ';
  return flags.find(" constant_tsc ") != std::string::npos &&
         flags.find(" nonstop_tsc ") != std::string::npos;
}

int usable_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

void pin_current_thread(int cpu) {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE) throw Error("--pin " + std::to_string(cpu) + ": no such CPU");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw Error("--pin " + std::to_string(cpu) + ": cannot pin to that CPU: " + std::strerror(errno));
  }
#else
  throw Error("--pin is only supported on Linux");
#endif
}

}  // namespace tickinfer::cli
