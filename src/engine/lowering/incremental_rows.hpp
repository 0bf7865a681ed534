#pragma once
// Incremental window updates (CompileOptions::incremental): which ops of a window-mode lowered
// graph can reuse the previous run's rows when the window moved by one time step, and which
// rows of their outputs they must recompute.
//
// When every input's rows 0..T-2 equal the previous run's rows 1..T-1 (the caller's window slid
// by one snapshot), an op whose output row t depends only on a bounded span of input rows around
// t, with weights that do not vary along time, computes for row t what it computed for row t + 1
// last run, except near the ends: at the back, the rows that read the new snapshot; at the front,
// the rows whose span reaches the zero padding before the window (their previous twin read a real
// row there). So such an op shifts its output up one row and recomputes only `front` rows at the
// start and `back` rows at the end; the counts grow along a chain by each op's span. Ops that read
// the whole window (recurrent layers, attention, Flatten into Dense, global pooling), ops strided
// in time and ops with a table that varies along time recompute everything, and so does every op
// after them. Which ops update and why the others cannot is what `inspect --plan` prints.
#include <string>
#include <vector>

#include "engine/lowering/lowered_graph.hpp"

namespace tickinfer::engine {

// How an op's work restricts to a range of time rows [r0, r1):
enum class RowForm : uint8_t {
  None,      // it cannot
  Windowed,  // Conv/Pool: output rows `steps` along the time axis (stride 1), the input whole
  Rows,      // `rows` independent rows (Dense, Softmax, Affine, LayerNorm), k per time row
  Elements,  // `out_width` elements, one contiguous block per time row (Activation, Add, Sub, Mul)
  Blocks,    // Concat: `rows` outer blocks, k per time row, in every input and the output
};

struct RowUpdate {
  bool on = false;   // recomputes front + back rows only, when the window slid
  std::string why;   // !on: why it recomputes everything
  RowForm form = RowForm::None;
  int time_rows = 0;            // T of its output
  int front = 0, back = 0;      // output rows to recompute at each end
};

// One entry per op of `g` (window mode; every entry off with the reason otherwise). Inputs must
// be sequences ([T, ...], T >= 2).
std::vector<RowUpdate> plan_row_updates(const LoweredGraph& g);

// Time rows of each tensor the analysis followed (0: not a time-major tensor it follows).
std::vector<int> tensor_time_rows(const LoweredGraph& g, const std::vector<RowUpdate>& ups);

}  // namespace tickinfer::engine
