#pragma once
// Attention as the exporters write it, folded back into one MultiHeadAttention node.
//
// SavedModel, ONNX and TFLite files spell Keras' MultiHeadAttention (and PyTorch's
// nn.MultiheadAttention) as a chain of generic ops: three projections, reshapes and transposes
// into heads, a product of two computed tensors, a scale, an optional causal mask, a softmax, a
// second product, the heads merged and an output projection. The importers lower those ops one
// by one into Graph terms (Dense, Reshape, Permute, MatMul, Add of a Constant, an affine scale,
// Activation softmax); this pass recognises the chain by following each tensor's axes through the
// views (which axis holds the sequence, the heads, the per-head features), checks every piece, and
// replaces the output projection with the MultiHeadAttention node the plans run in one step. The
// nodes left unused are dropped. A chain that does not match is left as it is (its MatMul nodes
// then run as products of their own, at the cost of the pieces attention fuses).
//
// Accepted forms, un-batched shapes, unit axes anywhere (the mask may be causal, a sliding
// window |i - j| < w, or both; a 0/1 mask multiplied in first must mark the same cells):
//   q = Dense(x_q) [T, h*k]  (+ Add of a Constant bias, before or after the split into heads)
//   k = Dense(x_k) [S, h*k], v = Dense(x_v) [S, h*v]   (biases likewise; no bias = zeros)
//   views: Reshape / Permute / Flatten nodes (and Identity) in any order
//   scores = MatMul(q as [h, T, k], k as [h, k, S]) (or k times q^T, transposed), times a
//     uniform constant (an affine BatchNorm or a Multiply by a Constant) on q, k or the scores;
//     optionally + a Constant that is 0 where row i may see column j and below -1e9 elsewhere
//   p = Activation softmax over S;  ctx = MatMul(p [h, T, S], v as [h, S, v])
//   out = Dense(ctx as [T, h*v]) with a linear activation.
#include "model/graph.hpp"

namespace tickinfer::formats {

// Rewrites every matching chain in `g` (shapes are inferred first); returns how many it fused.
int fuse_attention(Graph& g);

}  // namespace tickinfer::formats
