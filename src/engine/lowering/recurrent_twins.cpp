// share_recurrent_twins() (lowered_graph.hpp): one recurrence where a graph runs the same layer
// twice, once for its sequence and once for its last step (ONNX files read an LSTM's Y and Y_h,
// or Y and a Slice of its last step, and the importers lower each output on its own).
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

// Whether `seq` computes every step of what `last` computes the last step of.
bool twins(const Node& seq, const Node& last) {
  return seq.kind == last.kind && seq.return_sequences && !last.return_sequences && !seq.return_state &&
         !last.return_state && seq.inputs == last.inputs && seq.units == last.units &&
         seq.activation == last.activation && seq.recurrent_activation == last.recurrent_activation &&
         seq.reset_after == last.reset_after && seq.cell_clip == last.cell_clip && same_weights(seq.weights, last.weights);
}

}  // namespace

int share_recurrent_twins(Graph& g) {
  int shared = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& last = g.nodes[i];
    if (last.kind != OpKind::LSTM && last.kind != OpKind::GRU) continue;
    for (size_t j = 0; j < i; ++j) {
      if (!twins(g.nodes[j], last)) continue;
      // The twin becomes the sequence's last row; it keeps its name, so outputs and errors that
      // name it still do.
      Node row;
      row.name = last.name;
      row.keras_class = last.keras_class;
      row.origin = last.origin;
      row.kind = OpKind::SliceRows;
      row.slice_begin = -1;
      row.slice_end = 0;
      row.keepdims = false;
      row.inputs = {static_cast<int>(j)};
      row.shape = last.shape;
      last = std::move(row);
      ++shared;
      break;
    }
  }
  return shared;
}

}  // namespace tickinfer::engine
