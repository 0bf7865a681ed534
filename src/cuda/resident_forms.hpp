// The two forms of the resident LSTM kernel as the host sees them: each plans its shared memory,
// packs the weights for its layout and launches, or says why it cannot. resident_lstm.cu tries
// them in order; both leave the request/reply protocol and the trace to it.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "cuda/lstm_stack.hpp"
#include "cuda/resident_lstm.hpp"

namespace tickinfer::cuda::detail {

struct FormContext {
  std::function<const float*(const std::vector<float>&)> upload;  // device copy, freed with the plan
  const unsigned long long* request = nullptr;  // device views of the mapped pinned buffers
  unsigned long long* reply = nullptr;
  unsigned long long* trace = nullptr;
  int trace_len = 0;
  cudaStream_t stream = nullptr;
  size_t shared_limit = 0;   // bytes of dynamic shared memory one block may opt in to
  size_t shared_per_sm = 0;  // bytes of shared memory one multiprocessor has
  int last_request = 0;      // see ResidentOptions::single_request
};

// The dynamic shared memory to launch with: at least what the plan needs, and more than half a
// multiprocessor's, so that no two blocks of the cluster share one (they would take turns at its
// issue slots and shared-memory port, and a step is as slow as its slowest block).
size_t one_block_per_sm_bytes(size_t needed, const FormContext& ctx);

struct FormChoice {
  std::string form;  // "registers" or "shared"
  int cluster = 0, threads = 0, lanes = 0;
  size_t shared_bytes = 0;
};

// Each returns an empty string once the kernel is launched, else why this form does not apply
// (no launch happened). Options' cluster/threads/lanes narrow the search; 0 = any.
std::string launch_register_form(const LstmStack& stack, const ResidentOptions& opt, const FormContext& ctx,
                                 FormChoice& chosen);
std::string launch_shared_form(const LstmStack& stack, const ResidentOptions& opt, const FormContext& ctx,
                               FormChoice& chosen);

// Gate rows of block `blk` (row q * hb + u is Keras column q*H + blk*hb + u of [kernel; recurrent])
// into [rows][stride], zero-padded; shared by both forms.
void pack_lstm_rows(const LstmLayerWeights& W, int cluster, int stride, std::vector<float>& w, std::vector<float>& b);
void pack_dense_rows(const DenseLayerWeights& W, int stride, std::vector<float>& w);

int round_up(int v, int m);
int pow2_at_least(int v);

}  // namespace tickinfer::cuda::detail
