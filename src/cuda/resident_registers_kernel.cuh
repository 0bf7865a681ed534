// The register-resident form of the resident LSTM kernel: every weight lives in a register of the
// thread that multiplies it, so a step's gate products read only the input vector from shared
// memory (16-byte loads). Its shapes are template parameters (layers, head layers, weights per
// lane), so every loop over a lane's weights is unrolled and indexed at compile time; the host
// picks an instantiation that holds the model or falls back to the shared-memory form.
#pragma once

#include <cooperative_groups.h>
#include <cstdint>

#include "cuda/resident_device_common.cuh"
#include "cuda/resident_lstm.hpp"

namespace tickinfer::cuda::detail {

constexpr int kRegMaxLstm = 4;
constexpr int kRegMaxHead = 2;

// Offsets are in floats from the start of the block's dynamic shared memory. A layer's input
// vector is [x (I) ; h (H)] padded to split * lanes, double-buffered by step parity.
struct RegLstmDesc {
  int input, units, units_per_block, rows, split, padded;
  int xh;  // [2][padded]
  int c;   // [2][units_per_block]
  const float* packed_w;  // global: [cluster][rows][padded]
  const float* packed_b;  // global: [cluster][rows]
};

struct RegHeadDesc {
  int input, output, activation, split, padded;
  int x;  // [padded]: this layer's input (the last LSTM's h, or the previous head layer's output)
  const float* packed_w;  // global: [output][padded]
  const float* packed_b;
};

struct RegDesc {
  int n_lstm, n_head, steps;
  // activations: where the gate activations run (0 each row's lead lane, 1 the first `rows`
  // threads after a block barrier, 2 the cell threads, four per unit). fast: __expf and tanh as
  // 2 sigmoid(2x) - 1.
  int activations, fast;
  int last_request;  // > 0: exit after this request (a profiler run); 0: loop until stopped
  int in, gates, command;  // [steps][I0] when steps > 1, activated gates [rows], command word
  RegLstmDesc lstm[kRegMaxLstm];
  RegHeadDesc head[kRegMaxHead];
  const unsigned long long* request;
  unsigned long long* reply;
  unsigned long long* trace;  // [trace_len][kTraceFields]
  int trace_len;
};

// Every weight and bias this thread multiplies, into registers (both register-resident forms).
template <int kLayers, int kHead, int kLanes>
__device__ __forceinline__ void load_weights(const RegDesc& d, int rank, float (&w)[kLayers][kLanes],
                                             float (&bias)[kLayers], float (&hw)[kHead][kLanes], float (&hbias)[kHead]) {
#pragma unroll
  for (int l = 0; l < kLayers; ++l) {
    const RegLstmDesc& L = d.lstm[l];
    load_row(w[l], bias[l], L.packed_w + size_t(rank) * L.rows * L.padded, L.packed_b + size_t(rank) * L.rows,
             L.rows, L.split, L.padded);
  }
#pragma unroll
  for (int j = 0; j < kHead; ++j)
    load_row(hw[j], hbias[j], d.head[j].packed_w, d.head[j].packed_b, d.head[j].output, d.head[j].split,
             d.head[j].padded);
}

// Launches one instantiation; returns cudaErrorInvalidValue when none has these shapes.
// Instantiated for layers 1..4 and head layers 1..2 with 8 lanes (1024 threads at most, 64
// registers), 16 lanes (512 threads, 128 registers) and 32 lanes (256 threads, 255 registers);
// and, for one LSTM layer and one head layer only, the wide shape (kWideLanes in
// resident_lstm.hpp, 512 threads). Why the wide shape: the others hold at most 8,192 weights per
// layer in a block (lanes times threads), so lstm_window's 256 gate rows of 74 columns need a
// cluster and pay a cluster barrier and the pushes between blocks every step (two thirds of its
// step on the H200, docs/gpu.md); at 40 lanes, rows of up to 80 columns over 2 lanes, its 256
// rows fit one block, whose steps take block barriers and write only its own shared memory.
constexpr int kWideThreads = 512;
int max_threads_for_lanes(int lanes);

// The tagged form (resident_tagged_kernel.cu): the same descriptor with tagged 8-byte units in the
// xh and head-input vectors and a double gate buffer; one or two LSTM layers, one head layer.
cudaError_t launch_tagged_kernel(int layers, int head_layers, int lanes, const RegDesc& d, int cluster, int threads,
                                 size_t shared_bytes, cudaStream_t stream);
cudaError_t launch_registers_kernel(int layers, int head_layers, int lanes, const RegDesc& d, int cluster,
                                    int threads, size_t shared_bytes, cudaStream_t stream);

}  // namespace tickinfer::cuda::detail
