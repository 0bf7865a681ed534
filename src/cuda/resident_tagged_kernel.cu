// The tagged form of the register-resident LSTM kernel: no cluster barrier inside a request.
//
// Why: in the register form a layer-step is ~2,700 cycles, of which ~1,000 wait at the cluster
// barrier and ncu finds no warp eligible in 83-90% of cycles (docs/gpu.md). Here every value a
// block pushes into another block's input vector travels with the step it belongs to, as one
// 8-byte unit (low word the float, high word the step), the wire form's trick inside the cluster:
// a consumer lane waits on its own chunk of the vector until every unit in it shows the step it
// needs, and nobody waits for a barrier. One cluster barrier per request stays (receiving it),
// which also orders everything of the previous request.
//
// Same RegDesc as the register form, read differently: each xh buffer and head input holds
// `padded` units (two floats each), the gate buffer is double-buffered by layer-step, and units
// past a vector's end carry kAlways so they never hold a lane up.
//
// Why no write lands on a value still being read: a block pushes h(g + 1) into the buffers of
// step g - 1 only after it read every block's h(g), which each block computed after finishing
// its own reads of step g - 1's vectors (the buffers alternate with the step's parity).
#include "cuda/cluster_barrier.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/resident_device_common.cuh"
#include "cuda/resident_launch.cuh"
#include "cuda/resident_lstm_kernel.cuh"
#include "cuda/resident_registers_kernel.cuh"

namespace cg = cooperative_groups;

namespace tickinfer::cuda::detail {
namespace {

constexpr uint32_t kAlways = 0xFFFFFFFFu;

__device__ __forceinline__ unsigned long long pack(float v, uint32_t tag) {
  return (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(v);
}

// Two units, each single-copy atomic (a 64-bit element), never cached in registers.
__device__ __forceinline__ void load_units(const unsigned long long* p, unsigned long long& a, unsigned long long& b) {
  asm volatile("ld.volatile.shared.v2.u64 {%0, %1}, [%2];"
               : "=l"(a), "=l"(b)
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p)))
               : "memory");
}

__device__ __forceinline__ void store_unit(unsigned long long* p, unsigned long long v) {
  *reinterpret_cast<volatile unsigned long long*>(p) = v;
}

__device__ __forceinline__ bool ready(unsigned long long u, int k, int x_units, uint32_t x_tag, uint32_t h_tag) {
  const uint32_t t = uint32_t(u >> 32);
  return t == kAlways || t == (k < x_units ? x_tag : h_tag);
}

// row_dot over tagged units: units [0, x_units) must show x_tag, the rest h_tag (or kAlways).
template <int kLanes>
__device__ __forceinline__ float row_dot_tagged(const float (&w)[kLanes], const unsigned long long* v, int split,
                                                int x_units, uint32_t x_tag, uint32_t h_tag) {
  const int s = threadIdx.x % split;
  float acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll
  for (int i = 0; i < kLanes / 4; ++i) {
    const int k = (i * split + s) * 4;
    unsigned long long u0, u1, u2, u3;
    do {
      load_units(v + k, u0, u1);
      load_units(v + k + 2, u2, u3);
    } while (!(ready(u0, k, x_units, x_tag, h_tag) && ready(u1, k + 1, x_units, x_tag, h_tag) &&
               ready(u2, k + 2, x_units, x_tag, h_tag) && ready(u3, k + 3, x_units, x_tag, h_tag)));
    acc0 = fmaf(w[4 * i], __uint_as_float(uint32_t(u0)), acc0);
    acc1 = fmaf(w[4 * i + 1], __uint_as_float(uint32_t(u1)), acc1);
    acc0 = fmaf(w[4 * i + 2], __uint_as_float(uint32_t(u2)), acc0);
    acc1 = fmaf(w[4 * i + 3], __uint_as_float(uint32_t(u3)), acc1);
  }
  float acc = acc0 + acc1;
  for (int off = split / 2; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off, split);
  return acc;
}

__device__ __forceinline__ unsigned long long* units(float* sm, int offset) {
  return reinterpret_cast<unsigned long long*>(sm + offset);
}

// Block 0 polls the request and pushes it into every block; the one cluster barrier of the
// request. Layer 0's x for a one-step request goes straight into its input vector, tagged `step`.
__device__ uint32_t receive(const RegDesc& d, float* sm, uint32_t seq, int parity, uint32_t step,
                            cg::cluster_group& cluster, int rank) {
  if (rank == 0) {
    const unsigned blocks = cluster.num_blocks();
    const int n = 1 + d.steps * d.lstm[0].input;
    for (int u = threadIdx.x; u < n; u += blockDim.x) {
      const unsigned long long v = wait_for_unit(d.request + u, seq);
      const float f = __uint_as_float(uint32_t(v));
      for (unsigned q = 0; q < blocks; ++q) {
        if (u == 0)
          *shared_in_block(cluster, sm + d.command, q) = f;
        else if (d.steps == 1)
          store_unit(shared_in_block(cluster, units(sm, d.lstm[0].xh) + parity * d.lstm[0].padded + u - 1, q),
                     pack(f, step));
        else
          *shared_in_block(cluster, sm + d.in + u - 1, q) = f;
      }
    }
  }
  cluster_barrier(cluster);
  return __float_as_uint(sm[d.command]);
}

template <int kLanes>
__device__ __forceinline__ void tagged_layer_step(const RegDesc& d, const RegLstmDesc& L, const float (&w)[kLanes],
                                                  float bias, float* sm, int parity, uint32_t step, uint32_t prev,
                                                  float* gates,
                                                  unsigned long long* onward, bool onward_everywhere,
                                                  cg::cluster_group& cluster, int rank) {
  const bool fast = d.fast != 0;
  const unsigned blocks = cluster.num_blocks();
  const int hb = L.units_per_block;
  const float acc =
      row_dot_tagged(w, units(sm, L.xh) + parity * L.padded, L.split, L.input, step, prev);
  const int r = threadIdx.x / L.split;
  if (threadIdx.x % L.split == 0 && r < L.rows) gates[r] = acc + bias;
  __syncthreads();
  const float* c_old = sm + L.c + parity * hb;
  unsigned long long* own_next = units(sm, L.xh) + (1 - parity) * L.padded + L.input + rank * hb;
  for (int idx = threadIdx.x; idx < hb * int(blocks); idx += blockDim.x) {
    const int u = idx / int(blocks);
    const unsigned q = unsigned(idx) % blocks;
    const float gi = gate_activation(gates[u], false, fast), gf = gate_activation(gates[hb + u], false, fast);
    const float gg = gate_activation(gates[2 * hb + u], true, fast), go = gate_activation(gates[3 * hb + u], false, fast);
    const float c = fmaf(gf, c_old[u], gi * gg);
    const float h = go * (fast ? tanh_fast(c) : tanhf(c));
    if (q == 0) sm[L.c + (1 - parity) * hb + u] = c;
    store_unit(shared_in_block(cluster, own_next + u, q), pack(h, step));
    if (onward_everywhere || q == 0) store_unit(shared_in_block(cluster, onward + rank * hb + u, q), pack(h, step));
  }
}

template <int kHead, int kLanes>
__device__ __forceinline__ void tagged_head(const RegDesc& d, const float (&hw)[kHead][kLanes], const float (&hb)[kHead],
                                            float* sm, uint32_t seq, uint32_t step) {
#pragma unroll
  for (int j = 0; j < kHead; ++j) {
    const RegHeadDesc& D = d.head[j];
    const bool warp_has_rows = int(threadIdx.x / 32 * 32) < D.output * D.split;
    const float acc =
        warp_has_rows ? row_dot_tagged(hw[j], units(sm, D.x), D.split, D.input, j == 0 ? step : kAlways, kAlways) : 0.0f;
    const int o = threadIdx.x / D.split;
    if (warp_has_rows && threadIdx.x % D.split == 0 && o < D.output) {
      const float v = activate(D.activation, acc + hb[j]);
      if (j + 1 == kHead)
        store_system(d.reply + o, (static_cast<unsigned long long>(seq) << 32) | __float_as_uint(v));
      else
        store_unit(units(sm, d.head[j + 1 < kHead ? j + 1 : j].x) + o, pack(v, kAlways));
    }
    if (j + 1 < kHead) __syncthreads();
  }
}

// Every unit of every vector starts as (0, kAlways) outside the vectors' live range and (0, 0)
// inside; the first request resets the state, writing its own tags.
__device__ void init_vectors(const RegDesc& d, float* sm) {
  for (int i = threadIdx.x; i < d.gates; i += blockDim.x) sm[i] = 0.0f;
  __syncthreads();
  for (int l = 0; l < d.n_lstm; ++l) {
    const RegLstmDesc& L = d.lstm[l];
    for (int i = threadIdx.x; i < 2 * L.padded; i += blockDim.x)
      if (i % L.padded >= L.input + L.units) store_unit(units(sm, L.xh) + i, pack(0.0f, kAlways));
  }
  for (int j = 0; j < d.n_head; ++j) {
    const RegHeadDesc& D = d.head[j];
    for (int i = threadIdx.x; i < D.padded; i += blockDim.x)
      if (i >= D.input) store_unit(units(sm, D.x) + i, pack(0.0f, kAlways));
  }
}

template <int kLayers, int kHead, int kLanes, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads) tagged_kernel(RegDesc d) {
  extern __shared__ float4 shared4[];
  float* sm = reinterpret_cast<float*>(shared4);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  float w[kLayers][kLanes], bias[kLayers];
  float hw[kHead][kLanes], hbias[kHead];
  load_weights(d, rank, w, bias, hw, hbias);
  init_vectors(d, sm);
  cluster_barrier(cluster);
  int parity = 0;
  // step: the tag of the step about to run; prev: the tag the state carries (the last step's, 0
  // before the first). Tags wrap around, skipping kAlways.
  uint32_t step = 1, prev = 0, layer_steps = 0;
  for (uint32_t seq = 1;; ++seq) {
    const uint32_t cmd = receive(d, sm, seq, parity, step, cluster, rank);
    if (cmd & kCommandStop) break;
    const unsigned long long t_seen = global_ns();
    const long long c_seen = clock64();
    if (cmd & kCommandReset) {  // the state this step reads, as the previous step's output
#pragma unroll
      for (int l = 0; l < kLayers; ++l) {
        const RegLstmDesc& L = d.lstm[l];
        for (int i = threadIdx.x; i < L.units; i += blockDim.x)
          store_unit(units(sm, L.xh) + parity * L.padded + L.input + i, pack(0.0f, prev));
        for (int i = threadIdx.x; i < L.units_per_block; i += blockDim.x) sm[L.c + parity * L.units_per_block + i] = 0.0f;
      }
    }
    for (int t = 0; t < d.steps; ++t) {
      if (d.steps > 1)
        for (int i = threadIdx.x; i < d.lstm[0].input; i += blockDim.x)
          store_unit(units(sm, d.lstm[0].xh) + parity * d.lstm[0].padded + i, pack(sm[d.in + t * d.lstm[0].input + i], step));
      __syncthreads();
#pragma unroll
      for (int l = 0; l < kLayers; ++l) {
        const int next = l + 1 < kLayers ? l + 1 : l;
        unsigned long long* onward = l + 1 < kLayers ? units(sm, d.lstm[next].xh) + parity * d.lstm[next].padded
                                                     : units(sm, d.head[0].x);
        float* gates = sm + d.gates + (layer_steps++ & 1u) * (d.command - d.gates) / 2;
        tagged_layer_step(d, d.lstm[l], w[l], bias[l], sm, parity, step, prev, gates, onward, l + 1 < kLayers, cluster,
                          rank);
      }
      parity ^= 1;
      prev = step;
      step = step + 1 == kAlways ? 1 : step + 1;
    }
    const unsigned long long t_done = global_ns();
    const long long c_done = clock64();
    if (rank == 0) {
      tagged_head(d, hw, hbias, sm, seq, prev);
      const long long c_head = clock64();
      if (threadIdx.x == 0 && d.trace_len > 0)
        write_trace(d.trace, d.trace_len, seq, t_seen, t_done, c_done - c_seen, c_head - c_done, PhaseCycles{});
    }
    if (d.last_request > 0 && seq == uint32_t(d.last_request)) break;
  }
  cluster_barrier(cluster);
}

template <int kLayers, int kHead, int kLanes, int kMaxThreads>
struct TaggedKernel {
  static auto get() { return tagged_kernel<kLayers, kHead, kLanes, kMaxThreads>; }
};

}  // namespace

void load_tagged_form_kernels() {
  load_by_lanes<TaggedKernel, 1, 1>();
  load_by_lanes<TaggedKernel, 2, 1>();
}

// Fewer instantiations than the register form: one or two LSTM layers, one head layer (the
// shapes it is measured on); the host falls back to the register form for others.
cudaError_t launch_tagged_kernel(int layers, int head_layers, int lanes, const RegDesc& d, int cluster, int threads,
                                 size_t shared_bytes, cudaStream_t stream) {
  if (head_layers != 1) return cudaErrorInvalidValue;
  switch (layers) {
    case 1: return launch_by_lanes<TaggedKernel, 1, 1>(lanes, d, cluster, threads, shared_bytes, stream);
    case 2: return launch_by_lanes<TaggedKernel, 2, 1>(lanes, d, cluster, threads, shared_bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tickinfer::cuda::detail
