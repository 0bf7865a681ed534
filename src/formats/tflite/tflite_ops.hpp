#pragma once
// TFLite operators -> tfl::OpCode and builtin options -> tfl::OpOptions.
#include <optional>
#include <string>

#include "tflite/program.hpp"

namespace tflite {
struct Operator;
}

namespace tickinfer::formats {

// The OpCode a TFLite builtin operator code runs as, or nothing when the interpreter has no
// kernel for it.
std::optional<tfl::OpCode> tflite_op_code(int builtin_code);

// Reads the builtin options `code` uses. A missing options table means all defaults, as in
// TFLite. Throws tickinfer::Error starting with `where` (e.g. "m.tflite: op 2 (FULLY_CONNECTED
// 'dense')") for an option value the interpreter cannot honour (shuffled weights, diagonal
// recurrent LSTM weights, batched GATHER, out-of-range enums, non-positive strides).
tfl::OpOptions read_tflite_options(const tflite::Operator& op, tfl::OpCode code, const std::string& where);

}  // namespace tickinfer::formats
