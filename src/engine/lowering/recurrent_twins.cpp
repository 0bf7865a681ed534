// share_recurrent_twins() (lowered_graph.hpp): one recurrence where a graph runs the same layer
// more than once (ONNX files read an LSTM's Y and Y_h, or Y and a Slice of its last step, and the
// importers lower each output on its own).
#include "engine/lowering/lowered_graph.hpp"

namespace tickinfer::engine {

namespace {

bool same_weights(const std::vector<Weight>& a, const std::vector<Weight>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape != b[k].shape || a[k].data != b[k].data) return false;
  }
  return true;
}

// Whether `a` and `b` run the same recurrence over the same input (whatever each returns).
bool same_layer(const Node& a, const Node& b) {
  return a.kind == b.kind && !a.return_state && !b.return_state && a.inputs == b.inputs && a.units == b.units &&
         a.activation == b.activation && a.recurrent_activation == b.recurrent_activation &&
         a.reset_after == b.reset_after && a.cell_clip == b.cell_clip && same_weights(a.weights, b.weights);
}

}  // namespace

int share_recurrent_twins(Graph& g) {
  int shared = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& later = g.nodes[i];
    if (later.kind != OpKind::LSTM && later.kind != OpKind::GRU) continue;
    for (size_t j = 0; j < i; ++j) {
      const Node& earlier = g.nodes[j];
      // The same output: the earlier node's. The last step of an earlier sequence: its last row.
      // (An earlier last step cannot give a later sequence.)
      const bool same_output = earlier.return_sequences == later.return_sequences;
      if (!same_layer(earlier, later) || !(same_output || earlier.return_sequences)) continue;
      // It keeps its name, so outputs and errors that name it still do.
      Node row;
      row.name = later.name;
      row.keras_class = later.keras_class;
      row.origin = later.origin;
      row.kind = same_output ? OpKind::Identity : OpKind::SliceRows;
      row.slice_begin = -1;
      row.slice_end = 0;
      row.keepdims = false;
      row.inputs = {static_cast<int>(j)};
      row.shape = later.shape;
      later = std::move(row);
      ++shared;
      break;
    }
  }
  return shared;
}

}  // namespace tickinfer::engine
