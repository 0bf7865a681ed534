#include "feed/idle_strategy.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

IdleKind parse_idle_kind(const std::string& name) {
  if (name == "spin") return IdleKind::BusySpin;
  if (name == "yield") return IdleKind::Yield;
  if (name == "backoff") return IdleKind::BackOff;
  if (name == "block") return IdleKind::Blocking;
  throw Error("idle strategy '" + name + "': expected spin, yield, backoff or block");
}

const char* to_string(IdleKind kind) noexcept {
  switch (kind) {
    case IdleKind::BusySpin: return "spin";
    case IdleKind::Yield: return "yield";
    case IdleKind::BackOff: return "backoff";
    case IdleKind::Blocking: return "block";
  }
  return "?";
}

IdleStrategy::IdleStrategy(IdleKind kind, std::int64_t max_park_ns)
    : kind_(kind), max_park_ns_(std::max<std::int64_t>(max_park_ns, kMinParkNs)) {}

void IdleStrategy::set_fds(const std::vector<int>& fds) {
  fds_.clear();
  for (int fd : fds) fds_.push_back(pollfd{fd, POLLIN, 0});
}

void IdleStrategy::idle(int work_count) noexcept {
  if (work_count > 0) {
    reset();
    return;
  }
  switch (kind_) {
    case IdleKind::BusySpin:
      cpu_relax();
      return;
    case IdleKind::Yield:
      sched_yield();
      return;
    case IdleKind::BackOff: {
      if (state_ < kSpins) {
        ++state_;
        cpu_relax();
      } else if (state_ < kSpins + kYields) {
        ++state_;
        sched_yield();
      } else {
        timespec ts{0, park_ns_};
        nanosleep(&ts, nullptr);
        park_ns_ = std::min(park_ns_ * 2, max_park_ns_);
      }
      return;
    }
    case IdleKind::Blocking: {
      timespec ts{max_park_ns_ / 1'000'000'000, max_park_ns_ % 1'000'000'000};
      ppoll(fds_.data(), fds_.size(), &ts, nullptr);
      return;
    }
  }
}

}  // namespace tickinfer::feed
