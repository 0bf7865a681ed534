// libFuzzer: the pipeline's binary readers on arbitrary bytes: the signal message decoder and the
// decision log parser. Invariants: never crash; a decoded signal re-encodes to the same 96 bytes;
// a parsed log's valid prefix re-parses to the same records.
#include <cstdint>
#include <cstring>

#include "pipeline/decision_log.hpp"
#include "pipeline/signal_format.hpp"
#include "tickinfer/error.hpp"

using namespace tickinfer::pipeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Signal s;
  if (decode_signal(data, size, s) == SignalStatus::Ok) {
    std::uint8_t again[kSignalBytes];
    encode_signal(s, again);
    if (std::memcmp(again, data, kSignalBytes) != 0) __builtin_trap();
  }
  try {
    const DecisionLogContents c = parse_decision_log(data, size, "fuzz");
    if (c.valid_bytes > size) __builtin_trap();
    const DecisionLogContents d = parse_decision_log(data, c.valid_bytes, "prefix");
    if (d.torn_tail || d.decisions.size() != c.decisions.size() || d.models.size() != c.models.size()) __builtin_trap();
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
