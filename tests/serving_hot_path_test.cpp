// The REST :predict path's promises, checked by counting: once a worker's buffers have grown,
// parsing the HTTP request, decoding the JSON, resolving the version (SnapshotCell), running
// the plans, encoding the response and recording metrics make no heap allocation and take no
// pthread mutex. (Global malloc/operator new and pthread_mutex_lock are replaced by counters, as
// in engine_hot_path_test.) The socket I/O around it is the HTTP server's, one recv and one send
// per request.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "serving/http1/http_parser.hpp"
#include "serving/metrics.hpp"
#include "serving/model_repository.hpp"
#include "serving/request_log.hpp"
#include "serving/api/rest_api.hpp"
#include "support/serving_repo.hpp"

#include "support/counting_allocator.hpp"

namespace tickinfer::serving {
namespace {

// With the request log on, the record written into the worker's ring (inputs, outputs,
// fingerprint) adds no allocation or lock either; the writer thread is off here so that only
// the worker's work is counted, and the rings are drained afterwards.
void check_predict_path(bool with_log) {
  tickinfer::testing::TempDir d;
  d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  d.add_version("two", "1", tickinfer::testing::fixture_path("merge_two_in_two_out_k3/model.keras"));
  ModelConfig a, b;
  a.name = "mlp";
  a.base_path = d.model_path("mlp");
  b.name = "two";
  b.base_path = d.model_path("two");
  Metrics metrics({"mlp", "two"});
  ModelRepository repo({a, b}, {}, &metrics);
  repo.poll_once();
  ASSERT_TRUE(repo.ready());
  RestOptions options;
  std::unique_ptr<RequestLog> log;
  if (with_log) {
    RequestLogOptions lo;
    lo.writer_thread = false;
    log = std::make_unique<RequestLog>(d.path() + "/requests.tkrlog", lo, 1);
    options.request_log = log.get();
  }
  RestApi api(repo, metrics, options, 1);

  const std::string mlp_row = "{\"instances\": [[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0],[1,2,3,4,5,6,7,8,9,10]]}";
  const std::string mlp_col = "{\"signature_name\": \"serving_default\", \"inputs\": {\"input_layer\": [[1,2,3,4,5,6,7,8,9,1e-3]]}}";
  const std::string two_row =
      "{\"instances\": [{\"input_layer\": [1,2,3,4,5,6,7,8], \"input_layer_1\": [1,2,3,4,5]}]}";
  struct Req {
    std::string raw;
  };
  std::vector<std::string> raws;
  for (const auto& [path, body] : {std::pair<std::string, std::string>{"/v1/models/mlp:predict", mlp_row},
                                   {"/v1/models/mlp/versions/1:predict", mlp_col},
                                   {"/v1/models/two:predict", two_row}}) {
    raws.push_back("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  HttpResponse resp;
  HttpLimits limits;
  auto once = [&](const std::string& raw) {
    HttpRequest req;
    const ParseResult r = parse_http_request(raw.data(), raw.size(), limits, req);
    if (r.status != ParseStatus::Complete) return false;
    resp.status = 200;
    resp.body.clear();
    api.handle(req, monotonic_ns(), 0, resp);
    return resp.status == 200;
  };
  for (int i = 0; i < 20; ++i) {
    for (const auto& raw : raws) ASSERT_TRUE(once(raw)) << resp.body;
  }
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  bool all_ok = true;
  for (int i = 0; i < 1000; ++i) {
    for (const auto& raw : raws) all_ok = once(raw) && all_ok;
  }
  g_counting = false;
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_locks.load(), 0);
  if (log) {
    log->flush();
    EXPECT_EQ(log->records(), 3060u);  // every call, none dropped
    EXPECT_EQ(log->dropped(), 0u);
    EXPECT_EQ(log->inputs_omitted(), 0u);
  }
}

TEST(ServingHotPath, PredictAllocatesNothingAndTakesNoLock) { check_predict_path(false); }

TEST(ServingHotPath, PredictWithTheRequestLogAllocatesNothingAndTakesNoLock) { check_predict_path(true); }

}  // namespace
}  // namespace tickinfer::serving
