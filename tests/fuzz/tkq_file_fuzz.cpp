// libFuzzer target: arbitrary bytes as a .tkq file. Loading must either succeed or throw
// tickinfer::Error (never crash, hang or over-allocate). Each input is tried twice: as given,
// and with both CRC-32s recomputed, because random mutations almost never keep a checksum
// valid and the structural checks behind it are what needs the exploring. Whatever loads must
// serialize and load again to the same bytes, and is then prepared by the interpreter and run
// once, as tflite_run_fuzz does (prepare either succeeds or throws; invoke never crashes): a
// .tkq reaches ops no .tflite can name (SEQUENCE_GRU) with operands of its own choosing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <memory>

#include "formats/tkq/tkq_file.hpp"
#include "tflite/interpreter.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace {

void try_load(const uint8_t* data, size_t size) {
  using namespace tickinfer::formats;
  tickinfer::tfl::Program p;
  try {
    p = load_tkq(data, size, "fuzz");
  } catch (const tickinfer::Error&) {
    return;
  }
  const auto bytes = serialize_tkq(p);
  const auto again = serialize_tkq(load_tkq(bytes.data(), bytes.size(), "fuzz-round-trip"));
  if (again != bytes) std::abort();
  try {
    tickinfer::tfl::InterpreterOptions options;
    options.isa = "scalar";
    tickinfer::tfl::Interpreter interp(std::make_shared<const tickinfer::tfl::Program>(std::move(p)), options);
    if (interp.macs() > 50'000'000 || interp.arena_bytes() > (64u << 20)) return;  // keep runs short
    for (size_t i = 0; i < interp.num_inputs(); ++i) {
      const tickinfer::tfl::Tensor& t = interp.input_tensor(i);
      const int64_t n = tickinfer::tfl::element_count(t.shape);
      if (n > 0 && interp.input_data(i)) std::memset(interp.input_data(i), 0x3c, static_cast<size_t>(n) * tickinfer::tfl::dtype_size(t.type));
    }
    interp.invoke();
  } catch (const tickinfer::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try_load(data, size);
  if (size >= 64) {
    std::vector<uint8_t> sealed(data, data + size);
    const uint32_t payload = tickinfer::stats::crc32(sealed.data() + 64, size - 64);
    std::memcpy(sealed.data() + 36, &payload, 4);
    const uint32_t header = tickinfer::stats::crc32(sealed.data(), 60);
    std::memcpy(sealed.data() + 60, &header, 4);
    try_load(sealed.data(), sealed.size());
  }
  return 0;
}
