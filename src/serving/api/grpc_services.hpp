#pragma once
// The methods of TF Serving's gRPC services (grpc_server.hpp serves them): PredictionService's
// Predict, Classify, Regress, MultiInference (grpc_classify.cpp) and GetModelMetadata, ModelService's GetModelStatus and HandleReloadConfigRequest. grpc++ calls the overrides; the
// native server calls predict() with its worker's log ring. The servable a ModelSpec names is
// found by resolve() (resolve.hpp), as for REST; every Predict answer, errors included, is
// offered to the request log.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "serving/api/grpc_server.hpp"
#include "tensorflow_serving/apis/model_service.grpc.pb.h"
#include "serving/api/example_inference.hpp"
#include "serving/request_log_format.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

namespace tickinfer::serving {

// The log ring "index" of calls not run on a numbered worker thread (grpc++'s).
constexpr size_t kSharedLogRing = ~size_t{0};

class GrpcPredictionService final : public tensorflow::serving::PredictionService::Service {
 public:
  const ModelRepository* repo = nullptr;
  Metrics* metrics = nullptr;
  GrpcOptions options;

  // grpc++'s threads are not numbered: they share one log ring, taken under log_mutex_.
  grpc::Status Predict(grpc::ServerContext*, const tensorflow::serving::PredictRequest* req,
                       tensorflow::serving::PredictResponse* resp) override;
  grpc::Status GetModelMetadata(grpc::ServerContext*, const tensorflow::serving::GetModelMetadataRequest* req,
                                tensorflow::serving::GetModelMetadataResponse* resp) override;

  // Classify, Regress and MultiInference (grpc_classify.cpp): answered and counted like Predict;
  // the native server calls them directly.
  grpc::Status Classify(grpc::ServerContext*, const tensorflow::serving::ClassificationRequest* req,
                        tensorflow::serving::ClassificationResponse* resp) override;
  grpc::Status Regress(grpc::ServerContext*, const tensorflow::serving::RegressionRequest* req,
                       tensorflow::serving::RegressionResponse* resp) override;
  grpc::Status MultiInference(grpc::ServerContext*, const tensorflow::serving::MultiInferenceRequest* req,
                              tensorflow::serving::MultiInferenceResponse* resp) override;

  // One Predict call, answered, counted and offered to the request log; `log_ring` is the native
  // worker's index (kSharedLogRing: a grpc++ thread).
  grpc::Status predict(const tensorflow::serving::PredictRequest& req, tensorflow::serving::PredictResponse& resp,
                       size_t log_ring);

 private:
  // What the request log records of a call: the servable it resolved and the compute window.
  // The decoded inputs and computed outputs (thread-local buffers, valid until the thread's next
  // call) are logged with it.
  struct PredictTrace {
    std::shared_ptr<const Servable> servable;
    uint64_t start_ns = 0, done_ns = 0;  // 0 when compute never ran
    size_t batch = 0;
    bool decoded = false, computed = false;
    const float* in[Servable::kMaxTensors] = {};
    float* out[Servable::kMaxTensors] = {};
  };
  grpc::Status run(const ModelSnapshot* model, const tensorflow::serving::PredictRequest& req,
                   tensorflow::serving::PredictResponse& resp, ModelMetrics& mm, uint64_t received,
                   PredictTrace& trace);
  void log(size_t log_ring, const ModelMetrics& mm, const PredictTrace& t, const grpc::Status& st, uint64_t received,
           const tensorflow::serving::PredictRequest& req) noexcept;

  std::mutex log_mutex_;  // the shared log ring (kSharedLogRing)

  // What the request log records of an example call (grpc_classify.cpp): the servable, the
  // signature run and its decoded features and outputs (a thread-local ExampleRun), the compute window.
  struct ExampleTrace {
    std::shared_ptr<const Servable> servable;
    const ExampleSignature* signature = nullptr;
    const ExampleRun* run = nullptr;  // set once compute ran
    uint64_t start_ns = 0, done_ns = 0;
  };
  // grpc_classify.cpp: the example calls without the counting.
  // Finds the example signature `spec` names for `method` and runs it on `input`, filling trace
  // (trace.run then holds the outputs, valid until this thread's next call).
  grpc::Status run_signature(const tensorflow::serving::ModelSpec& spec, const tensorflow::serving::Input& input,
                             const Servable& sv, ExampleMethod method, ExampleTrace& trace);
  grpc::Status multi_inference(const tensorflow::serving::MultiInferenceRequest& req,
                               tensorflow::serving::MultiInferenceResponse& resp,
                               const std::shared_ptr<const Servable>& sv, const ModelMetrics& mm, uint64_t received);
  // One record per example call (MultiInference: per task), errors included, on the shared ring.
  void log_examples(const ModelMetrics& mm, LoggedMethod method, const ExampleTrace& t, const grpc::Status& st,
                    const std::string& signature, uint64_t received) noexcept;
};

// The servable a ModelSpec names (version, label or latest) in `model`, with TF Serving's gRPC
// answers (NOT_FOUND "Servable not found for request: ...", an unknown label).
grpc::Status resolve_model_spec(const ModelSnapshot* model, const tensorflow::serving::ModelSpec& spec,
                                std::shared_ptr<const Servable>& out);

class GrpcModelService final : public tensorflow::serving::ModelService::Service {
 public:
  const ModelRepository* repo = nullptr;
  ModelRepository* reload = nullptr;  // the same repository, for HandleReloadConfigRequest

  grpc::Status GetModelStatus(grpc::ServerContext*, const tensorflow::serving::GetModelStatusRequest* req,
                              tensorflow::serving::GetModelStatusResponse* resp) override;
  // grpc_reload.cpp
  grpc::Status HandleReloadConfigRequest(grpc::ServerContext*, const tensorflow::serving::ReloadConfigRequest* req,
                                         tensorflow::serving::ReloadConfigResponse* resp) override;
};

}  // namespace tickinfer::serving
