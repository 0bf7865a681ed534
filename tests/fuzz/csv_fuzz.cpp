// libFuzzer target: arbitrary bytes as CSV text. Parsing must either succeed or throw
// tickinfer::Error; whatever parses must survive a write/read round trip (same width, same
// values bit for bit, NaN as NaN).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "formats/csv.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::formats;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CsvTable table;
  try {
    table = parse_csv(text, "fuzz");
  } catch (const tickinfer::Error&) {
    return 0;
  }
  // Header names may hold line breaks only if quoted, and quoted fields cannot span lines, so
  // every parsed name can be written back.
  const std::string written = format_csv(table.rows, table.cols, table.values, table.header);
  const CsvTable again = parse_csv(written, "fuzz-round-trip",
                                   table.header.empty() ? CsvHeader::Absent : CsvHeader::Present);
  if (again.rows != table.rows || again.header != table.header ||
      (table.rows > 0 && again.cols != table.cols)) {
    std::abort();
  }
  for (size_t i = 0; i < table.values.size(); ++i) {
    const float a = table.values[i], b = again.values[i];
    if (std::isnan(a) ? !std::isnan(b) : std::memcmp(&a, &b, sizeof a) != 0) std::abort();
  }
  return 0;
}
