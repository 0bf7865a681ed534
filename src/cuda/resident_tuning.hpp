// The resident kernel's shape chosen by timing on this card: every form (registers, shared, and
// with ResidentOptions::time_tagged the tagged form last), weights-per-lane and cluster size the
// model fits is started, its replies to three probe requests (in stream mode the later two
// carrying the first's state on) held to the host's double-precision reference
// (lstm_stack.hpp), timed over a few hundred requests and stopped; the fastest (median host to
// host) is started for good. What the user pins in ResidentOptions (form, lanes, cluster,
// threads) narrows the search. A tagged kernel that does not answer is not tried again in the
// process (a lost kernel holds its multiprocessors until the process ends).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda/resident_lstm.hpp"

namespace tickinfer::cuda {

struct TunedCandidate {
  ResidentOptions options;  // pinned: form, cluster, lanes (registers) or threads (shared)
  double median_ns = 0;     // host to host, zero input (0 when refused)
  std::string refused;      // why it was not timed: a probe reply disagreed or never came ("" when timed)
};


struct TunedResident {
  std::unique_ptr<ResidentLstm> kernel;
  ResidentOptions chosen;                 // pinned: start(stack, chosen) rebuilds the same kernel
  std::vector<TunedCandidate> candidates;  // every shape that started, in the order tried
};

// Throws std::runtime_error when no candidate starts and answers (with the reason).
TunedResident start_tuned(const LstmStack& stack, const ResidentOptions& options, int requests_per_candidate = 300);

}  // namespace tickinfer::cuda
