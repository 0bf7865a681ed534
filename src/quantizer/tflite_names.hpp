#pragma once
// The quantizer reads and writes tensor programs (src/tflite/): it lowers a Keras Graph into one,
// runs it to calibrate and evaluate, and emits the quantized one. These are the tensor-program
// names it uses unqualified, declared once here; nothing in src/tflite/ depends on the quantizer.
#include "tflite/interpreter.hpp"
#include "tflite/program.hpp"
#include "tflite/program_builder.hpp"

namespace tickinfer::quantizer {

using tfl::DType;
using tfl::FusedActivation;
using tfl::Interpreter;
using tfl::InterpreterOptions;
using tfl::Op;
using tfl::OpCode;
using tfl::PaddingMode;
using tfl::Precision;
using tfl::Program;
using tfl::ProgramBuilder;
using tfl::QuantParams;
using tfl::Shape;
using tfl::Tensor;
using tfl::dtype_name;
using tfl::element_count;
using tfl::op_name;
using tfl::precision_name;
using tfl::validate;

}  // namespace tickinfer::quantizer
