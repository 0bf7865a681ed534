#pragma once
// One-shot magnitude pruning of a graph's weight matrices, for `tickinfer study`'s pruned
// variants and the tests: in every 2-D weight (a Dense kernel, an LSTM/GRU kernel or recurrent
// kernel) of at least `min_size` weights, the `share` of its groups with the smallest mean |w| is
// set to zero. A group is a 1 x 16 block (one input row x 16 consecutive output columns, aligned
// at 16: tickinfer.pruning's block=(1, 16), the engine's sparse format) or, with blocks = false,
// one weight (unstructured, tfmot's default). Ties at the cut keep the earlier group. No
// fine-tuning: the accuracy of a model pruned this way is a lower bound of what fine-tuning with
// tickinfer.pruning gives.
#include <cstddef>

#include "model/graph.hpp"

namespace tickinfer {

void magnitude_prune(Weight& w, double share, bool blocks);
Graph magnitude_pruned(Graph g, double share, bool blocks, size_t min_size = 1024);

}  // namespace tickinfer
