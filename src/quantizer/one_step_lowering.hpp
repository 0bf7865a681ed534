#pragma once
// LowerOptions::one_step_per_call's graph edit (quantizer/lower_graph.cpp): every input a
// sequence [T, F] made [1, F], after the checks that keep the program one that stream mode runs
// (engine/program_plan.cpp: every input one tick, some state) and equal to the model tick by tick
// (check_streamable). Throws tickinfer::Error naming the input or layer otherwise.
#include "model/graph.hpp"

namespace tickinfer::quantizer {

void one_step_inputs(Graph& g);

}  // namespace tickinfer::quantizer
