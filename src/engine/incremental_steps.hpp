#pragma once
// The CPU plan's side of incremental window updates (engine/lowering/incremental_rows.hpp): each
// updating step restricted to its first and last rows, built at compile time so a slide runs
// the ordinary step code on a narrower range (engine/graph_plan_run.cpp).
#include <vector>

#include "engine/lowering/incremental_rows.hpp"
#include "engine/plan_layout.hpp"

namespace tickinfer::engine {

// `s` (emitted for `op`) restricted to output time rows [r0, r1): the same kernel over fewer
// rows, tensor references moved to row r0 and, for convolutions and pooling, the top padding
// moved so rows before r0 are read as the data they are. `time_rows` per tensor
// (tensor_time_rows).
Step restrict_to_rows(const Step& s, const LoweredOp& op, const RowUpdate& u, const LoweredGraph& g,
                      const std::vector<int>& time_rows, int r0, int r1);

// The IncrementalStep of step `s` (op `op`, its update `u`).
IncrementalStep make_increment(const Step& s, const LoweredOp& op, const RowUpdate& u, const LoweredGraph& g,
                               const std::vector<int>& time_rows);

}  // namespace tickinfer::engine
