#pragma once
// The weight and window arithmetic lower_for_plan.cpp applies to a graph's nodes: fused clamps,
// BatchNorm as a per-channel affine, column slices and side-by-side joins of (K x N) weights,
// and TensorFlow's left padding.
#include <initializer_list>
#include <vector>

#include "engine/lowering/lowered_graph.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {

// A relu that a clamp expresses exactly (lo, hi), or linear (+-inf); false for anything else.
bool clamp_for(const ActivationSpec& a, float& lo, float& hi);
// BatchNorm as y = x * scale + shift, per channel.
void bn_affine(const Node& bn, std::vector<float>& scale, std::vector<float>& shift);
// Columns [c0, c0 + n) of a (K x N) row-major weight.
Matrix columns(const Weight& w, int c0, int n);
Matrix matrix(std::vector<float> data, int rows, int cols);
// Left padding as TensorFlow chooses it: SAME splits the total with the extra on the right;
// causal pads the whole receptive field on the left.
int pad_left(Padding p, int len, int out_len, int span, int stride);
// Kernel (K x N) and bias with a following BatchNorm (nullptr: none) folded in: W' = W * scale
// (per column), b' = b * scale + shift.
void fold_batch_norm(const Node* bn, std::vector<float>& w, std::vector<float>& b, int N);
// A binary op (Add, Subtract, Multiply) with a constant operand `c` (tensor_side: which operand is
// the tensor) as x * scale + shift: x + c = x * 1 + c, x - c = x * 1 + (-c), c - x = x * -1 + c,
// x * c = x * c + 0; each one rounding, as the op itself.
void constant_operand_affine(OpKind kind, size_t tensor_side, const std::vector<float>& c, std::vector<float>& scale,
                             std::vector<float>& shift);
// Row-wise concatenation of weights of equal row counts ((K x N_i) -> K x sum N_i), in order.
Matrix side_by_side(std::initializer_list<const Weight*> parts);
// The values of `parts`, one after another.
std::vector<float> joined(std::initializer_list<const Weight*> parts);

}  // namespace tickinfer::engine
