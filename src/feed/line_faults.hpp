#pragma once
// Per-line fault injection for the synthetic exchange, in the spirit of Aeron's loss-generating
// transport interceptor: every decision comes from the line's own seeded generator, so a seed
// reproduces exactly which packets each line lost, duplicated, reordered or delayed.
//
// For each packet offered to a line, in this order:
//   1. loss: inside a loss burst, or a burst starts (burst_start), or random loss (loss) -> dropped;
//   2. duplication (duplicate): the packet will be sent twice, back to back;
//   3. reorder (reorder): held back until 1..reorder_depth later packets of this line were sent;
//      otherwise delay (delay): held back for delay_ns of wall time;
//      otherwise sent now.
// The injector only decides and holds; the exchange sends what it releases.
#include <cstdint>
#include <random>
#include <vector>

namespace tickinfer::feed {

struct LineFaults {
  double loss = 0.0;          // per packet
  double burst_start = 0.0;   // per packet: a burst of lost packets begins
  std::uint32_t burst_mean = 8;  // mean burst length, packets (geometric)
  double reorder = 0.0;       // per packet
  std::uint32_t reorder_depth = 3;  // held for 1..depth later packets
  double duplicate = 0.0;     // per packet
  double delay = 0.0;         // per packet
  std::int64_t delay_ns = 200'000;
  // Throws tickinfer::Error naming the field if a probability is outside [0, 1] or a size is 0.
  void validate(const char* line) const;
};

class LineInjector {
 public:
  LineInjector(const LineFaults& faults, std::uint64_t seed);

  struct Release {
    std::size_t packet;   // index into the exchange's packet store
    std::uint8_t copies;  // 1, or 2 when duplicated
  };
  // Offers packet `index`; appends what must be sent now, in order, to out.
  void offer(std::size_t index, std::int64_t now_ns, std::vector<Release>& out);
  // Releases delayed packets whose time has come.
  void poll(std::int64_t now_ns, std::vector<Release>& out);
  // Releases everything still held (end of stream), oldest first.
  void flush(std::vector<Release>& out);
  bool holding() const noexcept { return !held_.empty(); }

 private:
  struct Held {
    Release r;
    std::uint32_t after_sends;  // > 0: released after that many later sends
    std::int64_t at_ns;         // otherwise: released at this time
  };
  void sent_one(std::vector<Release>& out);

  LineFaults f_;
  std::mt19937_64 rng_;
  std::uint32_t burst_left_ = 0;
  std::vector<Held> held_;
};

}  // namespace tickinfer::feed
