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
  // them all costs nothing and keeps the rule simple), and the model outputs.
  std::vector<int> readers(p.tensors.size(), 0);
  auto count = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops)
      for (int t : op.inputs)
        if (t >= 0 && static_cast<size_t>(t) < readers.size()) ++readers[static_cast<size_t>(t)];
  };
  count(p.ops);
  for (const Subgraph& sg : p.subgraphs) count(sg.ops);
  const std::set<int> outputs(p.outputs.begin(), p.outputs.end());
  const auto f32 = [&](int t) { return t >= 0 && p.tensors[static_cast<size_t>(t)].type == DType::F32; };

  std::vector<bool> fused(p.ops.size(), false);
  int n = 0;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    Op& conv = p.ops[i];
    if (conv.code != OpCode::Conv2D || conv.outputs.size() != 1 || conv.options.fused_leaky_relu) continue;
    const int t = conv.outputs[0];
    if (!f32(t) || readers[static_cast<size_t>(t)] != 1 || outputs.count(t) || p.tensors[static_cast<size_t>(t)].is_variable) {
      continue;
    }
    for (size_t j = i + 1; j < p.ops.size(); ++j) {
      const Op& leaky = p.ops[j];
      if (leaky.code != OpCode::LeakyRelu || leaky.inputs.size() != 1 || leaky.inputs[0] != t) continue;
      const int out = leaky.outputs.size() == 1 ? leaky.outputs[0] : -1;
      if (f32(out) && p.tensors[static_cast<size_t>(out)].shape == p.tensors[static_cast<size_t>(t)].shape) {
        conv.outputs[0] = out;
        conv.options.fused_leaky_relu = true;
        conv.options.alpha = leaky.options.alpha;
        fused[j] = true;
        ++n;
      }
      break;
    }
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
