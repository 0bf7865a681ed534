#pragma once
// TensorProto <-> the float rows a Servable runs on, for the gRPC Predict and metadata calls.
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "serving/api/predict_json.hpp"  // PredictLimits
#include "serving/servable.hpp"
#include "tensorflow/core/framework/tensor.pb.h"
#include "tensorflow/core/protobuf/meta_graph.pb.h"

namespace tickinfer::serving {

// Converts one input TensorProto to `batch` rows of floats for `spec`. Accepts tensor_content
// or the typed *_val list of its dtype (one value fills the whole shape); INVALID_ARGUMENT with
// TF Serving's wording otherwise.
grpc::Status to_floats(const tensorflow::TensorProto& t, const TensorSpec& spec, const PredictLimits& limits,
                       std::vector<float>& out, int64_t& batch);

// A signature entry: DT_FLOAT, shape [-1, spec.shape...], named `tensor_name`.
void fill_tensor_info(tensorflow::TensorInfo& info, const SignatureTensor& t);

}  // namespace tickinfer::serving
