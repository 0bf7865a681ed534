// The request log: binary, checksummed records with the fields the docs promise, written through
// a real server; the fingerprint of decoded inputs; the counters of what a full ring cost (checked
// against injected truth); a torn tail skipped by the reader and cut off by the next writer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serving/model_server.hpp"
#include "serving/request_log.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

TEST(ServingRequestLog, Fnv1a64KnownVectors) {
  // Published FNV-1a 64-bit test vectors.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  // Continued over a second piece it is the hash of the concatenation.
  EXPECT_EQ(fnv1a64("bar", 3, fnv1a64("foo")), fnv1a64("foobar"));
}

TEST(ServingRequestLog, InputFingerprintIsTheHashOfTheDecodedFloatsInSignatureOrder) {
  const std::vector<TensorSpec> specs = {{"a", {2}, 2}, {"b", {1}, 1}};
  const float a[] = {1.0f, 2.0f, 3.0f, 4.0f}, b[] = {5.0f, 6.0f};
  const float* in[] = {a, b};
  const float all[] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::string_view bytes(reinterpret_cast<const char*>(all), sizeof all);
  EXPECT_EQ(input_fingerprint(specs, in, 2), fnv1a64(bytes));
  const float* swapped[] = {b, a};
  const std::vector<TensorSpec> specs_ba = {{"b", {1}, 1}, {"a", {2}, 2}};
  EXPECT_NE(input_fingerprint(specs_ba, swapped, 2), input_fingerprint(specs, in, 2));
}

ServerFlags rest_flags(const TempDir& d, const std::string& log) {
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 1;  // one worker: records in request order
  f.file_system_poll_wait_seconds = -1;
  f.request_log_file = log;
  return f;
}

TEST(ServingRequestLog, RecordsCarryDecodedInputsAndTheServedOutputs) {
  TempDir d;
  d.add_version("mlp", "4", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const std::string log = d.path() + "/requests.tkrlog";
  ServerFlags f = rest_flags(d, log);
  f.request_log_sample_rate = 0.5;
  // One input three ways: integers, decimals with an exponent, and the columnar form.
  const std::vector<std::string> bodies = {
      "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}",
      "{\"instances\": [[1.0, 2.00, 3e0, 4, 5, 6, 7, 8, 9, 1.0e1]]}",
      "{\"inputs\": [[1,2,3,4,5,6,7,8,9,10]], \"signature_name\": \"serving_default\"}",
      "{\"instances\": [[1,2,3,4,5,6,7,8,9,10], [0,0,0,0,0,0,0,0,0,0.5]]}",
  };
  std::vector<nlohmann::json> answers;
  {
    ModelServer server(f);
    server.start();
    HttpClient c(server.rest_port());
    for (int round = 0; round < 2; ++round) {
      for (const auto& b : bodies) {
        const auto r = c.request("POST", "/v1/models/mlp:predict", b);
        ASSERT_EQ(r.status, 200);
        answers.push_back(nlohmann::json::parse(r.body));
      }
    }
    ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[1]]}").status, 400);
    ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[1]]}").status, 400);
  }  // the server's destructor drains the log and writes its summary
  const RequestLogContents c = read_request_log(log);
  EXPECT_FALSE(c.torn_tail) << c.tail_problem;
  ASSERT_EQ(c.requests.size(), 5u);  // calls 1, 3, 5, 7, 9 of 10
  EXPECT_EQ(c.summaries, 1u);
  EXPECT_EQ(c.summarized_records, 5u);
  EXPECT_EQ(c.dropped, 0u);
  const float row[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const uint64_t one_row = fnv1a64(std::string_view(reinterpret_cast<const char*>(row), sizeof row));
  for (size_t i = 0; i < 4; ++i) {
    const LoggedRequest& r = c.requests[i];
    const size_t call = 2 * i;  // the 1st, 3rd, 5th and 7th answers
    SCOPED_TRACE(call);
    EXPECT_EQ(r.api, LoggedApi::Rest);
    EXPECT_EQ(r.method, LoggedMethod::Predict);
    EXPECT_EQ(r.model, "mlp");
    EXPECT_EQ(r.version, 4);
    EXPECT_EQ(r.signature, "serving_default");
    EXPECT_EQ(r.status, StatusCode::Ok);
    EXPECT_TRUE(r.message.empty());
    EXPECT_GT(r.compute_ns, 0u);
    EXPECT_GE(r.total_ns, r.compute_ns + r.queue_ns);
    ASSERT_TRUE(r.has_inputs && r.has_outputs);
    ASSERT_EQ(r.inputs.size(), 1u);
    EXPECT_EQ(r.inputs[0].name, "input_layer");
    EXPECT_EQ(r.inputs[0].floats_per_row, 10u);
    const size_t rows = bodies[call % 4].find("0.5") != std::string::npos ? 2 : 1;
    ASSERT_EQ(r.batch, rows);
    if (rows == 1) {
      EXPECT_EQ(r.input_fingerprint, one_row);  // however the JSON spelled it
    }
    for (int k = 0; k < 10; ++k) EXPECT_EQ(r.inputs[0].values[static_cast<size_t>(k)], row[k]);
    // The outputs are what the client was answered (the JSON has the float's shortest digits).
    const auto& answer = answers[call].contains("predictions") ? answers[call]["predictions"] : answers[call]["outputs"];
    ASSERT_EQ(r.outputs.size(), 1u);
    ASSERT_EQ(r.outputs[0].values.size(), rows);
    for (size_t k = 0; k < rows; ++k) EXPECT_EQ(r.outputs[0].values[k], answer[k][0].get<float>());
  }
  const LoggedRequest& bad = c.requests[4];
  EXPECT_EQ(bad.status, StatusCode::InvalidArgument);
  EXPECT_FALSE(bad.message.empty());
  EXPECT_FALSE(bad.has_inputs);
  EXPECT_EQ(bad.input_fingerprint, 0u);  // never decoded
  EXPECT_EQ(bad.compute_ns, 0u);
}

TEST(ServingRequestLog, InputsRateKeepsEveryJthLoggedCallsValues) {
  TempDir d;
  d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const std::string log = d.path() + "/requests.tkrlog";
  ServerFlags f = rest_flags(d, log);
  f.request_log_inputs_rate = 0.25;
  {
    ModelServer server(f);
    server.start();
    HttpClient c(server.rest_port());
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}").status, 200);
    }
  }
  const RequestLogContents c = read_request_log(log);
  ASSERT_EQ(c.requests.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(c.requests[i].has_inputs, i % 4 == 0) << i;
    EXPECT_TRUE(c.requests[i].has_outputs) << i;
    EXPECT_EQ(c.requests[i].input_fingerprint, c.requests[0].input_fingerprint) << i;  // kept either way
  }
}

// Entries of a known size through a ring of a known size, drained only when asked: what is
// dropped or kept without inputs is exactly what did not fit.
TEST(ServingRequestLog, FullRingCountersMatchWhatDidNotFit) {
  TempDir d;
  const std::string log = d.path() + "/ring.tkrlog";
  const std::vector<TensorSpec> in_specs = {{"x", {200}, 200}};  // 800 bytes per row
  const std::vector<TensorSpec> out_specs = {{"y", {1}, 1}};
  std::vector<float> x(200, 0.5f);
  float y = 2.0f;
  const float* in[] = {x.data()};
  float* out[] = {&y};
  RequestLogEntry e;
  e.model = "m";
  e.signature = "serving_default";
  e.batch = 1;
  e.input_specs = &in_specs;
  e.inputs = in;
  e.output_specs = &out_specs;
  e.outputs = out;
  // Each record: 4 + 57 fixed + 3 strings (2+1, 2+15, 2) + heads (1+2+1+4, 1+2+1+4) + 800 + 4 bytes.
  const size_t full = 4 + 57 + 3 + 17 + 2 + 8 + 8 + 800 + 4, slim = full - 800;
  RequestLogOptions o;
  o.ring_bytes = 4096;
  o.writer_thread = false;
  size_t expect_full = 0, expect_slim = 0, expect_dropped = 0;
  {
    RequestLog rl(log, o, 1);
    size_t used = 0;
    for (int i = 0; i < 12; ++i) {
      ASSERT_TRUE(rl.sample(0));
      rl.record(0, e);
      if (used + full <= 4096) {
        used += full;
        ++expect_full;
      } else if (used + slim <= 4096) {
        used += slim;
        ++expect_slim;
      } else {
        ++expect_dropped;
      }
    }
    EXPECT_EQ(rl.dropped(), expect_dropped);
    EXPECT_EQ(rl.inputs_omitted(), expect_slim);
    rl.flush();
    EXPECT_EQ(rl.records(), expect_full + expect_slim);
    rl.record(0, e);  // room again after the drain
  }
  ASSERT_EQ(expect_full, 4u);
  ASSERT_GT(expect_slim, 0u);
  ASSERT_GT(expect_dropped, 0u);
  const RequestLogContents c = read_request_log(log);
  ASSERT_EQ(c.requests.size(), expect_full + expect_slim + 1);
  for (size_t i = 0; i < c.requests.size(); ++i) {
    const bool with_inputs = i < expect_full || i == c.requests.size() - 1;
    EXPECT_EQ(c.requests[i].has_inputs, with_inputs) << i;
    EXPECT_TRUE(c.requests[i].has_outputs);
    EXPECT_EQ(c.requests[i].outputs[0].values[0], 2.0f);
    if (with_inputs) {
      EXPECT_EQ(c.requests[i].inputs[0].values, x);
    }
  }
  EXPECT_EQ(c.dropped, expect_dropped);
  EXPECT_EQ(c.inputs_omitted, expect_slim);
  EXPECT_EQ(c.summarized_records, c.requests.size());
}

TEST(ServingRequestLog, TornTailIsSkippedByTheReaderAndCutOffByTheNextWriter) {
  TempDir d;
  const std::string log = d.path() + "/torn.tkrlog";
  const std::vector<TensorSpec> specs = {{"x", {3}, 3}};
  const float x[] = {1, 2, 3};
  const float* in[] = {x};
  RequestLogEntry e;
  e.model = "m";
  e.batch = 1;
  e.input_specs = &specs;
  e.inputs = in;
  RequestLogOptions o;
  o.writer_thread = false;
  {
    RequestLog rl(log, o, 1);
    for (int i = 0; i < 3; ++i) rl.record(0, e);
  }
  const RequestLogContents whole = read_request_log(log);
  ASSERT_EQ(whole.requests.size(), 3u);
  // A crash in the middle of the summary record's write.
  const auto size = std::filesystem::file_size(log);
  std::filesystem::resize_file(log, size - 5);
  const RequestLogContents torn = read_request_log(log);
  EXPECT_TRUE(torn.torn_tail);
  EXPECT_EQ(torn.requests.size(), 3u);
  EXPECT_EQ(torn.summaries, 0u);
  EXPECT_EQ(torn.tail_bytes, 8u + 25u - 5u);
  EXPECT_NE(torn.tail_problem.find("truncated record"), std::string::npos) << torn.tail_problem;
  {
    RequestLog rl(log, o, 1);
    EXPECT_EQ(rl.repaired_bytes(), torn.tail_bytes);
    rl.record(0, e);
  }
  const RequestLogContents again = read_request_log(log);
  EXPECT_FALSE(again.torn_tail) << again.tail_problem;
  EXPECT_EQ(again.requests.size(), 4u);
  EXPECT_EQ(again.summaries, 1u);
  // A flipped byte inside a record fails its checksum: the records before it are kept.
  {
    std::fstream f(log, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(again.requests[2].offset + 20));
    f.put('\x7f');
  }
  const RequestLogContents flipped = read_request_log(log);
  EXPECT_TRUE(flipped.torn_tail);
  EXPECT_EQ(flipped.requests.size(), 2u);
  EXPECT_NE(flipped.tail_problem.find("checksum"), std::string::npos) << flipped.tail_problem;
}

TEST(ServingRequestLog, RefusesFilesThatAreNotRequestLogsAndLeavesThemAlone) {
  TempDir d;
  const std::string other = d.path() + "/notes.txt";
  std::ofstream(other) << "{\"time\":\"2026-11-30T04:44:01Z\"}\n";
  try {
    RequestLog rl(other, RequestLogOptions{}, 1);
    FAIL() << "opened a file that is not a request log";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a tickinfer request log"), std::string::npos) << e.what();
  }
  std::ifstream in(other);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "{\"time\":\"2026-11-30T04:44:01Z\"}");
  EXPECT_THROW(RequestLog(d.path(), RequestLogOptions{}, 1), tickinfer::Error);  // a directory
  EXPECT_THROW(read_request_log(d.path()), tickinfer::Error);
  EXPECT_THROW(read_request_log(d.path() + "/absent"), tickinfer::Error);
}

}  // namespace
