// libFuzzer: the --cuda-precision spec (FORMAT[,LAYER=FORMAT...], FORMAT = W or W/A) on arbitrary bytes. Anything may
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
    const tickinfer::engine::StorageFormats f = tickinfer::engine::parse_cuda_precision(text);
    const tickinfer::engine::StorageFormats again =
        tickinfer::engine::parse_cuda_precision(tickinfer::engine::cuda_precision_spec(f));
    if (again.all != f.all || again.by_layer != f.by_layer) std::abort();
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
