// libFuzzer: the --cuda-precision spec (FORMAT[,LAYER=FORMAT...]) on arbitrary bytes. Anything may
// be refused with tickinfer::Error; what is accepted must print back as a spec that parses to the
// same formats. Nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/cuda_program_lowering.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const tickinfer::engine::WeightFormats f = tickinfer::engine::parse_weight_formats(text);
    const tickinfer::engine::WeightFormats again =
        tickinfer::engine::parse_weight_formats(tickinfer::engine::weight_formats_spec(f));
    if (again.all != f.all || again.by_layer != f.by_layer) std::abort();
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
