// Warmup: the TFRecord/PredictionLog decoder against a file TensorFlow wrote
// (tools/make_serving_fixtures.py), replay on every plan, and a bad warmup file keeping a
// version from ever serving.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/npy.hpp"
#include "serving/model_repository.hpp"
#include "serving/proto_wire.hpp"
#include "serving/servable.hpp"
#include "serving/warmup.hpp"
#include "support/serving_repo.hpp"
#include "tickinfer/error.hpp"

namespace fs = std::filesystem;
using namespace tickinfer::serving;
using tickinfer::testing::TempDir;

namespace {

const std::string kWarmup = tickinfer::testing::fixture_path("serving/mlp_small_warmup/tf_serving_warmup_requests");
const std::string kMlp = tickinfer::testing::bench_model("mlp_small/model.keras");

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ServingWarmup, Crc32cCheckValue) {
  // The CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
}

TEST(ServingWarmup, DecodesWhatTensorflowWrote) {
  const std::string bytes = read_all(kWarmup);
  const auto records = read_tfrecords(bytes, "warmup", 1000);
  ASSERT_EQ(records.size(), 3u);
  const auto x = tickinfer::formats::read_npy(tickinfer::testing::bench_model("mlp_small/in0.npy"));
  const size_t rows[] = {1, 4, 2};
  const size_t first_row[] = {0, 0, 4};
  for (size_t r = 0; r < 3; ++r) {
    DecodedPredictRequest req;
    ASSERT_TRUE(decode_prediction_log(records[r], "warmup", req));
    EXPECT_EQ(req.model_name, "mlp");
    ASSERT_EQ(req.inputs.count("input_layer"), 1u);
    const auto& t = req.inputs.at("input_layer");
    EXPECT_EQ(t.dtype, 1);  // DT_FLOAT
    EXPECT_EQ(t.shape, (std::vector<int64_t>{static_cast<int64_t>(rows[r]), 10}));
    ASSERT_EQ(t.values.size(), rows[r] * 10);
    for (size_t i = 0; i < t.values.size(); ++i) EXPECT_EQ(t.values[i], x.data[first_row[r] * 10 + i]);
  }
}

TEST(ServingWarmup, ReplaysEveryRecordOnEveryPlan) {
  TempDir d;
  const std::string dir = d.add_version("m", "1", kMlp);
  fs::create_directories(dir + "/assets.extra");
  fs::copy_file(kWarmup, dir + "/assets.extra/tf_serving_warmup_requests");
  const auto s = Servable::load(dir, 1, tickinfer::testing::with_plans<ServableOptions>(3));
  const auto r = warm_up(*s, dir, 2);
  EXPECT_EQ(r.records, 3u);
  EXPECT_EQ(r.runs, (1u + 4u + 2u) * 2u * 3u);  // rows x iterations x plans
  const auto synthetic = warm_up(*Servable::load(d.add_version("n", "1", kMlp), 1, tickinfer::testing::with_plans<ServableOptions>(2)), d.model_path("n") + "/1", 1);
  EXPECT_EQ(synthetic.records, 0u);
  EXPECT_GT(synthetic.runs, 0u);
}

TEST(ServingWarmup, CorruptWarmupFileKeepsTheVersionFromServing) {
  TempDir d;
  const std::string dir = d.add_version("m", "1", kMlp);
  fs::create_directories(dir + "/assets.extra");
  std::string bytes = read_all(kWarmup);
  bytes[bytes.size() / 2] ^= 0x40;
  std::ofstream(dir + "/assets.extra/tf_serving_warmup_requests", std::ios::binary) << bytes;
  ModelConfig c;
  c.name = "m";
  c.base_path = d.model_path("m");
  ModelRepository repo({c}, {}, nullptr);
  repo.poll_once();
  EXPECT_FALSE(repo.ready());
  const auto& st = repo.snapshot()->find("m")->statuses;
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].state, VersionState::End);
  EXPECT_NE(st[0].error_message.find("checksum mismatch"), std::string::npos) << st[0].error_message;
  // With warmup off, the same version loads.
  RepositoryOptions o;
  o.warmup = false;
  ModelRepository repo2({c}, o, nullptr);
  repo2.poll_once();
  EXPECT_TRUE(repo2.ready());
}

TEST(ServingWarmup, TruncatedOrHostileRecordsAreErrors) {
  const std::string bytes = read_all(kWarmup);
  for (size_t cut : {size_t{5}, size_t{12}, bytes.size() - 1}) {
    EXPECT_THROW(read_tfrecords(std::string_view(bytes).substr(0, cut), "w", 1000), tickinfer::Error) << cut;
  }
  EXPECT_THROW(read_tfrecords(bytes, "w", 2), tickinfer::Error);  // more records than allowed
  DecodedPredictRequest req;
  EXPECT_THROW(decode_prediction_log("\x32\x05\x0a\x03\x0a", "w", req), tickinfer::Error);
}

}  // namespace

// The hand-read gRPC HealthCheckRequest (serving/proto_wire.hpp): bytes as grpc_health's
// protobuf encodes them (field 1, length-delimited), unknown fields skipped, damage refused.
TEST(ProtoWireHealth, DecodesTheServiceAndRefusesDamage) {
  using tickinfer::serving::decode_health_check_request;
  EXPECT_EQ(decode_health_check_request("", "t"), "");
  EXPECT_EQ(decode_health_check_request(std::string("\x0a\x0cModelService", 14), "t"), "ModelService");
  // An unknown varint field 2 before it is skipped.
  EXPECT_EQ(decode_health_check_request(std::string("\x10\x05\x0a\x01x", 5), "t"), "x");
  EXPECT_THROW(decode_health_check_request(std::string("\x0a\x0cModel", 7), "t"), tickinfer::Error);  // runs past the end
  EXPECT_THROW(decode_health_check_request(std::string("\x08\x01", 2), "t"), tickinfer::Error);  // field 1 as a varint
}
