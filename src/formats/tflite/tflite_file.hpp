#pragma once
// Reads a TFLite model (.tflite flatbuffer, schema/tflite.fbs) into a tfl::Program, one tensor
// and one op per TFLite tensor and operator of subgraph 0, in the file's execution order.
//
// Errors: every problem throws tickinfer::Error whose message starts with `label` and names the
// tensor or op at fault, e.g.
//   "m.tflite: op 3 (CUSTOM): custom op 'FlexErf' is not supported".
// A file that fails the flatbuffers verifier gives "<label>: not a valid TFLite flatbuffer (...)".
// Beyond the verifier, the loader checks buffer, tensor and opcode indices, constant data sizes,
// shapes and quantization parameters, and refuses what the interpreter cannot run (external or
// sparse data, custom ops, IF, options such as shuffled weights). Control flow by WHILE and CALL_ONCE
// loads: its subgraphs follow the main graph's (tflite/program.hpp). Hostile input never
// crashes it. Thread-safe (no shared state).
#include <cstddef>
#include <string>

#include "tflite/program.hpp"

namespace tickinfer::formats {

// True when the bytes carry the TFLite file identifier "TFL3" at offset 4.
bool is_tflite(const void* data, size_t size);

// Parses and validates (tfl::validate) the whole file; the Program owns copies of all
// constant data, so `data` may be freed afterwards.
tfl::Program load_tflite(const void* data, size_t size, const std::string& label);

}  // namespace tickinfer::formats
