// Device helpers the register-resident kernels share: system-scope loads and stores to mapped
// host memory, the global timer, the activations (precise, and the fast variants), and the load of
// a thread's weights into registers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/resident_lstm_kernel.cuh"

namespace tickinfer::cuda::detail {

__device__ __forceinline__ unsigned long long load_system(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_system(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Waits for a request unit of sequence `seq` or later (wrap-safe) and returns it. A later one is
// the stop command: the host writes it into every unit, and sends nothing after a request it gave
// up on, so a kernel that started late (its clusters queued behind others) or fell behind still
// sees the stop and ends instead of holding its multiprocessors until the process does.
__device__ __forceinline__ unsigned long long wait_for_unit(const unsigned long long* p, uint32_t seq) {
  unsigned long long v;
  do {
    v = load_system(p);
  } while (int32_t(uint32_t(v >> 32) - seq) < 0);
  return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ float sigmoid(float v) { return __frcp_rn(1.0f + expf(-v)); }

__device__ __forceinline__ float activate(int activation, float v) {
  switch (activation) {
    case 1: return sigmoid(v);
    case 2: return v > 0.0f ? v : 0.0f;
    case 3: return tanhf(v);
    default: return v;
  }
}

__device__ __forceinline__ float sigmoid_fast(float v) { return __frcp_rn(1.0f + __expf(-v)); }
__device__ __forceinline__ float tanh_fast(float v) { return fmaf(2.0f, sigmoid_fast(2.0f * v), -1.0f); }
__device__ __forceinline__ float gate_activation(float v, bool is_tanh, bool fast) {
  if (fast) return is_tanh ? tanh_fast(v) : sigmoid_fast(v);
  return is_tanh ? tanhf(v) : sigmoid(v);
}

// The weights row_dot multiplies: lane s's i-th chunk holds columns (i * split + s) * 4 ... + 3.
template <int kLanes>
__device__ __forceinline__ void load_row(float (&w)[kLanes], float& bias, const float* packed_w, const float* packed_b, int rows,
                         int split, int padded) {
  const int r = threadIdx.x / split, s = threadIdx.x % split;
#pragma unroll
  for (int i = 0; i < kLanes / 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
      w[4 * i + j] = r < rows ? packed_w[size_t(r) * padded + (i * split + s) * 4 + j] : 0.0f;
  bias = r < rows ? packed_b[r] : 0.0f;
}

// Where block 0's thread 0 spent a request's cycles (see kTraceFields); a form fills what it has.
struct PhaseCycles {
  long long gates = 0, cells = 0, dot = 0, activation = 0, work = 0, barrier = 0;
};

// One request's trace record, slot (seq - 1) mod trace_len.
__device__ __forceinline__ void write_trace(unsigned long long* trace, int trace_len, uint32_t seq,
                                            unsigned long long t_seen, unsigned long long t_done, long long recurrent,
                                            long long head, const PhaseCycles& c) {
  unsigned long long* tr = trace + size_t((seq - 1) % uint32_t(trace_len)) * kTraceFields;
  const long long v[kTraceFields] = {0, 0, 0, recurrent, c.gates, c.cells, head, c.dot, c.activation, c.work, c.barrier};
  tr[0] = t_seen;
  tr[1] = t_done;
  tr[2] = global_ns();
  for (int f = 3; f < kTraceFields; ++f) tr[f] = static_cast<unsigned long long>(v[f]);
}

}  // namespace tickinfer::cuda::detail
