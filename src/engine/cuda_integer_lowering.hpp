#pragma once
// A full-integer TFLite / .tkq program's ops as the CUDA backend's integer program
// (cuda/integer_program.hpp): each op's integer form (tflite/integer_form.hpp, the prepared
// op's own parameters, multipliers, tables and copy plans) placed on one byte arena and one parameter
// buffer.
#include <string>
#include <vector>

#include "cuda/integer_program.hpp"
#include "tflite/interpreter.hpp"

namespace tickinfer::engine {

// The given ops of the interpreter's program, in order (prepared with isa "scalar", so
// FULLY_CONNECTED and CONV_2D describe their reference kernels). `inputs` / `outputs`: the int8
// tensors the host writes before the run and reads after it. Throws tickinfer::Error naming the first op without
// an integer form (UNIDIRECTIONAL_SEQUENCE_LSTM, SOFTMAX, float ops ...) or a tensor that is
// neither an input nor written by an earlier op.
cuda::IntegerProgram integer_program_from(const tfl::Interpreter& interp, const std::vector<size_t>& ops,
                                          const std::vector<int>& inputs, const std::vector<int>& outputs,
                                          const std::string& name);

}  // namespace tickinfer::engine
