// Fusing a float LEAKY_RELU into the CONV_2D before it (program_rewrite.hpp, fuse_leaky_relu).
// DeepLOB-style stacks put one after every convolution: as its own op it reads and writes the
// whole feature map once more; fused, the convolution's epilogue applies the same formula to each
// value while it is in a register (ops/conv_patch.hpp, leaky), so the outputs keep their bits.
#include <set>
#include <vector>

#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl {

int fuse_leaky_relu(Program& p) {
  // Readers of every tensor in every subgraph (a loop body reads its own tensors, but counting
  // them all costs nothing and keeps the rule simple), the main-graph op reading each, and the
  // model outputs.
  std::vector<int> readers(p.tensors.size(), 0), main_reader(p.tensors.size(), -1);
  auto count = [&](const std::vector<Op>& ops, bool main) {
    for (size_t i = 0; i < ops.size(); ++i)
      for (int t : ops[i].inputs) {
        if (t < 0 || static_cast<size_t>(t) >= readers.size()) continue;
        ++readers[static_cast<size_t>(t)];
        if (main) main_reader[static_cast<size_t>(t)] = static_cast<int>(i);
      }
  };
  count(p.ops, true);
  for (const Subgraph& sg : p.subgraphs) count(sg.ops, false);
  const std::set<int> outputs(p.outputs.begin(), p.outputs.end());
  const auto f32 = [&](int t) { return t >= 0 && p.tensors[static_cast<size_t>(t)].type == DType::F32; };

  std::vector<bool> fused(p.ops.size(), false);
  int n = 0;
  for (Op& conv : p.ops) {
    if (conv.code != OpCode::Conv2D || conv.outputs.size() != 1 || conv.options.fused_leaky_relu) continue;
    const int t = conv.outputs[0];
    const auto ti = static_cast<size_t>(t);
    if (!f32(t) || readers[ti] != 1 || main_reader[ti] < 0 || outputs.count(t) || p.tensors[ti].is_variable) continue;
    const Op& leaky = p.ops[static_cast<size_t>(main_reader[ti])];
    if (leaky.code != OpCode::LeakyRelu || leaky.inputs.size() != 1 || leaky.outputs.size() != 1) continue;
    const int out = leaky.outputs[0];
    if (!f32(out) || p.tensors[static_cast<size_t>(out)].shape != p.tensors[ti].shape) continue;
    conv.outputs[0] = out;
    conv.options.fused_leaky_relu = true;
    conv.options.alpha = leaky.options.alpha;
    fused[static_cast<size_t>(main_reader[ti])] = true;
    ++n;
  }
  if (n == 0) return 0;
  std::vector<Op> kept;
  kept.reserve(p.ops.size() - static_cast<size_t>(n));
  for (size_t i = 0; i < p.ops.size(); ++i)
    if (!fused[i]) kept.push_back(std::move(p.ops[i]));
  p.ops = std::move(kept);
  return n;
}

}  // namespace tickinfer::tfl
