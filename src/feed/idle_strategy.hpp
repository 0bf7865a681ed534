#pragma once
// What a polling agent does when a duty cycle found no work (Aeron's idle strategies):
//   BusySpin  - a pause instruction and straight back: lowest latency, burns the core;
//   Yield     - sched_yield(): lets another thread on the core run;
//   BackOff   - spin, then yield, then sleep with exponentially growing parks up to max_park_ns;
//   Blocking  - ppoll() on the agent's sockets, at most max_park_ns, so timers still run.
// idle(work) with work > 0 resets the back-off. Not thread-safe: one per agent.
#include <poll.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::feed {

enum class IdleKind : std::uint8_t { BusySpin, Yield, BackOff, Blocking };
// "spin", "yield", "backoff", "block"; throws tickinfer::Error naming the bad value otherwise.
IdleKind parse_idle_kind(const std::string& name);
const char* to_string(IdleKind kind) noexcept;

class IdleStrategy {
 public:
  explicit IdleStrategy(IdleKind kind = IdleKind::BusySpin, std::int64_t max_park_ns = 1'000'000);
  void set_fds(const std::vector<int>& fds);  // the sockets Blocking waits on
  void idle(int work_count) noexcept;
  void reset() noexcept { state_ = 0; park_ns_ = kMinParkNs; }
  IdleKind kind() const noexcept { return kind_; }

 private:
  static constexpr int kSpins = 100;
  static constexpr int kYields = 10;
  static constexpr std::int64_t kMinParkNs = 1000;
  IdleKind kind_;
  std::int64_t max_park_ns_;
  int state_ = 0;
  std::int64_t park_ns_ = kMinParkNs;
  std::vector<pollfd> fds_;
};

}  // namespace tickinfer::feed
