#pragma once
// TF Serving's REST API (docs/serving.md, "REST API") on top of the model repository:
//   GET  /v1/models/{name}[/versions/{N}|/labels/{L}]            model status
//   GET  /v1/models/{name}[/versions/{N}|/labels/{L}]/metadata   signature metadata
//   POST /v1/models/{name}[/versions/{N}|/labels/{L}]:predict    inference
//   POST ...:classify | ...:regress                               501 (not supported)
// plus /healthz (live), /readyz (every model has an AVAILABLE version) and, when enabled, the
// Prometheus metrics path. Every answer is application/json with errors as {"error": "..."}
// and TF Serving's status-code-to-HTTP mapping (except metrics: text/plain).
//
// handle() runs on an HTTP worker thread; `worker` indexes both the per-worker scratch here and
// the servable's plans, so a predict never allocates once the worker's buffers have grown,
// takes no mutex (the repository snapshot is a SnapshotCell) and never throws.
#include <cstdint>
#include <string>
#include <vector>

#include "serving/batch_scheduler.hpp"
#include "serving/http_server.hpp"
#include "serving/json_dom.hpp"
#include "serving/metrics.hpp"
#include "serving/model_repository.hpp"
#include "serving/predict_json.hpp"
#include "serving/request_log.hpp"

namespace tickinfer::serving {

struct RestOptions {
  PredictLimits limits;
  uint64_t timeout_ns = 30'000'000'000ull;  // --rest_api_timeout_in_ms: queue deadline
  bool cors = false;                        // --rest_api_enable_cors_support
  std::string bearer_token;                 // empty = no authentication
  std::string metrics_path;                 // empty = metrics off
  RequestLog* request_log = nullptr;        // optional; must outlive the RestApi
  BatchScheduler* batching = nullptr;       // --enable_batching; must outlive the RestApi
};

class RestApi {
 public:
  RestApi(const ModelRepository& repo, Metrics& metrics, RestOptions options, size_t workers);
  void handle(const HttpRequest& req, uint64_t received_ns, size_t worker, HttpResponse& resp) noexcept;

 private:
  struct Scratch {
    JsonDocument doc;
    DecodedInputs in;
    std::vector<std::vector<float>> out;
    std::vector<const float*> in_ptr;
    std::vector<float*> out_ptr;
    std::string error;
    std::string name;  // URL-decoded model name / label
    std::string label;
  };
  void route(const HttpRequest& req, uint64_t received_ns, Scratch& s, size_t worker, HttpResponse& resp);

  const ModelRepository& repo_;
  Metrics& metrics_;
  RestOptions options_;
  std::vector<Scratch> scratch_;
};

// Sets resp to the error body for `code` ({"error": message}, TF Serving's HTTP status).
void set_error(HttpResponse& resp, StatusCode code, std::string_view message);

}  // namespace tickinfer::serving
