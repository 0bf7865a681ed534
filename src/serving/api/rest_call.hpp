#pragma once
// One REST request as the route handlers see it: the request, the response being written, the
// worker's reused scratch, the parsed model path and what the handlers learn on the way (the
// model, the servable, the compute window, the answer's code), which the request log reads
// once the handler returns.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "serving/api/example_inference.hpp"
#include "serving/api/example_json.hpp"
#include "serving/api/predict_json.hpp"
#include "serving/api/rest_path.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/http1/http_server.hpp"
#include "serving/json_dom.hpp"
#include "serving/metrics.hpp"
#include "serving/model_repository.hpp"
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

// Per worker, reused: capacity grows to the largest request seen and is kept.
struct RestScratch {
  JsonDocument doc;
  DecodedInputs in;
  std::vector<std::vector<float>> out;
  std::vector<const float*> in_ptr;
  std::vector<float*> out_ptr;
  std::string error;
  std::string fail_message;  // the answer's error text, for the request log
  std::string name;  // URL-decoded model name / label
  std::string label;
  ExampleRequest examples;  // :classify / :regress
  ExampleRun example_run;
};

// Why a request has no route (answered by the Rejected route, after authentication).
enum class RestRejection {
  Malformed,         // 404 "Malformed request: METHOD PATH"
  MissingModelName,  // 400
  BadVersion,        // 400: the version does not fit an int64
  VersionAndLabel,   // 400
  BadEscape,         // 400: a bad %-escape in the model name or label
};

struct RestCall {
  RestCall(const HttpRequest& request, HttpResponse& response, RestScratch& scratch, size_t worker_index,
           uint64_t received, const ModelRepository& repository, Metrics& server_metrics, const RestOptions& opts)
      : req(request), resp(response), s(scratch), worker(worker_index), received_ns(received), repo(repository),
        metrics(server_metrics), options(opts), model_metrics(&server_metrics.unknown_model()) {}

  const HttpRequest& req;
  HttpResponse& resp;
  RestScratch& s;
  size_t worker;
  uint64_t received_ns;
  const ModelRepository& repo;
  Metrics& metrics;
  const RestOptions& options;

  RestRejection rejection = RestRejection::Malformed;  // the Rejected route's answer
  ModelPath path;                                   // model routes: the parsed target
  std::shared_ptr<const RepositorySnapshot> snap;   // model routes: taken once per request
  const ModelSnapshot* model = nullptr;             // null: no model of that name
  ModelMetrics* model_metrics = nullptr;            // the model's, or Metrics::unknown_model()

  // For the request log.
  bool logged = false;                     // an inference call (RestRoute::logged)
  StatusCode code = StatusCode::Ok;        // the answer's code (set by fail())
  std::shared_ptr<const Servable> servable;  // once resolved: the log's version
  uint64_t start_ns = 0, done_ns = 0;      // the compute window; 0 when compute never ran
  LoggedMethod method = LoggedMethod::Predict;
  std::string_view signature;              // as requested, or the servable's when none was named
  size_t batch = 0;
  // Set once s.in_ptr / s.out_ptr hold batch rows of these tensors (the servable's for predict,
  // the example signature's features and outputs for classify / regress).
  const std::vector<TensorSpec>* logged_inputs = nullptr;
  const std::vector<TensorSpec>* logged_outputs = nullptr;

  // Answers {"error": message} with TF Serving's HTTP status for `code`.
  void fail(StatusCode c, std::string_view message);
  // fail() plus the model's request counter for `code`.
  void fail_counted(StatusCode c, std::string_view message);
  // 404 "Malformed request: METHOD PATH", TF Serving's answer to a path it has no route for.
  void fail_malformed();
};

// Sets resp to the error body for `code` ({"error": message}, TF Serving's HTTP status).
void set_error(HttpResponse& resp, StatusCode code, std::string_view message);

}  // namespace tickinfer::serving
