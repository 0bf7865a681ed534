// One step per call: see one_step_lowering.hpp.
#include "quantizer/one_step_lowering.hpp"

#include <string>

#include "model/stream_check.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

void one_step_inputs(Graph& g) {
  check_streamable(g);
  bool recurrent = false;
  for (const Node& n : g.nodes) recurrent = recurrent || n.kind == OpKind::LSTM || n.kind == OpKind::GRU;
  if (!recurrent) {
    throw Error("one step per call (--stream): the model has no recurrent layer, so no state to carry from tick to "
                "tick; quantize it for window mode");
  }
  for (int i : g.inputs) {
    Node& input = g.nodes.at(static_cast<size_t>(i));
    if (input.shape.size() != 2) {
      throw Error("one step per call (--stream): input '" + input.name + "' is " + shape_str(input.shape) +
                  ", not a sequence [timesteps, features]; stream mode takes one tick of every input per call");
    }
    input.shape[0] = 1;
  }
}

}  // namespace tickinfer::quantizer
