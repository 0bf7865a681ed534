#include "feed/line_faults.hpp"

#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

void LineFaults::validate(const char* line) const {
  auto prob = [&](double p, const char* name) {
    if (!(p >= 0.0 && p <= 1.0)) {
      throw Error(std::string("line ") + line + ": " + name + " = " + std::to_string(p) +
                  " is not a probability in [0, 1]");
    }
  };
  prob(loss, "loss");
  prob(burst_start, "burst start");
  prob(reorder, "reorder");
  prob(duplicate, "duplicate");
  prob(delay, "delay");
  if (burst_mean == 0) throw Error(std::string("line ") + line + ": burst mean must be >= 1");
  if (reorder_depth == 0) throw Error(std::string("line ") + line + ": reorder depth must be >= 1");
  if (delay_ns < 0) throw Error(std::string("line ") + line + ": delay must be >= 0");
}

LineInjector::LineInjector(const LineFaults& faults, std::uint64_t seed) : f_(faults), rng_(seed) {}

void LineInjector::sent_one(std::vector<Release>& out) {
  // One more packet went out on this line: count down the packets held for reordering.
  for (std::size_t i = 0; i < held_.size();) {
    Held& h = held_[i];
    if (h.after_sends > 0 && --h.after_sends == 0) {
      out.push_back(h.r);
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    ++i;
  }
}

void LineInjector::offer(std::size_t index, std::int64_t now_ns, std::vector<Release>& out) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  // Draw every decision for every packet, so changing one probability does not shift the others.
  const double d_burst = u(rng_), d_loss = u(rng_), d_dup = u(rng_), d_reorder = u(rng_), d_delay = u(rng_);
  const std::uint64_t d_depth = rng_(), d_len = rng_();
  if (burst_left_ > 0) {
    --burst_left_;
    return;
  }
  if (d_burst < f_.burst_start) {
    std::geometric_distribution<std::uint32_t> len(1.0 / f_.burst_mean);
    std::mt19937_64 g(d_len);
    burst_left_ = len(g);  // this packet plus burst_left_ more
    return;
  }
  if (d_loss < f_.loss) return;
  const Release r{index, static_cast<std::uint8_t>(d_dup < f_.duplicate ? 2 : 1)};
  if (d_reorder < f_.reorder) {
    held_.push_back(Held{r, static_cast<std::uint32_t>(1 + d_depth % f_.reorder_depth), 0});
    return;
  }
  if (d_delay < f_.delay) {
    held_.push_back(Held{r, 0, now_ns + f_.delay_ns});
    return;
  }
  out.push_back(r);
  sent_one(out);
}

void LineInjector::poll(std::int64_t now_ns, std::vector<Release>& out) {
  for (std::size_t i = 0; i < held_.size();) {
    if (held_[i].after_sends == 0 && held_[i].at_ns <= now_ns) {
      out.push_back(held_[i].r);
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    ++i;
  }
}

void LineInjector::flush(std::vector<Release>& out) {
  for (const Held& h : held_) out.push_back(h.r);
  held_.clear();
}

}  // namespace tickinfer::feed
