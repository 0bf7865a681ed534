// libFuzzer target: arbitrary bytes as a .tflite file that, when it loads as a full-integer
// program, is made the CUDA backend's integer program (every op's integer form placed on one
// arena, engine/cuda_integer_lowering.cpp) and run once by its host executor. Lowering either
// succeeds or throws tickinfer::Error naming what it refuses; the program's own check
// (cuda::integer_program_error) must keep every step inside its arena and parameters, so a run
// never reads or writes outside them whatever the file says. Seeded with the int8 fixtures.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/cuda_plan.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer;
  try {
    auto program = std::make_shared<const tfl::Program>(formats::load_tflite(data, size, "fuzz.tflite"));
    auto plan = engine::compile_cuda_integer_on_host(program, CompileOptions{}, false);
    if (plan->flops() > 100'000'000) return 0;  // keep runs short
    std::vector<std::vector<float>> in;
    std::vector<std::vector<float>> out;
    std::vector<const float*> in_ptrs;
    std::vector<float*> out_ptrs;
    for (const Shape& s : plan->input_shapes()) in.emplace_back(size_t(shape_size(s)), 0.25f);
    for (const Shape& s : plan->output_shapes()) out.emplace_back(size_t(shape_size(s)), 0.0f);
    for (auto& v : in) in_ptrs.push_back(v.data());
    for (auto& v : out) out_ptrs.push_back(v.data());
    plan->run(in_ptrs.data(), out_ptrs.data());
  } catch (const Error&) {
  }
  return 0;
}
