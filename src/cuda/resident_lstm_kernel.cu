// The resident LSTM-stack kernel: launched once per plan as one thread-block cluster, it loops
// over requests until told to stop. See resident_lstm.hpp for the wire form and why.
//
// Per request: block 0 polls the request units in host memory (only one block touches PCIe:
// polling from every block slowed the host's writes as the cluster grew) and pushes them into
// every block's shared memory; a cluster barrier releases the others. Per step and layer: each
// block's gate rows (activations applied by the lane that finishes a row, so the transcendental
// work is spread over all rows), a block barrier, the cell update of the block's units (one
// thread per unit and destination block, so the pushes of the new h into every block's copy go
// out in parallel), a cluster barrier. Block 0 runs the Dense head and writes the reply units.
#include "cuda/cluster_barrier.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/resident_device_common.cuh"
#include "cuda/resident_lstm_kernel.cuh"

namespace cg = cooperative_groups;

namespace tickinfer::cuda::detail {
namespace {

// For r < rows: epilogue(r, bias[r] + w[r][0:n0] . a + w[r][n0:n0+n1] . b). `split` lanes share
// one row (interleaved columns, so the padded row stride keeps a warp's loads on distinct banks)
// and add up through shuffles. Every thread of the block must call it (the shuffles are full-warp).
template <class Epilogue>
__device__ __forceinline__ void matvec(const float* w, const float* bias, int rows, int stride, int split,
                                       const float* a, int n0, const float* b, int n1, Epilogue epilogue) {
  const int per_pass = blockDim.x / split;
  const int lane_row = threadIdx.x / split, s = threadIdx.x % split;
  for (int r0 = 0; r0 < rows; r0 += per_pass) {
    const int r = r0 + lane_row;
    float acc = 0.0f;
    if (r < rows) {
      const float* wr = w + r * stride;
#pragma unroll 4
      for (int k = s; k < n0; k += split) acc = fmaf(wr[k], a[k], acc);
#pragma unroll 4
      for (int k = s; k < n1; k += split) acc = fmaf(wr[n0 + k], b[k], acc);
    }
    for (int off = split / 2; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off, split);
    if (s == 0 && r < rows) epilogue(r, acc + bias[r]);
  }
}

__device__ void load_weights(const ResidentDesc& d, float* sm, int rank) {
  for (int l = 0; l < d.n_lstm; ++l) {
    const LstmLayerDesc& L = d.lstm[l];
    const int nw = L.rows * L.row_stride;
    for (int i = threadIdx.x; i < nw; i += blockDim.x) sm[L.w + i] = L.packed_w[size_t(rank) * nw + i];
    for (int i = threadIdx.x; i < L.rows; i += blockDim.x) sm[L.b + i] = L.packed_b[size_t(rank) * L.rows + i];
    for (int i = threadIdx.x; i < 2 * L.units; i += blockDim.x) sm[L.h + i] = 0.0f;
    for (int i = threadIdx.x; i < 2 * L.units_per_block; i += blockDim.x) sm[L.c + i] = 0.0f;
  }
  if (rank != 0) return;
  for (int j = 0; j < d.n_head; ++j) {
    const HeadLayerDesc& D = d.head[j];
    for (int i = threadIdx.x; i < D.output * D.row_stride; i += blockDim.x) sm[D.w + i] = D.packed_w[i];
    for (int i = threadIdx.x; i < D.output; i += blockDim.x) sm[D.b + i] = D.packed_b[i];
  }
}

// Block 0 waits for every unit of request `seq` and pushes each into every block's shared
// memory; the cluster barrier then hands the request to all. Returns the command word.
__device__ uint32_t receive(const ResidentDesc& d, float* sm, uint32_t seq, cg::cluster_group& cluster, int rank) {
  if (rank == 0) {
    const int units = 1 + d.steps * d.lstm[0].input;
    const unsigned blocks = cluster.num_blocks();
    for (int u = threadIdx.x; u < units; u += blockDim.x) {
      const unsigned long long v = wait_for_unit(d.request + u, seq);
      float* dst = u == 0 ? sm + d.command : sm + d.in + u - 1;
      for (unsigned q = 0; q < blocks; ++q) *shared_in_block(cluster, dst, q) = __uint_as_float(uint32_t(v));
    }
  }
  cluster_barrier(cluster);
  return __float_as_uint(sm[d.command]);
}

// One LSTM layer, one step. Reads h[parity] and c[parity], writes c[1 - parity] and this
// block's share of h[1 - parity] in every block.
__device__ void lstm_step(const LstmLayerDesc& L, float* sm, float* gates, const float* x, int parity,
                          cg::cluster_group& cluster, int rank, PhaseCycles& cycles) {
  const long long t0 = clock64();
  const int hb = L.units_per_block;
  matvec(sm + L.w, sm + L.b, L.rows, L.row_stride, L.split, x, L.input, sm + L.h + parity * L.units, L.units,
         [&](int r, float v) { gates[r] = r / hb == 2 ? tanhf(v) : sigmoid(v); });
  __syncthreads();
  const long long t1 = clock64();
  const unsigned blocks = cluster.num_blocks();
  const float* c_old = sm + L.c + parity * hb;
  float* c_new = sm + L.c + (1 - parity) * hb;
  float* h_new = sm + L.h + (1 - parity) * L.units + rank * hb;
  for (int idx = threadIdx.x; idx < hb * int(blocks); idx += blockDim.x) {
    const int u = idx / int(blocks);
    const unsigned q = unsigned(idx) % blocks;
    const float c = fmaf(gates[hb + u], c_old[u], gates[u] * gates[2 * hb + u]);
    const float h = gates[3 * hb + u] * tanhf(c);
    if (q == 0) c_new[u] = c;
    *shared_in_block(cluster, h_new + u, q) = h;
  }
  cluster_barrier(cluster);
  const long long t2 = clock64();
  cycles.gates += t1 - t0;
  cycles.cells += t2 - t1;
}

__device__ void run_head(const ResidentDesc& d, float* sm, const float* x, uint32_t seq) {
  for (int j = 0; j < d.n_head; ++j) {
    const HeadLayerDesc& D = d.head[j];
    float* y = sm + D.y;
    const bool last = j + 1 == d.n_head;
    matvec(sm + D.w, sm + D.b, D.output, D.row_stride, D.split, x, D.input, x, 0, [&](int o, float v) {
      v = activate(D.activation, v);
      if (last)
        store_system(d.reply + o, (static_cast<unsigned long long>(seq) << 32) | __float_as_uint(v));
      else
        y[o] = v;
    });
    if (!last) __syncthreads();
    x = y;
  }
}

}  // namespace

__global__ void __launch_bounds__(1024) resident_lstm_kernel(ResidentDesc d) {
  extern __shared__ float4 shared4[];
  float* sm = reinterpret_cast<float*>(shared4);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  load_weights(d, sm, rank);
  cluster_barrier(cluster);
  int parity = 0;
  const LstmLayerDesc& last = d.lstm[d.n_lstm - 1];
  for (uint32_t seq = 1;; ++seq) {
    const uint32_t cmd = receive(d, sm, seq, cluster, rank);
    if (cmd & kCommandStop) break;
    const unsigned long long t_seen = global_ns();
    const long long c_seen = clock64();
    if (cmd & kCommandReset) {
      // Only what this step reads: the other h buffer may already hold remote blocks' writes.
      for (int l = 0; l < d.n_lstm; ++l) {
        const LstmLayerDesc& L = d.lstm[l];
        for (int i = threadIdx.x; i < L.units; i += blockDim.x) sm[L.h + parity * L.units + i] = 0.0f;
        for (int i = threadIdx.x; i < L.units_per_block; i += blockDim.x) sm[L.c + parity * L.units_per_block + i] = 0.0f;
      }
      __syncthreads();
    }
    PhaseCycles cycles;
    for (int t = 0; t < d.steps; ++t) {
      const float* x = sm + d.in + t * d.lstm[0].input;
      for (int l = 0; l < d.n_lstm; ++l) {
        lstm_step(d.lstm[l], sm, sm + d.gates, x, parity, cluster, rank, cycles);
        x = sm + d.lstm[l].h + (1 - parity) * d.lstm[l].units;
      }
      parity ^= 1;
    }
    const unsigned long long t_done = global_ns();
    const long long c_done = clock64();
    if (rank == 0) {
      run_head(d, sm, sm + last.h + parity * last.units, seq);
      const long long c_head = clock64();
      if (threadIdx.x == 0 && d.trace_len > 0)
        write_trace(d.trace, d.trace_len, seq, t_seen, t_done, c_done - c_seen, c_head - c_done, cycles);
    }
    if (d.last_request > 0 && seq == uint32_t(d.last_request)) break;
  }
  cluster_barrier(cluster);  // no block leaves while another could still write its shared memory
}

void load_shared_form_kernel() { load_kernel(resident_lstm_kernel); }

}  // namespace tickinfer::cuda::detail
