// The register form of the resident LSTM kernel, host side: for each weights-per-lane and
// cluster size, see whether every layer's rows times lanes fit one block, plan the shared
// vectors, pack [rows][split * lanes] per block, launch the matching instantiation.
#include <algorithm>
#include <optional>

#include "cuda/resident_forms.hpp"
#include "cuda/resident_registers_kernel.cuh"

namespace tickinfer::cuda::detail {
namespace {

struct RegPlan {
  RegDesc desc{};
  size_t floats = 0;
  int threads = 32;
  int alloc(int n) {
    const int at = int(floats);
    floats += size_t(round_up(n, 4));
    return at;
  }
};

// Lanes per row: the fewest (a power of two, at most a warp) whose slices cover the row.
std::optional<int> split_covering(int k, int lanes) {
  const int s = pow2_at_least((k + lanes - 1) / lanes);
  if (s > 32) return std::nullopt;
  return s;
}

// tagged: every xh and head-input unit is 8 bytes (value and step) and the gates are doubled.
std::optional<RegPlan> plan_registers(const LstmStack& s, int cluster, int lanes, int steps, bool tagged) {
  const int unit = tagged ? 2 : 1;
  if (s.lstm.size() > size_t(kRegMaxLstm) || s.head.empty() || s.head.size() > size_t(kRegMaxHead)) return std::nullopt;
  // The wide shape is one kernel: one LSTM layer, one head layer, the register form (a cluster of
  // one block has no barrier for the tagged form to spare).
  if (lanes == kWideLanes && (s.lstm.size() != 1 || s.head.size() != 1 || tagged)) return std::nullopt;
  RegPlan p;
  RegDesc& d = p.desc;
  d.n_lstm = int(s.lstm.size());
  d.n_head = int(s.head.size());
  d.steps = steps;
  int max_rows = 0;
  for (int l = 0; l < d.n_lstm; ++l) {
    const LstmLayerWeights& W = s.lstm[l];
    if (W.units % cluster) return std::nullopt;
    RegLstmDesc& L = d.lstm[l];
    L.input = W.input;
    L.units = W.units;
    L.units_per_block = W.units / cluster;
    L.rows = 4 * L.units_per_block;
    const auto split = split_covering(W.input + W.units, lanes);
    if (!split) return std::nullopt;
    L.split = *split;
    L.padded = L.split * lanes;
    p.threads = std::max(p.threads, L.rows * L.split);
    L.xh = p.alloc(2 * L.padded * unit);
    L.c = p.alloc(2 * L.units_per_block);
    max_rows = std::max(max_rows, L.rows);
  }
  for (int j = 0; j < d.n_head; ++j) {
    const DenseLayerWeights& W = s.head[j];
    RegHeadDesc& D = d.head[j];
    D.input = W.input;
    D.output = W.output;
    D.activation = int(W.activation);
    const auto split = split_covering(W.input, lanes);
    if (!split) return std::nullopt;
    D.split = *split;
    D.padded = D.split * lanes;
    p.threads = std::max(p.threads, D.output * D.split);
    D.x = p.alloc(D.padded * unit);
  }
  d.in = p.alloc(steps > 1 ? steps * s.input_width() : 0);
  d.gates = p.alloc(max_rows * unit);  // the kernel zeroes everything before this offset
  d.command = p.alloc(1);
  p.threads = round_up(p.threads, 32);
  if (p.threads > max_threads_for_lanes(lanes)) return std::nullopt;
  return p;
}

}  // namespace

std::string launch_register_form(const LstmStack& stack, const ResidentOptions& opt, const FormContext& ctx,
                                 FormChoice& chosen) {
  const bool tagged = opt.form == "tagged";
  std::string why = "register form: no weights-per-lane and cluster size hold every layer's rows in one block";
  for (int lanes : {8, 16, 32, kWideLanes}) {
    if (opt.lanes && lanes != opt.lanes) continue;
    for (int cluster : {1, 2, 4, 8, 16}) {
      if (opt.cluster && cluster != opt.cluster) continue;
      std::optional<RegPlan> plan = plan_registers(stack, cluster, lanes, opt.steps, tagged);
      if (!plan || plan->floats * sizeof(float) > ctx.shared_limit) continue;
      RegDesc& d = plan->desc;
      for (int l = 0; l < d.n_lstm; ++l) {
        std::vector<float> w, b;
        pack_lstm_rows(stack.lstm[l], cluster, d.lstm[l].padded, w, b);
        d.lstm[l].packed_w = ctx.upload(w);
        d.lstm[l].packed_b = ctx.upload(b);
      }
      for (int j = 0; j < d.n_head; ++j) {
        std::vector<float> w;
        pack_dense_rows(stack.head[j], d.head[j].padded, w);
        d.head[j].packed_w = ctx.upload(w);
        d.head[j].packed_b = ctx.upload(stack.head[j].bias);
      }
      d.activations = opt.activations;
      d.last_request = ctx.last_request;
      d.fast = opt.fast_math ? 1 : 0;
      d.request = ctx.request;
      d.reply = ctx.reply;
      d.trace = ctx.trace;
      d.trace_len = ctx.trace_len;
      const size_t bytes = one_block_per_sm_bytes(plan->floats * sizeof(float), ctx);
      const cudaError_t e =
          tagged ? launch_tagged_kernel(d.n_lstm, d.n_head, lanes, d, cluster, plan->threads, bytes, ctx.stream)
                 : launch_registers_kernel(d.n_lstm, d.n_head, lanes, d, cluster, plan->threads, bytes, ctx.stream);
      if (e == cudaSuccess) {
        chosen = {tagged ? "tagged" : "registers", cluster, plan->threads, lanes, bytes};
        return {};
      }
      cudaGetLastError();  // clear a refused launch before the next candidate
      why = "register form: launch refused (" + std::string(cudaGetErrorString(e)) + ") for lanes " +
            std::to_string(lanes) + ", cluster " + std::to_string(cluster);
    }
  }
  return why;
}

}  // namespace tickinfer::cuda::detail
