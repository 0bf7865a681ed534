// The converter's dilated Conv1D when the batch is dynamic (tflite/rewrite/program_rewrite.hpp):
//   SPACE_TO_BATCH_ND(x [1, L, C], block [r], paddings [[0, e]])   -> [r, (L + e) / r, C]
//   EXPAND_DIMS(axis 1)                                             -> [r, 1, ., C]
//   CONV_2D(filter [OC, 1, K, C], VALID, stride 1, dilation 1)      -> [r, 1, ., OC]
//   RESHAPE                                                         -> [r, ., OC]
//   BATCH_TO_SPACE_ND(block [r], crops [[0, e]])                    -> [1, L - (K - 1) r, OC]
// is output for output one CONV_2D with dilation r over x (each output reads the same taps in
// the same order; the padding only reaches the cropped outputs). The file's shapes of the middle
// tensors assume a batch of 1 (their shape_signature says -1), so running the chain as written
// is impossible: it is rewritten into RESHAPE, EXPAND_DIMS, the dilated CONV_2D, RESHAPE, RESHAPE
// with the middle tensors' shapes set to batch 1. Any other form is left alone (and refused at
// prepare if its shapes do not hold).
#include <cstring>
#include <map>

#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl {

namespace {

bool ints(const Program& p, int t, std::vector<int32_t>* out) {
  if (t < 0) return false;
  const Tensor& x = p.tensors[static_cast<size_t>(t)];
  if (!x.is_constant() || x.type != DType::I32) return false;
  out->resize(x.data.size() / 4);
  std::memcpy(out->data(), x.data.data(), x.data.size());
  return true;
}

// The one op reading tensor t, or nullptr.
Op* sole_reader(std::vector<Op>& ops, int t) {
  Op* found = nullptr;
  for (Op& op : ops) {
    for (int i : op.inputs) {
      if (i != t) continue;
      if (found && found != &op) return nullptr;
      found = &op;
    }
  }
  return found;
}

bool rewrite_chain(Program& p, std::vector<Op>& ops, Op& s2b) {
  std::vector<int32_t> block, pads, crops;
  if (s2b.inputs.size() != 3 || !ints(p, s2b.inputs[1], &block) || !ints(p, s2b.inputs[2], &pads)) return false;
  if (block.size() != 1 || pads.size() != 2 || pads[0] != 0 || block[0] < 2) return false;
  const int r = block[0], e = pads[1];
  const Tensor& x = p.tensors[static_cast<size_t>(s2b.inputs[0])];
  if (x.shape.size() != 3 || x.shape[0] != 1 || (x.shape[1] + e) % r != 0) return false;
  Op* expand = sole_reader(ops, s2b.outputs[0]);
  if (!expand || expand->code != OpCode::ExpandDims) return false;
  std::vector<int32_t> axis;
  if (!ints(p, expand->inputs[1], &axis) || axis.size() != 1 || (axis[0] != 1 && axis[0] != -3)) return false;
  Op* conv = sole_reader(ops, expand->outputs[0]);
  if (!conv || conv->code != OpCode::Conv2D || conv->inputs[0] != expand->outputs[0]) return false;
  const OpOptions& co = conv->options;
  if (co.padding != PaddingMode::Valid || co.stride_w != 1 || co.stride_h != 1 || co.dilation_w != 1 || co.dilation_h != 1) {
    return false;
  }
  const Tensor& filter = p.tensors[static_cast<size_t>(conv->inputs[1])];
  if (filter.shape.size() != 4 || filter.shape[1] != 1 || filter.shape[3] != x.shape[2]) return false;
  const int K = filter.shape[2], OC = filter.shape[0], L = x.shape[1];
  const int out_len = L - (K - 1) * r;
  if (out_len < 1) return false;
  Op* reshape = sole_reader(ops, conv->outputs[0]);
  if (!reshape || reshape->code != OpCode::Reshape) return false;
  Op* b2s = sole_reader(ops, reshape->outputs[0]);
  if (!b2s || b2s->code != OpCode::BatchToSpaceNd || b2s->inputs.size() != 3) return false;
  std::vector<int32_t> block2;
  if (!ints(p, b2s->inputs[1], &block2) || block2 != block || !ints(p, b2s->inputs[2], &crops)) return false;
  if (crops.size() != 2 || crops[0] != 0 || crops[1] != e) return false;
  const Tensor& y = p.tensors[static_cast<size_t>(b2s->outputs[0])];
  if (y.shape != Shape{1, out_len, OC}) return false;

  // S2B and B2S become plain copies; the middle tensors get their batch-1 shapes.
  p.tensors[static_cast<size_t>(s2b.outputs[0])].shape = {1, L, x.shape[2]};
  p.tensors[static_cast<size_t>(expand->outputs[0])].shape = {1, 1, L, x.shape[2]};
  p.tensors[static_cast<size_t>(conv->outputs[0])].shape = {1, 1, out_len, OC};
  p.tensors[static_cast<size_t>(reshape->outputs[0])].shape = {1, out_len, OC};
  s2b.code = OpCode::Reshape;
  s2b.inputs = {s2b.inputs[0]};
  s2b.options = OpOptions{};
  conv->options.dilation_w = r;
  reshape->inputs = {reshape->inputs[0]};
  b2s->code = OpCode::Reshape;
  b2s->inputs = {b2s->inputs[0]};
  b2s->options = OpOptions{};
  return true;
}

}  // namespace

int fold_dilated_convolutions(Program& p) {
  int n = 0;
  auto pass = [&](std::vector<Op>& ops) {
    for (Op& op : ops) {
      if (op.code == OpCode::SpaceToBatchNd && rewrite_chain(p, ops, op)) ++n;
    }
  };
  pass(p.ops);
  for (Subgraph& sg : p.subgraphs) pass(sg.ops);
  return n;
}

}  // namespace tickinfer::tfl

namespace tickinfer::tfl {

// After folding: a RESHAPE whose shape operand is now constant gives its output that shape (as
// TFLite resizes it), and a FULLY_CONNECTED after it the shape its input implies; in files with
// a dynamic batch the stored shapes of such tensors are placeholders (batch taken as 1).
int refresh_placeholder_shapes(Program& p) {
  int n = 0;
  for (const Op& op : p.ops) {
    if (op.outputs.size() != 1 || op.inputs.empty() || op.inputs[0] < 0) continue;
    const Tensor& in = p.tensors[static_cast<size_t>(op.inputs[0])];
    Tensor& out = p.tensors[static_cast<size_t>(op.outputs[0])];
    const int64_t count = element_count(in.shape);
    if (out.is_constant() || count <= 0) continue;
    Shape want;
    std::vector<int32_t> dims;
    if (op.code == OpCode::Reshape && op.inputs.size() == 2 && ints(p, op.inputs[1], &dims)) {
      int64_t known = 1, unknown = -1;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == -1 && unknown < 0) {
          unknown = static_cast<int64_t>(d);
        } else if (dims[d] > 0) {
          known *= dims[d];
        } else {
          known = -1;
          break;
        }
      }
      if (known <= 0 || (unknown < 0 && known != count) || (unknown >= 0 && count % known != 0)) continue;
      want.assign(dims.begin(), dims.end());
      if (unknown >= 0) want[static_cast<size_t>(unknown)] = static_cast<int>(count / known);
    } else if (op.code == OpCode::FullyConnected && op.inputs.size() >= 2 && !in.shape.empty()) {
      const Tensor& w = p.tensors[static_cast<size_t>(op.inputs[1])];
      const int k = in.shape.back();
      if (w.shape.size() != 2 || w.shape[1] != k || k <= 0 || count % k != 0) continue;
      if (op.options.keep_num_dims) {
        want = in.shape;
        want.back() = w.shape[0];
      } else {
        want = {static_cast<int>(count / k), w.shape[0]};
      }
    } else {
      continue;
    }
    if (want != out.shape && element_count(want) != element_count(out.shape)) {
      out.shape = want;
      ++n;
    }
  }
  return n;
}

}  // namespace tickinfer::tfl
