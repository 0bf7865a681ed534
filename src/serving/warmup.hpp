#pragma once
// Warmup of a freshly loaded version before it takes traffic, as TF Serving does it:
// `<version>/assets.extra/tf_serving_warmup_requests` (a TFRecord file of PredictionLog records,
// at most 1000) is replayed `iterations` times on every plan of the servable; without that
// file, synthetic inputs of the model's shapes are run instead, so that each plan's arena,
// packed weights and code are touched before the first real request.
//
// A warmup file that is malformed, or whose requests do not fit the model (unknown input name,
// wrong shape), makes the load fail with tickinfer::Error naming the file and record: such a
// version is reported in error and never serves, as in TF Serving.
#include <cstddef>
#include <string>

namespace tickinfer::serving {

class Servable;

struct WarmupResult {
  size_t records = 0;     // warmup records replayed (0 = synthetic warmup)
  size_t runs = 0;        // plan calls made
};

WarmupResult warm_up(const Servable& servable, const std::string& version_dir, int iterations);

}  // namespace tickinfer::serving
