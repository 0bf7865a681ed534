#pragma once
// Facts about the machine a benchmark ran on, and pinning the calling thread to one CPU.
#include <string>

namespace tickinfer::cli {

// "model name" from /proc/cpuinfo (x86) or a close equivalent; "unknown" if unavailable.
std::string cpu_model_name();
// True if /proc/cpuinfo lists both constant_tsc and nonstop_tsc (the TSC ticks at a fixed rate
// in every power state, so it can be used as a clock).
bool cpu_has_invariant_tsc();
// CPUs this process may run on (its affinity mask; the online count where there is none).
int usable_cpus();
// Pins the calling thread to `cpu`. Throws tickinfer::Error naming the CPU on failure.
void pin_current_thread(int cpu);

}  // namespace tickinfer::cli
