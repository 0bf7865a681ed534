// The register-resident LSTM kernel (see resident_registers_kernel.cuh) and its launcher.
// Request flow, parity and barriers are those of resident_lstm_kernel.cu; what differs is where
// the weights live and that each layer's h is pushed straight into the next layer's input vector.
#include "cuda/cluster_barrier.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/resident_device_common.cuh"
#include "cuda/resident_launch.cuh"
#include "cuda/resident_lstm_kernel.cuh"
#include "cuda/resident_registers_kernel.cuh"

namespace cg = cooperative_groups;

namespace tickinfer::cuda::detail {
namespace {

// One lane's share of a row: its kLanes weights (registers) times its slice of the input vector,
// then the sum over the row's `split` lanes. The slices interleave in 16-byte chunks (lane s takes
// chunks s, s + split, ...) so the lanes of a row read consecutive chunks: one shared-memory
// wavefront per load, where contiguous slices would put every lane on the same banks. Every
// thread must call it (the shuffles are full-warp).
template <int kLanes>
__device__ __forceinline__ float row_dot(const float (&w)[kLanes], const float* v, int split) {
  const int s = threadIdx.x % split;
  const float4* v4 = reinterpret_cast<const float4*>(v);
  float acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll
  for (int i = 0; i < kLanes / 4; ++i) {
    const float4 x = v4[i * split + s];
    acc0 = fmaf(w[4 * i], x.x, acc0);
    acc1 = fmaf(w[4 * i + 1], x.y, acc1);
    acc0 = fmaf(w[4 * i + 2], x.z, acc0);
    acc1 = fmaf(w[4 * i + 3], x.w, acc1);
  }
  float acc = acc0 + acc1;
  for (int off = split / 2; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off, split);
  return acc;
}

// Block 0 polls the request and pushes it into every block (x straight into layer 0's input
// vector for one-step requests); the cluster barrier then hands it to all. Returns the command.
__device__ uint32_t receive(const RegDesc& d, float* sm, uint32_t seq, int parity, cg::cluster_group& cluster,
                            int rank) {
  if (rank == 0) {
    const unsigned blocks = cluster.num_blocks();
    const int units = 1 + d.steps * d.lstm[0].input;
    float* x_dst = d.steps == 1 ? sm + d.lstm[0].xh + parity * d.lstm[0].padded : sm + d.in;
    for (int u = threadIdx.x; u < units; u += blockDim.x) {
      const unsigned long long v = wait_for_unit(d.request + u, seq);
      float* dst = u == 0 ? sm + d.command : x_dst + u - 1;
      for (unsigned q = 0; q < blocks; ++q) *shared_in_block(cluster, dst, q) = __uint_as_float(uint32_t(v));
    }
  }
  cluster_barrier(cluster);
  return __float_as_uint(sm[d.command]);
}

// One layer, one step: this block's gate rows from the registers, the gate activations (where
// RegDesc::activations says), the cell update of the block's units, h pushed to this layer's
// next-step input in every block and to `onward` (the next layer's input in every block, or the
// head's input in block 0 alone when `onward_everywhere` is false), then the cluster barrier.
template <int kLanes>
__device__ __forceinline__ void layer_step(const RegDesc& d, const RegLstmDesc& L, const float (&w)[kLanes], float bias,
                                           float* sm, int parity, float* onward, bool onward_everywhere,
                                           cg::cluster_group& cluster, int rank, PhaseCycles& cycles) {
  const bool fast = d.fast != 0;
  const unsigned blocks = cluster.num_blocks();
  const long long t0 = clock64();
  const int hb = L.units_per_block;
  const float acc = row_dot(w, sm + L.xh + parity * L.padded, L.split);
  const long long ta = clock64();
  const int r = threadIdx.x / L.split;
  const bool lead = threadIdx.x % L.split == 0 && r < L.rows;
  // Modes: 0 each row's lead lane activates its gate; 1 the first `rows` threads do after a
  // block barrier; 2 the lead lanes store raw sums and the cell threads activate the four gates
  // of their unit themselves (one barrier fewer).
  const int mode = d.activations;
  if (mode == 1) {
    if (lead) sm[d.gates + r] = acc + bias;
    __syncthreads();
    if (int(threadIdx.x) < L.rows) {
      const int q = threadIdx.x;
      sm[d.gates + q] = gate_activation(sm[d.gates + q], q / hb == 2, fast);
    }
  } else if (lead) {
    sm[d.gates + r] = mode == 2 ? acc + bias : gate_activation(acc + bias, r / hb == 2, fast);
  }
  __syncthreads();
  const long long t1 = clock64();
  const float* g = sm + d.gates;
  const float* c_old = sm + L.c + parity * hb;
  float* own_next = sm + L.xh + (1 - parity) * L.padded + L.input + rank * hb;
  for (int idx = threadIdx.x; idx < hb * int(blocks); idx += blockDim.x) {
    const int u = idx / int(blocks);
    const unsigned q = unsigned(idx) % blocks;
    float gi = g[u], gf = g[hb + u], gg = g[2 * hb + u], go = g[3 * hb + u];
    if (mode == 2) {
      gi = gate_activation(gi, false, fast);
      gf = gate_activation(gf, false, fast);
      gg = gate_activation(gg, true, fast);
      go = gate_activation(go, false, fast);
    }
    const float c = fmaf(gf, c_old[u], gi * gg);
    const float h = go * (fast ? tanh_fast(c) : tanhf(c));
    if (q == 0) sm[L.c + (1 - parity) * hb + u] = c;
    *shared_in_block(cluster, own_next + u, q) = h;
    if (onward_everywhere || q == 0) *shared_in_block(cluster, onward + rank * hb + u, q) = h;
  }
  const long long t2 = clock64();
  cluster_barrier(cluster);
  const long long t3 = clock64();
  cycles.gates += t1 - t0;
  cycles.cells += t3 - t1;
  cycles.dot += ta - t0;
  cycles.activation += t1 - ta;
  cycles.work += t2 - t1;
  cycles.barrier += t3 - t2;
}

// Block 0: the Dense head from the registers; the last layer writes the reply units.
template <int kHead, int kLanes>
__device__ __forceinline__ void run_head(const RegDesc& d, const float (&hw)[kHead][kLanes], const float (&hb)[kHead],
                                         float* sm, uint32_t seq) {
#pragma unroll
  for (int j = 0; j < kHead; ++j) {
    const RegHeadDesc& D = d.head[j];
    // Whole warps past the head's rows skip the product (the shuffles are per warp).
    const bool warp_has_rows = int(threadIdx.x / 32 * 32) < D.output * D.split;
    const float acc = warp_has_rows ? row_dot(hw[j], sm + D.x, D.split) : 0.0f;
    const int o = threadIdx.x / D.split;
    if (warp_has_rows && threadIdx.x % D.split == 0 && o < D.output) {
      const float v = activate(D.activation, acc + hb[j]);
      if (j + 1 == kHead)
        store_system(d.reply + o, (static_cast<unsigned long long>(seq) << 32) | __float_as_uint(v));
      else
        sm[d.head[j + 1 < kHead ? j + 1 : j].x + o] = v;
    }
    if (j + 1 < kHead) __syncthreads();
  }
}

template <int kLayers, int kHead, int kLanes, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads) registers_kernel(RegDesc d) {
  extern __shared__ float4 shared4[];
  float* sm = reinterpret_cast<float*>(shared4);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  float w[kLayers][kLanes], bias[kLayers];
  float hw[kHead][kLanes], hbias[kHead];
  load_weights(d, rank, w, bias, hw, hbias);
  // Shared memory starts zeroed where it is read before written: input pads, h, c, head inputs.
  for (int i = threadIdx.x; i < d.gates; i += blockDim.x) sm[i] = 0.0f;
  cluster_barrier(cluster);
  int parity = 0;
  for (uint32_t seq = 1;; ++seq) {
    const uint32_t cmd = receive(d, sm, seq, parity, cluster, rank);
    if (cmd & kCommandStop) break;
    const unsigned long long t_seen = global_ns();
    const long long c_seen = clock64();
    PhaseCycles cycles;
    if (cmd & kCommandReset) {  // only what this step reads: other buffers may hold remote writes
#pragma unroll
      for (int l = 0; l < kLayers; ++l) {
        const RegLstmDesc& L = d.lstm[l];
        for (int i = threadIdx.x; i < L.units; i += blockDim.x) sm[L.xh + parity * L.padded + L.input + i] = 0.0f;
        for (int i = threadIdx.x; i < L.units_per_block; i += blockDim.x) sm[L.c + parity * L.units_per_block + i] = 0.0f;
      }
    }
    for (int t = 0; t < d.steps; ++t) {
      if (d.steps > 1)
        for (int i = threadIdx.x; i < d.lstm[0].input; i += blockDim.x)
          sm[d.lstm[0].xh + parity * d.lstm[0].padded + i] = sm[d.in + t * d.lstm[0].input + i];
      __syncthreads();
#pragma unroll
      for (int l = 0; l < kLayers; ++l) {
        // h goes on to the next layer's input for this step (this parity), or to the head.
        const int next = l + 1 < kLayers ? l + 1 : l;
        float* onward = l + 1 < kLayers ? sm + d.lstm[next].xh + parity * d.lstm[next].padded : sm + d.head[0].x;
        layer_step(d, d.lstm[l], w[l], bias[l], sm, parity, onward, l + 1 < kLayers, cluster, rank, cycles);
      }
      parity ^= 1;
    }
    const unsigned long long t_done = global_ns();
    const long long c_done = clock64();
    if (rank == 0) {
      run_head(d, hw, hbias, sm, seq);
      const long long c_head = clock64();
      if (threadIdx.x == 0 && d.trace_len > 0) write_trace(d.trace, d.trace_len, seq, t_seen, t_done, c_done - c_seen, c_head - c_done, cycles);
    }
    if (d.last_request > 0 && seq == uint32_t(d.last_request)) break;
  }
  cluster_barrier(cluster);
}

template <int kLayers, int kHead, int kLanes, int kMaxThreads>
struct RegistersKernel {
  static auto get() { return registers_kernel<kLayers, kHead, kLanes, kMaxThreads>; }
};

// The wide shape (kWideLanes weights per thread, 512 threads) exists for one LSTM layer and one
// head layer only: with more, the weights spill out of the 128 registers a thread then has.
using WideKernel = RegistersKernel<1, 1, kWideLanes, kWideThreads>;

template <int kLayers>
cudaError_t launch_head(int head, int lanes, const RegDesc& d, int cluster, int threads, size_t bytes, cudaStream_t s) {
  if (lanes == kWideLanes) {
    if (kLayers != 1 || head != 1 || threads > kWideThreads) return cudaErrorInvalidValue;
    return launch_cluster(WideKernel::get(), d, cluster, threads, bytes, s, true);
  }
  switch (head) {
    case 1: return launch_by_lanes<RegistersKernel, kLayers, 1>(lanes, d, cluster, threads, bytes, s);
    case 2: return launch_by_lanes<RegistersKernel, kLayers, 2>(lanes, d, cluster, threads, bytes, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

void load_registers_form_kernels() {
  load_by_lanes<RegistersKernel, 1, 1>();
  load_by_lanes<RegistersKernel, 1, 2>();
  load_by_lanes<RegistersKernel, 2, 1>();
  load_by_lanes<RegistersKernel, 2, 2>();
  load_by_lanes<RegistersKernel, 3, 1>();
  load_by_lanes<RegistersKernel, 3, 2>();
  load_by_lanes<RegistersKernel, 4, 1>();
  load_by_lanes<RegistersKernel, 4, 2>();
  load_kernel(WideKernel::get());
}

int max_threads_for_lanes(int lanes) {
  return lanes == 8 ? 1024 : lanes == 16 ? 512 : lanes == 32 ? 256 : lanes == kWideLanes ? kWideThreads : 0;
}

cudaError_t launch_registers_kernel(int layers, int head_layers, int lanes, const RegDesc& d, int cluster,
                                    int threads, size_t shared_bytes, cudaStream_t stream) {
  switch (layers) {
    case 1: return launch_head<1>(head_layers, lanes, d, cluster, threads, shared_bytes, stream);
    case 2: return launch_head<2>(head_layers, lanes, d, cluster, threads, shared_bytes, stream);
    case 3: return launch_head<3>(head_layers, lanes, d, cluster, threads, shared_bytes, stream);
    case 4: return launch_head<4>(head_layers, lanes, d, cluster, threads, shared_bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tickinfer::cuda::detail
