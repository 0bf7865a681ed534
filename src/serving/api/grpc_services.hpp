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

  // One Predict call, answered and counted; `message` is the serialized request as it arrived
  // (for the log's fingerprint; grpc++ has none: the log serializes `req` for a sampled call),
  // `log_ring` the native worker's index (kSharedLogRing: a grpc++ thread).
  grpc::Status predict(const tensorflow::serving::PredictRequest& req, tensorflow::serving::PredictResponse& resp,
                       std::string_view message, size_t log_ring);

 private:
  // What the request log records of a call: the servable it resolved and the compute window.
  struct PredictTrace {
    std::shared_ptr<const Servable> servable;
    uint64_t start_ns = 0, done_ns = 0;  // 0 when compute never ran
  };
  grpc::Status run(const ModelSnapshot* model, const tensorflow::serving::PredictRequest& req,
                   tensorflow::serving::PredictResponse& resp, ModelMetrics& mm, uint64_t received,
                   PredictTrace& trace);
  void log(size_t log_ring, const ModelMetrics& mm, const PredictTrace& t, StatusCode code, uint64_t received,
           const tensorflow::serving::PredictRequest& req, std::string_view message) noexcept;

  std::mutex log_mutex_;  // the shared log ring (kSharedLogRing)

  // grpc_classify.cpp: one Classify / Regress / MultiInference call without the counting.
  grpc::Status classify(const tensorflow::serving::ClassificationRequest& req, tensorflow::serving::ClassificationResponse& resp,
                        const Servable& sv);
  grpc::Status regress(const tensorflow::serving::RegressionRequest& req, tensorflow::serving::RegressionResponse& resp,
                       const Servable& sv);
  grpc::Status multi_inference(const tensorflow::serving::MultiInferenceRequest& req,
                               tensorflow::serving::MultiInferenceResponse& resp, const Servable& sv);
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
