#pragma once
// What the interpreter does to a Program before preparing its ops (tensor indices are kept, and
// op indices but for a fused LEAKY_RELU; tensors are only appended or given data):
//  - resource variables: each (container, shared_name) pair of the VAR_HANDLE ops of every
//    subgraph becomes one variable tensor (is_variable: zeroed by reset_state, kept between
//    invokes otherwise), and READ_VARIABLE / ASSIGN_VARIABLE read / write it instead of the
//    handle (also through WHILE loop variables that carry the handle);
//  - dilated convolutions: see fold_dilated_convolutions below;
//  - TensorList writes: see rewrite_tensor_list_writes below;
//  - recognised LSTM loops: see lower_lstm_loops below (after folding);
//  - folding: an op whose inputs are all constant (SHAPE: whose input's shape is static, which
//    every shape here is) is run once now, with its own kernel, and its outputs become
//    constants; the op is then a no-op at eval (prepare_op sees constant outputs). Repeated in
//    op order, so chains (SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE's shape) fold whole;
//  - a LEAKY_RELU after a convolution: see fuse_leaky_relu below (InterpreterOptions::
//    fuse_activations).
// The result is `program` itself when nothing applies, else a rewritten copy.
#include <memory>

#include "tflite/prepared_op.hpp"
#include "tflite/program.hpp"

namespace tickinfer::tfl {

std::shared_ptr<const Program> rewrite_for_interpreter(std::shared_ptr<const Program> program,
                                                       const InterpreterOptions& options,
                                                       ::tickinfer::kernels::Isa isa);

// The passes, for tests: each returns how many variables / ops it rewrote.
int lower_resource_variables(Program& p);
// The converter's TensorList "set item" (CONCATENATION of two runtime-sized SLICEs around the
// new row, in recurrent loop bodies) becomes DYNAMIC_UPDATE_SLICE (program_list_write.cpp).
int rewrite_tensor_list_writes(Program& p);
// A main-graph WHILE that is exactly a float Keras 3 LSTM layer gets a subgraph holding one
// UNIDIRECTIONAL_SEQUENCE_LSTM with its weights cut per gate, named by Op::options.
// lowered_subgraph; the interpreter runs that instead of the loop (lstm_loop.cpp).
int lower_lstm_loops(Program& p);
// The same for a WHILE that is exactly a Keras GRU layer (gru_loop.hpp), float or dynamic-range:
// one time-major SEQUENCE_GRU (gru_loop_lowering.cpp). Its loop variables are [step, t, buffer,
// h, x].
int lower_gru_loops(Program& p);
// Where a lowered LSTM loop keeps its variables: [step, t, buffer, h, c, x] (a layer whose
// output the model reads), or [step, t, h, c, x] (one whose final state alone is read: an
// encoder with return_state); buffer = -1 then.
struct LstmLoopVars {
  int buffer, h, c, x;
};
inline LstmLoopVars lstm_loop_vars(size_t variables) {
  return variables == 5 ? LstmLoopVars{-1, 2, 3, 4} : LstmLoopVars{2, 3, 4, 5};
}
// A float LEAKY_RELU that alone reads a float-output CONV_2D's output (not a model output) leaves
// the program: the conv writes its output and applies it (OpOptions::fused_leaky_relu;
// program_fuse_leaky.cpp). Main graph only; the ops after it move up one index.
int fuse_leaky_relu(Program& p);
// PAD + SPACE_TO_BATCH_ND + EXPAND_DIMS + CONV_2D + RESHAPE + BATCH_TO_SPACE_ND (a dilated Conv1D
// converted with a dynamic batch) -> one CONV_2D with the dilation (program_dilated_conv.cpp).
int fold_dilated_convolutions(Program& p);
// After folding, RESHAPE outputs take their (now constant) shape operand and FULLY_CONNECTED
// outputs the shape their input implies, where the file stored a dynamic-batch placeholder.
int refresh_placeholder_shapes(Program& p);
int fold_constant_ops(Program& p, const InterpreterOptions& options, ::tickinfer::kernels::Isa isa);

}  // namespace tickinfer::tfl
