// resolve_for_mode() (lowered_graph.hpp): a graph's unknown lengths filled and its shapes inferred
// for one recurrent mode, before lowering.
#include "engine/lowering/lowered_graph.hpp"

#include <exception>

#include "model/stream_check.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {

namespace {

// Throws stream mode's refusal of `src` at its own window length (or the options', where the
// graph leaves it free), if it infers there and stream mode refuses it.
void refuse_unstreamable_window(const Graph& src, int window_length) {
  Graph whole = src;
  for (int idx : whole.inputs) {
    Node& in = whole.nodes[idx];
    if (in.shape.size() == 2 && in.shape[0] < 1 && window_length > 0) in.shape[0] = window_length;
  }
  try {
    infer_shapes(whole);
  } catch (const Error&) {
    return;  // no window the graph infers at (an unknown length): nothing to check
  }
  check_streamable(whole);
}

}  // namespace

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
  if (opt.mode == RecurrentMode::Window) share_recurrent_twins(g);
  std::exception_ptr failed;
  try {
    infer_shapes(g);
  } catch (const Error&) {
    if (opt.mode != RecurrentMode::Stream) throw;
    failed = std::current_exception();
  }
  if (failed) {
    // A graph exported for its own window (a Reshape to a fixed length) need not infer at one
    // step; where stream mode refuses one of its layers anyway, that refusal is the error.
    refuse_unstreamable_window(src, opt.window_length);
    std::rethrow_exception(failed);
  }
  if (opt.mode == RecurrentMode::Stream) check_streamable(g);
  return g;
}

}  // namespace tickinfer::engine
