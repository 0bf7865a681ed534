// The shared-memory form of the resident LSTM kernel, host side: plan each block's shared memory,
// pack the weights as [rows][padded stride] per block, launch.
#include <algorithm>

#include "cuda/resident_forms.hpp"
#include "cuda/resident_launch.cuh"
#include "cuda/resident_lstm_kernel.cuh"

namespace tickinfer::cuda::detail {
namespace {

// Lanes per row: as many as the block has threads per row, at most a warp.
int split_for(int rows, int threads) {
  int p = 1;
  while (p * 2 <= std::max(1, threads / std::max(rows, 1))) p *= 2;
  return std::min(p, 32);
}

// A stride congruent to `split` modulo 32 banks: the rows of one warp then start on distinct banks.
int stride_for(int k, int split) { return round_up(k, 32) + (split < 32 ? split : 0); }

struct SharedPlan {
  ResidentDesc desc{};
  size_t floats = 0;
  int alloc(int n) {
    const int at = int(floats);
    floats += size_t(round_up(n, 4));
    return at;
  }
};

SharedPlan plan_shared(const LstmStack& s, int cluster, int threads, int steps) {
  SharedPlan p;
  ResidentDesc& d = p.desc;
  d.n_lstm = int(s.lstm.size());
  d.n_head = int(s.head.size());
  d.steps = steps;
  int max_rows = 0;
  for (int l = 0; l < d.n_lstm; ++l) {
    const LstmLayerWeights& W = s.lstm[l];
    LstmLayerDesc& L = d.lstm[l];
    L.input = W.input;
    L.units = W.units;
    L.units_per_block = W.units / cluster;
    L.rows = 4 * L.units_per_block;
    L.split = split_for(L.rows, threads);
    L.row_stride = stride_for(W.input + W.units, L.split);
    L.w = p.alloc(L.rows * L.row_stride);
    L.b = p.alloc(L.rows);
    L.h = p.alloc(2 * L.units);
    L.c = p.alloc(2 * L.units_per_block);
    max_rows = std::max(max_rows, L.rows);
  }
  d.gates = p.alloc(max_rows);
  d.in = p.alloc(steps * s.input_width());
  d.command = p.alloc(1);
  for (int j = 0; j < d.n_head; ++j) {
    const DenseLayerWeights& W = s.head[j];
    HeadLayerDesc& D = d.head[j];
    D.input = W.input;
    D.output = W.output;
    D.activation = int(W.activation);
    D.split = split_for(W.output, threads);
    D.row_stride = stride_for(W.input, D.split);
    D.w = p.alloc(D.output * D.row_stride);
    D.b = p.alloc(D.output);
    D.y = p.alloc(D.output);
  }
  return p;
}

int default_threads(const LstmStack& s, int cluster) {
  int rows = 0;
  for (const LstmLayerWeights& L : s.lstm) rows = std::max(rows, 4 * L.units / cluster);
  return std::clamp(round_up(rows * 4, 32), 128, 1024);
}

}  // namespace

std::string launch_shared_form(const LstmStack& stack, const ResidentOptions& opt, const FormContext& ctx,
                               FormChoice& chosen) {
  if (stack.lstm.size() > size_t(kMaxLstmLayers) || stack.head.size() > size_t(kMaxHeadLayers))
    return "shared form: at most 4 LSTM and 4 Dense layers";
  if (stack.head.empty()) return "shared form: the kernel replies through a Dense head, and this stack has none";
  // Whole warps: a row's lanes are reduced by warp shuffles over every lane of the warp.
  if (opt.threads && (opt.threads % 32 != 0 || opt.threads < 32 || opt.threads > 1024))
    return "shared form: threads must be a multiple of 32 from 32 to 1024, not " + std::to_string(opt.threads);
  SharedPlan plan;
  int cluster = 0, threads = 0;
  for (int c : {1, 2, 4, 8, 16}) {
    if (opt.cluster && c != opt.cluster) continue;
    bool divides = true;
    for (const LstmLayerWeights& L : stack.lstm) divides = divides && L.units % c == 0;
    if (!divides) continue;
    const int t = opt.threads ? opt.threads : default_threads(stack, c);
    SharedPlan p = plan_shared(stack, c, t, opt.steps);
    if (p.floats * sizeof(float) <= ctx.shared_limit) {
      plan = p, cluster = c, threads = t;
      break;
    }
  }
  if (!cluster)
    return "shared form: the weights do not fit the shared memory of a cluster of " +
           (opt.cluster ? std::to_string(opt.cluster) : std::string("up to 16")) + " blocks";
  ResidentDesc& d = plan.desc;
  for (int l = 0; l < d.n_lstm; ++l) {
    std::vector<float> w, b;
    pack_lstm_rows(stack.lstm[l], cluster, d.lstm[l].row_stride, w, b);
    d.lstm[l].packed_w = ctx.upload(w);
    d.lstm[l].packed_b = ctx.upload(b);
  }
  for (int j = 0; j < d.n_head; ++j) {
    std::vector<float> w;
    pack_dense_rows(stack.head[j], d.head[j].row_stride, w);
    d.head[j].packed_w = ctx.upload(w);
    d.head[j].packed_b = ctx.upload(stack.head[j].bias);
  }
  d.last_request = ctx.last_request;
  d.request = ctx.request;
  d.reply = ctx.reply;
  d.trace = ctx.trace;
  d.trace_len = ctx.trace_len;
  const size_t bytes = one_block_per_sm_bytes(plan.floats * sizeof(float), ctx);
  const cudaError_t e = launch_cluster(resident_lstm_kernel, d, cluster, threads, bytes, ctx.stream, false);
  if (e != cudaSuccess) {
    cudaGetLastError();  // the refusal is reported here; later calls must not see it again
    return std::string("shared form: launch refused: ") + cudaGetErrorString(e);
  }
  chosen = {"shared", cluster, threads, 0, bytes};
  return {};
}

}  // namespace tickinfer::cuda::detail
