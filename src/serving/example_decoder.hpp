#pragma once
// tf.Example protobuf bytes -> the dense float inputs of a classify / regress signature, read
// with our own bounds-checked wire decoder (no protobuf library on this path):
//
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }      entries: key = 1, value = 2
//   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   FloatList { repeated float value = 1; }  Int64List { repeated int64 value = 1; }  (packed or not)
//   BytesList { repeated bytes value = 1; }
//
// Protobuf merge semantics hold, which is what TF Serving relies on for example_list_with_context
// (it parses the context's bytes followed by the example's): a second `features` field merges
// its map into the first, and a later entry for a key replaces an earlier one. Every length is
// checked against the buffer, varints are at most 10 bytes, fields of unknown number are skipped
// by wire type, a known field with the wrong wire type is an error.
//
// Only the features the signature declares are decoded (ParseExampleV2's dense keys: float32,
// fixed shape); others are walked over for well-formedness only. A declared feature must hold
// exactly as many floats as its shape; a missing one (or one whose kind is unset) takes its
// default, or is an error when it has none.
//
// Errors: decode_example() returns false with `error` set ("tf.Example: truncated ... at byte
// N", "... Feature: x (data type: float) is required but could not be found."); it never throws
// and never reads out of range.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving {

// One dense feature of a signature's ParseExampleV2 (tf.io.FixedLenFeature(shape, tf.float32)).
struct DenseFeatureSpec {
  std::string key;
  std::vector<int64_t> shape;  // dense_shapes entry (no batch dimension)
  size_t size = 1;             // product of shape: the floats one example contributes
  bool has_default = false;
  std::vector<float> default_value;  // `size` floats when has_default
};

// Reused between calls (grows to the largest example seen): where each declared feature's
// bytes were found.
struct ExampleScratch {
  struct Found {
    const char* data = nullptr;  // the Feature message's bytes (nullptr: not present)
    size_t size = 0;
    const char* base = nullptr;  // start of the buffer it came from (for byte offsets)
  };
  std::vector<Found> found;
};

struct ExampleDecodeOptions {
  bool reject_nonfinite = false;  // --nonfinite_inputs=reject: NaN / Infinity values are errors
};

// Decodes `context` (may be empty) then `example` as one merged tf.Example into
// out[i][0 .. features[i].size), one pointer per declared feature. Returns false with `error`
// set on malformed bytes or a feature that does not fit.
bool decode_example(std::string_view context, std::string_view example, const std::vector<DenseFeatureSpec>& features,
                    const ExampleDecodeOptions& options, ExampleScratch& scratch, float* const* out,
                    std::string& error);

}  // namespace tickinfer::serving
