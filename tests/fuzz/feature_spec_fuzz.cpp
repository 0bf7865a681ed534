// libFuzzer target: arbitrary bytes as a feature specification. Parsing must either succeed or
// throw tickinfer::Error; whatever parses must be usable: a pipeline builds from it (when its
// sizes are modest) and its canonical form and id are stable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "features/feature_pipeline.hpp"
#include "features/feature_spec.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::features;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  FeatureSpec spec;
  try {
    spec = parse_feature_spec(text, "fuzz");
  } catch (const tickinfer::Error&) {
    return 0;
  }
  if (spec.width() == 0 || spec.width() > kMaxFeatures || spec.instruments.empty()) std::abort();
  if (spec.feature_set_id() != spec.feature_set_id()) std::abort();
  // Building allocates windows sized by the spec; keep the fuzzer within its memory limit.
  std::int64_t cells = 0;
  for (const auto& f : spec.features) cells += f.count + f.capacity;
  cells = cells * static_cast<std::int64_t>(spec.instruments.size()) +
          spec.window * static_cast<std::int64_t>(spec.width() * spec.instruments.size()) +
          (spec.standardize.window + 1024) * static_cast<std::int64_t>(spec.width() * spec.instruments.size());
  if (cells < 2'000'000 && spec.instruments.size() < 64) {
    FeaturePipeline p(spec);
    tickinfer::md::Quote q;
    q.instrument = spec.instruments[0];
    q.bid_price = 100;
    q.ask_price = 101;
    q.bid_size = q.ask_size = 1;
    p.on_event(tickinfer::md::Event::of(q), 0);
  }
  return 0;
}
