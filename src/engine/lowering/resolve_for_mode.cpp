// resolve_for_mode() (lowered_graph.hpp): a graph's unknown lengths filled and its shapes inferred
// for one recurrent mode, before lowering.
#include "engine/lowering/lowered_graph.hpp"
#include "engine/stream_check.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {

// Substitutes unknown sequence lengths and, in stream mode, makes every sequence input one
// step long.
Graph resolve_for_mode(const Graph& src, const CompileOptions& opt) {
  Graph g = src;
  for (int idx : g.inputs) {
    Node& in = g.nodes[idx];
    const bool sequence = in.shape.size() == 2;
    if (opt.mode == RecurrentMode::Stream && sequence) {
      in.shape[0] = 1;
    }
    if (sequence && in.shape[0] < 1 && opt.window_length > 0) in.shape[0] = opt.window_length;
    for (int& d : in.shape) {
      if (d < 1) {
        throw Error("input '" + in.name + "' has shape " + shape_str(in.shape) +
                    " with an unknown dimension; set a window length (CompileOptions::window_length, "
                    "--window) or use stream mode");
      }
    }
  }
  infer_shapes(g);
  if (opt.mode == RecurrentMode::Stream) check_streamable(g);
  return g;
}

}  // namespace tickinfer::engine
