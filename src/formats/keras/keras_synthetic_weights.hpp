#pragma once
// A WeightSource that invents weights of the shapes a layer's config implies, instead of reading
// a file. Used to fuzz and test the config importer without an HDF5 weights file, and to inspect a
// bare config. Unknown input widths are taken as `input_width`; values are a deterministic ramp.
#include "formats/keras/keras_config.hpp"

namespace tickinfer::formats {

class SyntheticWeightSource : public WeightSource {
 public:
  explicit SyntheticWeightSource(int input_width = 4) : input_width_(input_width) {}

  // Throws Error if the config asks for more than kMaxSyntheticValues values in one layer.
  std::vector<Weight> layer_weights(const KerasLayerRef& layer) override;

  static constexpr int64_t kMaxSyntheticValues = int64_t{1} << 20;

 private:
  int input_width_;
};

}  // namespace tickinfer::formats
