#pragma once
// Recognition of the cell a recurrent While loop runs (Keras 3 `While` over TensorLists, tf_keras
// `StatelessWhile` inside standard_lstm / standard_gru). The loop's body is run by a small
// interpreter on sample values and compared with the engine's own LSTM / GRU cell definitions
// (Keras gate orders i,f,c,o and z,r,h; reset_after both ways) for each candidate pair of
// activations; only an exact match (to 1e-6: the candidates hold float32 constants such as 1/6) is accepted.
#include <string>
#include <vector>

#include "formats/savedmodel/tf_tensor.hpp"
#include "model/graph.hpp"

namespace tensorflow {
class FunctionDef;
}

namespace tickinfer::formats {

// A loop variable as the interpreter sees it.
struct LoopVar {
  enum class Role : uint8_t { Scalar, Input, Output, State, Weight } role = Role::Scalar;
  TfTensor tensor;                   // Scalar, State (initial value), Weight
  std::vector<TfTensor> items;       // Input list (filled with samples by the checker)
  bool resource = false;             // Weight passed as a variable handle (read in the body)
};

struct RecognisedCell {
  OpKind kind = OpKind::LSTM;
  int units = 0;
  bool reset_after = true;
  ActivationSpec activation, recurrent_activation;
  std::vector<Weight> weights;  // Keras layouts: kernel, recurrent kernel, bias
  int h_var = -1, c_var = -1;   // loop variable indices of the states
};

// Runs `body` once on `vars` (Input items and States as given) and returns the new loop vars.
std::vector<LoopVar> run_loop_body(const tensorflow::FunctionDef& body, const std::vector<LoopVar>& vars,
                                   const std::string& where);

// Finds the LSTM / GRU cell `body` computes. `features` is the input width. Throws
// tickinfer::Error starting with `where` if no candidate matches.
RecognisedCell recognise_cell(const tensorflow::FunctionDef& body, const std::vector<LoopVar>& vars, int64_t features,
                              const std::string& where);

}  // namespace tickinfer::formats
