// The resident LSTM-stack kernel and the descriptor it runs from. Device code only; the host side
// that packs weights and fills the descriptor is resident_lstm.cu.
#pragma once

#include <cooperative_groups.h>
#include <cstdint>

namespace tickinfer::cuda::detail {

constexpr int kMaxLstmLayers = 4;
constexpr int kMaxHeadLayers = 4;
constexpr uint32_t kCommandReset = 1u;
constexpr uint32_t kCommandStop = 2u;
// Said when a resident kernel never answers its first request: the likeliest reason once it launched.
constexpr const char* kNoReplyHint =
    "a resident kernel starts only when every block of its cluster has a multiprocessor, and the "
    "resident plans already running on this device may hold them";
// Per request, stamped by block 0's thread 0: request seen (ns), recurrence done (ns), reply
// written (ns), SM cycles from seen to done, and of those the cycles spent in the gate products
// (to the block barrier after them) and in the cell updates (to the cluster barrier after them),
// and the head's cycles up to its last reply store. The register form adds block 0 thread 0's
// cycles in the dot products, the gate activations (with their block barriers), the cell work
// with the pushes, and the cluster barriers.
constexpr int kTraceFields = 11;

// Offsets are in floats from the start of the block's dynamic shared memory.
struct LstmLayerDesc {
  int input, units;   // I, H
  int units_per_block;  // H / cluster
  int rows;           // 4 * units_per_block gate rows this block owns
  int row_stride;     // padded so the split lanes of one warp hit distinct banks
  int split;          // lanes per row (power of two, <= 32)
  int w, b, h, c;     // weights [rows][row_stride], bias [rows], h [2][H], c [2][units_per_block] (double-buffered)
  const float* packed_w;  // global: [cluster][rows][row_stride]
  const float* packed_b;  // global: [cluster][rows]
};

struct HeadLayerDesc {
  int input, output, activation, row_stride, split;
  int w, b, y;  // shared offsets (block 0 only): weights [output][row_stride], bias, result
  const float* packed_w;  // global: [output][row_stride]
  const float* packed_b;
};

struct ResidentDesc {
  int n_lstm, n_head, steps;
  int last_request;  // > 0: exit after this request (a profiler run); 0: loop until stopped
  int in, gates, command;  // shared offsets: request inputs [steps][I0], activated gates [max rows], command word
  LstmLayerDesc lstm[kMaxLstmLayers];
  HeadLayerDesc head[kMaxHeadLayers];
  const unsigned long long* request;  // mapped pinned host memory: 1 + steps * I0 units
  unsigned long long* reply;          // mapped pinned host memory: output units
  unsigned long long* trace;          // device memory: [trace_len][kTraceFields]
  int trace_len;
};

__global__ void resident_lstm_kernel(ResidentDesc d);

}  // namespace tickinfer::cuda::detail
