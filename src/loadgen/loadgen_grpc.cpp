// tickinfer loadgen's gRPC side (loadgen.hpp): Predict through tickinfer's own HTTP/2 client (a
// client that costs the measurement little: grpc++'s costs ~90 us of CPU per call here), and the
// PredictRequest built once from an array file. Only in builds with the model server.
#include <stdexcept>

#include "formats/array_file.hpp"
#include "loadgen/loadgen.hpp"
#include "serving/h2/grpc_h2_client.hpp"
#include "tensorflow_serving/apis/get_model_metadata.pb.h"
#include "tensorflow_serving/apis/predict.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::loadgen {

using formats::HostArray;
using formats::load_array;

namespace tfs = tensorflow::serving;

namespace {

constexpr const char* kPredict = "/tensorflow.serving.PredictionService/Predict";
constexpr const char* kMetadata = "/tensorflow.serving.PredictionService/GetModelMetadata";

class GrpcTransport final : public Transport {
 public:
  GrpcTransport(const std::string& host, int port, const std::string& message) : message_(message) {
    try {
      client_ = std::make_unique<serving::GrpcH2Client>(port, host + ":" + std::to_string(port), host);
    } catch (const std::runtime_error& e) {
      throw Error("loadgen: cannot connect to " + host + ":" + std::to_string(port) + ": " + e.what());
    }
  }
  bool call(bool& broken) override {
    (void)broken;  // the client cannot tell a refused call from a dead connection: both count as errors
    return client_->call(kPredict, message_, response_);
  }

 private:
  std::unique_ptr<serving::GrpcH2Client> client_;
  std::string message_, response_;
};

// The name of the served signature's only input, from GetModelMetadata.
std::string input_name_from_server(serving::GrpcH2Client& c, const std::string& model) {
  tfs::GetModelMetadataRequest q;
  q.mutable_model_spec()->set_name(model);
  q.add_metadata_field("signature_def");
  std::string resp;
  if (!c.call(kMetadata, q.SerializeAsString(), resp))
    throw Error("loadgen: GetModelMetadata for model '" + model + "' failed (is it served?); give --input-name");
  tfs::GetModelMetadataResponse r;
  tfs::SignatureDefMap sigs;
  if (!r.ParseFromString(resp) || !r.metadata().count("signature_def") || !r.metadata().at("signature_def").UnpackTo(&sigs))
    throw Error("loadgen: GetModelMetadata for model '" + model + "' answered no signature_def; give --input-name");
  const auto it = sigs.signature_def().find("serving_default");
  const auto& def = it != sigs.signature_def().end() ? it->second : sigs.signature_def().begin()->second;
  if (def.inputs().size() != 1)
    throw Error("loadgen: model '" + model + "' has " + std::to_string(def.inputs().size()) +
                " inputs; give --input-name (one input per request here)");
  return def.inputs().begin()->first;
}

}  // namespace

std::unique_ptr<Transport> grpc_transport(const std::string& host, int port, const std::string& message) {
  return std::make_unique<GrpcTransport>(host, port, message);
}

std::string grpc_predict_message(const std::string& host, int port, const std::string& model,
                                 const std::string& input_name, const std::string& input_file) {
  const HostArray a = load_array(input_file);
  std::string name = input_name;
  if (name.empty()) {
    serving::GrpcH2Client c(port, host + ":" + std::to_string(port), host);
    name = input_name_from_server(c, model);
  }
  tfs::PredictRequest q;
  q.mutable_model_spec()->set_name(model);
  auto& t = (*q.mutable_inputs())[name];
  t.set_dtype(tensorflow::DT_FLOAT);
  for (int64_t d : a.shape) t.mutable_tensor_shape()->add_dim()->set_size(d);
  t.set_tensor_content(std::string(reinterpret_cast<const char*>(a.data.data()), a.data.size() * sizeof(float)));
  return q.SerializeAsString();
}

}  // namespace tickinfer::loadgen
