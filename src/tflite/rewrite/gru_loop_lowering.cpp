// lower_gru_loops (program_rewrite.hpp): a main-graph WHILE that match_gru_loop recognises gets a
// subgraph holding one time-major SEQUENCE_GRU (ops/sequence_gru.cpp) over the loop's x, its
// weights and biases cut out of the body's constants in gate order z, r, h (the body's own order
// is read from where each block is used, gru_loop.cpp); the interpreter runs that instead of the
// loop (ops/control_flow.cpp). The op computes what the body's ops compute, float or hybrid,
// bit for bit, so the only change is speed: one op instead of ~15 per step.
#include <string>

#include "tflite/rewrite/gru_loop.hpp"
#include "tflite/rewrite/loop_pattern.hpp"
#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl {

namespace {

struct Block {
  int tensor;  // a constant [*, cols] (cols 0: a vector)
  int index;   // which `rows`-row block of it
};

// The blocks stacked into one new constant [n * rows, cols] (or [n * rows]): float rows, or int8
// rows with one scale per row (a per-tensor scale repeated), so blocks of different tensors stack.
int stack_blocks(Program& p, const std::vector<Block>& blocks, int rows, int cols, const std::string& name) {
  Tensor t;
  t.name = name;
  t.type = p.tensors[static_cast<size_t>(blocks[0].tensor)].type;
  const int n = static_cast<int>(blocks.size());
  t.shape = cols > 0 ? Shape{n * rows, cols} : Shape{n * rows};
  const size_t row_bytes = static_cast<size_t>(cols > 0 ? cols : 1) * dtype_size(t.type);
  for (const Block& b : blocks) {
    const Tensor& from = p.tensors[static_cast<size_t>(b.tensor)];
    const auto first = static_cast<std::ptrdiff_t>(static_cast<size_t>(b.index) * rows * row_bytes);
    t.data.insert(t.data.end(), from.data.begin() + first, from.data.begin() + first + static_cast<std::ptrdiff_t>(rows * row_bytes));
    if (from.quant.empty()) continue;
    for (int r = 0; r < rows; ++r) {
      t.quant.scale.push_back(from.quant.per_axis() ? from.quant.scale[static_cast<size_t>(b.index * rows + r)] : from.quant.scale[0]);
    }
  }
  t.quant.zero_point.assign(t.quant.scale.size(), 0);
  p.tensors.push_back(std::move(t));
  return static_cast<int>(p.tensors.size() - 1);
}

void lower(Program& p, Op& w, const GruLoop& m) {
  const std::string base = w.label.empty() ? std::string("gru loop") : w.label;
  const int H = m.H;
  Op gru;
  gru.code = OpCode::SequenceGru;
  gru.label = base + " (lowered GRU loop)";
  gru.inputs.assign(6, -1);
  gru.inputs[0] = w.inputs[4];
  std::vector<Block> wb, ub, bb, rb;
  for (int g = 0; g < 3; ++g) {
    wb.push_back({m.w, m.w_block[g]});
    if (m.b_in >= 0) bb.push_back({m.b_in, m.w_block[g]});
    if (m.reset_after || g < 2) ub.push_back({m.u, m.u_block[g]});
    if (m.b_rec >= 0) rb.push_back({m.b_rec, m.u_block[g]});
  }
  if (!m.reset_after) ub.push_back({m.u_h, 0});
  gru.inputs[1] = stack_blocks(p, wb, H, m.F, base + "/kernel");
  gru.inputs[2] = stack_blocks(p, ub, H, H, base + "/recurrent_kernel");
  if (!bb.empty()) gru.inputs[3] = stack_blocks(p, bb, H, 0, base + "/input_bias");
  if (!rb.empty()) gru.inputs[4] = stack_blocks(p, rb, H, 0, base + "/recurrent_bias");
  gru.inputs[5] = loop::new_activation(p, base + "/h", {1, H});
  gru.outputs = {m.sequences ? w.outputs[2] : loop::new_activation(p, base + "/sequence", {m.T, 1, H})};
  gru.options.activation = FusedActivation::Tanh;
  gru.options.time_major = true;
  gru.options.reset_after = m.reset_after;
  gru.options.asymmetric_quantize_inputs = m.asymmetric;
  loop::attach_lowered(p, w, std::move(gru));
}

}  // namespace

int lower_gru_loops(Program& p) {
  return loop::lower_whiles(p, [](Program& q, Op& w) {
    const auto m = match_gru_loop(q, w);
    if (m) lower(q, w, *m);
    return m.has_value();
  });
}

}  // namespace tickinfer::tfl
