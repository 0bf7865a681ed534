#include "engine/cuda_integer_padding.hpp"

#include <algorithm>
#include <map>

namespace tickinfer::engine {
namespace {

bool is_convolution(const tfl::IntegerForm& f) {
  return f.kind == tfl::IntegerKind::Conv2D || f.kind == tfl::IntegerKind::DepthwiseConv2D;
}

// The block a padding gather places, in the convolution's view of its output ([in_h][in_w][in_c]):
// its top-left corner and extent, when the gather is exactly that (else false).
struct Block {
  int top = 0, left = 0, h = 0, w = 0;
};
bool padding_block(const tfl::IntegerForm& pad, int64_t in_elements, const tfl::IntegerForm& conv, Block* b) {
  const int H = conv.in_h, W = conv.in_w, C = conv.in_c;
  if (pad.inputs.size() != 1 || !pad.input_tables.empty() || conv.batch != 1 || pad.count != int64_t(H) * W * C)
    return false;
  int y0 = H, y1 = -1, x0 = W, x1 = -1;
  for (int64_t e = 0; e < pad.count; ++e) {
    if (pad.source_input[size_t(e)] < 0) continue;
    const int y = int(e / (int64_t(W) * C)), x = int(e / C % W);
    y0 = std::min(y0, y), y1 = std::max(y1, y), x0 = std::min(x0, x), x1 = std::max(x1, x);
  }
  if (y1 < 0) return false;
  *b = {y0, x0, y1 - y0 + 1, x1 - x0 + 1};
  if (int64_t(b->h) * b->w * C != in_elements) return false;
  for (int64_t e = 0; e < pad.count; ++e) {  // every element as the block says
    const int y = int(e / (int64_t(W) * C)), x = int(e / C % W), c = int(e % C);
    const bool inside = y >= b->top && y < b->top + b->h && x >= b->left && x < b->left + b->w;
    const int64_t want = ((int64_t(y) - b->top) * b->w + (x - b->left)) * C + c;
    if (inside ? (pad.source_input[size_t(e)] != 0 || pad.source_element[size_t(e)] != want)
               : pad.source_input[size_t(e)] >= 0)
      return false;
  }
  return true;
}

}  // namespace

std::vector<bool> fold_padding(const tfl::Program& p, std::vector<tfl::IntegerForm>& forms,
                               const std::vector<bool>& identity, const std::vector<int>& outputs) {
  std::vector<bool> folded(forms.size(), false);
  // Each tensor as the bytes it shares (an identity's output is its input's), and who writes it.
  std::map<int, int> shares;
  std::map<int, size_t> writer;
  for (size_t i = 0; i < forms.size(); ++i) {
    if (identity[i]) shares[forms[i].output] = forms[i].inputs[0];
    writer[forms[i].output] = i;
  }
  auto root = [&](int t) {
    for (auto it = shares.find(t); it != shares.end(); it = shares.find(t)) t = it->second;
    return t;
  };
  std::map<int, int> readers;  // by root tensor: the forms (not identities) that read it
  for (size_t i = 0; i < forms.size(); ++i)
    if (!identity[i])
      for (int t : forms[i].inputs) ++readers[root(t)];
  for (int t : outputs) ++readers[root(t)];
  for (tfl::IntegerForm& conv : forms) {
    if (!is_convolution(conv)) continue;
    const int t = root(conv.inputs[0]);
    const auto w = writer.find(t);
    if (w == writer.end() || readers[t] != 1) continue;
    const tfl::IntegerForm& pad = forms[w->second];
    if (pad.kind != tfl::IntegerKind::Gather || identity[w->second] || int32_t(pad.fill) + conv.in_offset != 0) continue;
    Block b;
    if (!padding_block(pad, tfl::element_count(p.tensors[size_t(pad.inputs[0])].shape), conv, &b)) continue;
    conv.inputs[0] = pad.inputs[0];
    conv.in_h = b.h, conv.in_w = b.w;
    conv.pad_h += b.top, conv.pad_w += b.left;
    folded[w->second] = true;
  }
  return folded;
}

}  // namespace tickinfer::engine
