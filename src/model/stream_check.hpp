#pragma once
#include "model/graph.hpp"

namespace tickinfer {

// Stream mode feeds one time step per call and keeps recurrent state, which equals the trained
// model only if no layer looks across time steps other than through its recurrent state. Throws
// tickinfer::Error naming the first layer that does (Conv1D, pooling, Flatten, Reshape or a
// concatenation along the time axis applied to a sequence), or when the model has no sequence
// input at all. Used by the graph plans' stream mode (engine/lowering/resolve_for_mode.cpp) and
// by the quantizer's tick-by-tick lowering (quantizer/lower_graph.cpp, LowerOptions::one_step_per_call).
void check_streamable(const Graph& graph);

}  // namespace tickinfer
