// libFuzzer target: arbitrary bytes as a CSV tick file, read to the end and run through a feature
// pipeline. Reading must either deliver ticks or throw tickinfer::Error; every delivered tick
// must be handled by the pipeline (valid or counted as invalid), never crash it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "features/feature_pipeline.hpp"
#include "features/tick_source.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::features;
  static const FeatureSpec spec = parse_feature_spec(
      "[feature_set]\ninstruments = [1, 2]\nbar_ns = 10\ngap_limit = 3\ninvalid_policy = \"mark_invalid\"\nwindow = 4\n"
      "[standardize]\nmode = \"rolling\"\nwindow = 8\nrefit_every = 2\n"
      "[[feature]]\nkind = \"microprice\"\n[[feature]]\nkind = \"realized_vol\"\nwindow_ns = 50\ncapacity = 8\n"
      "[[feature]]\nkind = \"vwap_deviation\"\ntrades = 3\n[[feature]]\nkind = \"tick_rate\"\nwindow_ns = 30\ncapacity = 4\n",
      "fuzz-spec");
  FeaturePipeline::Options opt;
  opt.synchronous_refit = true;
  FeaturePipeline pipeline(spec, opt);
  CsvTickSource source(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  std::uint64_t delivered = 0;
  try {
    SourceTick t;
    while (source.next(t)) {
      pipeline.on_tick(t, 0);
      ++delivered;
    }
  } catch (const tickinfer::Error&) {
  }
  pipeline.finish();
  const auto& c = pipeline.counters();
  if (c.events != delivered || c.accepted + c.invalid_total() + c.unknown_instrument != delivered) std::abort();
  return 0;
}
