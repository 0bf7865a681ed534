// The versioned model repository: version folders, policies, labels, corrupt and half-written
// versions, removal, and hot reload under load through a real server (zero failed requests).
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "formats/isolated_load.hpp"
#include "serving/model_repository.hpp"
#include "serving/model_server.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"
#include "support/source_paths.hpp"

namespace fs = std::filesystem;
using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

const std::string kMlp = tickinfer::testing::bench_model("mlp_small/model.keras");

std::vector<int64_t> available(const ModelRepository& r, const std::string& model) {
  const auto snap = r.snapshot();  // held while reading: the poller may publish a new one
  std::vector<int64_t> v;
  for (const auto& s : snap->find(model)->available) v.push_back(s->version());
  return v;
}

std::optional<VersionStatus> status_of(const ModelRepository& r, const std::string& model, int64_t v) {
  const auto snap = r.snapshot();
  for (const auto& s : snap->find(model)->statuses) {
    if (s.version == v) return s;
  }
  return std::nullopt;
}

ModelConfig config(const TempDir& d, const std::string& name) {
  ModelConfig c;
  c.name = name;
  c.base_path = d.model_path(name);
  return c;
}

TEST(ServingRepository, NumericFoldersOnlyAndLatestByDefault) {
  TempDir d;
  d.add_version("m", "1", kMlp);
  d.add_version("m", "0002", kMlp);  // "0002" is version 2
  d.add_version("m", "v3", kMlp);    // not a version
  d.add_version("m", "-4", kMlp);    // not a version
  ModelRepository repo({config(d, "m")}, {}, nullptr);
  EXPECT_FALSE(repo.ready());
  repo.poll_once();
  EXPECT_TRUE(repo.ready());
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{2}));
}

TEST(ServingRepository, PoliciesLatestNAllSpecific) {
  TempDir d;
  for (const char* v : {"1", "2", "5", "9"}) d.add_version("m", v, kMlp);
  auto c = config(d, "m");
  c.policy.kind = VersionPolicy::Kind::Latest;
  c.policy.num_versions = 2;
  {
    ModelRepository repo({c}, {}, nullptr);
    repo.poll_once();
    EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{5, 9}));
  }
  c.policy.kind = VersionPolicy::Kind::All;
  {
    ModelRepository repo({c}, {}, nullptr);
    repo.poll_once();
    EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1, 2, 5, 9}));
  }
  c.policy.kind = VersionPolicy::Kind::Specific;
  c.policy.versions = {2, 7};  // 7 does not exist
  {
    ModelRepository repo({c}, {}, nullptr);
    repo.poll_once();
    EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{2}));
  }
}

TEST(ServingRepository, LabelsOnlyForLoadedVersionsUnlessAllowed) {
  TempDir d;
  d.add_version("m", "1", kMlp);
  auto c = config(d, "m");
  c.labels = {{"stable", 1}, {"canary", 2}};
  ModelRepository repo({c}, {}, nullptr);
  repo.poll_once();
  const auto labels = repo.snapshot()->find("m")->labels;
  EXPECT_EQ(labels.count("stable"), 1u);
  EXPECT_EQ(labels.count("canary"), 0u);
  RepositoryOptions o;
  o.allow_labels_for_unavailable = true;
  ModelRepository repo2({c}, o, nullptr);
  repo2.poll_once();
  EXPECT_EQ(repo2.snapshot()->find("m")->labels.count("canary"), 1u);
}

TEST(ServingRepository, CorruptOrEmptyVersionIsReportedAndNeverDisplacesAGoodOne) {
  TempDir d;
  d.add_version("m", "1", kMlp);
  ModelRepository repo({config(d, "m")}, {}, nullptr);
  repo.poll_once();
  ASSERT_EQ(available(repo, "m"), (std::vector<int64_t>{1}));
  // Version 2: a half-written copy (truncated zip).
  const std::string dir2 = d.model_path("m") + "/2";
  fs::create_directories(dir2);
  {
    std::ifstream in(kMlp, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir2 + "/model.keras", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  // Version 3: a folder with no model yet.
  fs::create_directories(d.model_path("m") + "/3");
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1}));
  const auto s3 = status_of(repo, "m", 3);
  ASSERT_TRUE(s3.has_value());
  EXPECT_EQ(s3->state, VersionState::End);
  EXPECT_NE(s3->error_message.find("holds no model ("), std::string::npos) << s3->error_message;
  // With 3 failed, the latest candidate is 2, which fails too.
  repo.poll_once();
  const auto s2 = status_of(repo, "m", 2);
  ASSERT_TRUE(s2.has_value());
  EXPECT_EQ(s2->state, VersionState::End);
  EXPECT_NE(s2->error_code, StatusCode::Ok);
  EXPECT_FALSE(s2->error_message.empty());
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1}));
  EXPECT_TRUE(repo.ready());
  // The copy completes: version 3 gets its file and is loaded; 1 is unloaded after.
  fs::copy_file(kMlp, d.model_path("m") + "/3/model.keras");
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{3}));
  EXPECT_EQ(status_of(repo, "m", 1)->state, VersionState::End);
  EXPECT_EQ(status_of(repo, "m", 3)->state, VersionState::Available);
}

TEST(ServingRepository, UnsupportedAndBrokenFormatsAreRefusedWithAClearMessage) {
  TempDir d;
  fs::create_directories(d.model_path("m") + "/1");
  std::ofstream(d.model_path("m") + "/1/model.tflite") << "TFL3";
  fs::create_directories(d.model_path("m") + "/2");
  std::ofstream(d.model_path("m") + "/2/saved_model.pb") << "x";
  auto c = config(d, "m");
  c.policy.kind = VersionPolicy::Kind::All;
  ModelRepository repo({c}, {}, nullptr);
  repo.poll_once();
  EXPECT_FALSE(repo.ready());
  // A file named .tflite that is not a valid TFLite flatbuffer: the loader's own message.
  EXPECT_NE(status_of(repo, "m", 1)->error_message.find("model.tflite"), std::string::npos);
  // A half-written SavedModel (a saved_model.pb that is not one): the SavedModel reader names it.
  EXPECT_NE(status_of(repo, "m", 2)->error_message.find("saved_model.pb"), std::string::npos)
      << status_of(repo, "m", 2)->error_message;
}

TEST(ServingRepository, ServesTfliteVersionsBesideKerasOnes) {
  // Version 1 is the Keras model, version 2 the TFLiteConverter's full-int8 file of the same
  // architecture: both load, and the int8 one takes float inputs like any other (the plan
  // quantizes them as TFLite's QUANTIZE would).
  TempDir d;
  d.add_version("m", "1", kMlp);
  d.add_version("m", "2", std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/mlp_small/int8.tflite");
  auto c = config(d, "m");
  c.policy.kind = VersionPolicy::Kind::All;
  ModelRepository repo({c}, {}, nullptr);
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1, 2}));
  const auto snap = repo.snapshot();
  const auto servable = snap->find("m")->available.back();
  ASSERT_EQ(servable->version(), 2);
  ASSERT_EQ(servable->inputs().size(), 1u);
  ASSERT_GE(servable->num_plans(), 1u);
  std::vector<float> x(10, 0.5f), y(1, -1.0f);
  const float* ins[1] = {x.data()};
  float* outs[1] = {y.data()};
  servable->run(0, 1, ins, outs);
  EXPECT_GE(y[0], 0.0f);  // a sigmoid output, dequantized from int8 in steps of 1/256
  EXPECT_LE(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[0] * 256.0f, std::round(y[0] * 256.0f));
}

TEST(ServingRepository, RemovedVersionIsUnloaded) {
  TempDir d;
  d.add_version("m", "1", kMlp);
  d.add_version("m", "2", kMlp);
  auto c = config(d, "m");
  c.policy.kind = VersionPolicy::Kind::All;
  ModelRepository repo({c}, {}, nullptr);
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1, 2}));
  fs::remove_all(d.model_path("m") + "/1");
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{2}));
  EXPECT_EQ(status_of(repo, "m", 1)->state, VersionState::End);
}

// A request in flight keeps its version alive after it is unloaded.
TEST(ServingRepository, InFlightSnapshotKeepsUnloadedVersionAlive) {
  TempDir d;
  d.add_version("m", "1", kMlp);
  ModelRepository repo({config(d, "m")}, {}, nullptr);
  repo.poll_once();
  const auto held = repo.snapshot()->find("m")->available.back();
  d.add_version("m", "2", kMlp);
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{2}));
  EXPECT_EQ(held->version(), 1);
  float x[10] = {}, y[1] = {};
  const float* in[] = {x};
  float* out[] = {y};
  held->run(0, 1, in, out);  // still valid memory and plans
  EXPECT_TRUE(std::isfinite(y[0]));
}

// Hot reload under load through the real server: clients hammer :predict while a new version is
// dropped in and the old one removed; every request must succeed. As in `tickinfer serve`, the
// Keras files are parsed by children of the loader process started first, never by a fork of
// this process, which has the server's and the clients' threads by then.
TEST(ServingRepository, HotReloadUnderLoadFailsNoRequest) {
  ASSERT_TRUE(tickinfer::formats::start_loader_process()) << "this test must start with one thread";
  const auto loads_before = tickinfer::formats::isolated_load_counts();
  TempDir d;
  d.add_version("m", "1", kMlp);
  ServerFlags f;
  f.model_name = "m";
  f.model_base_path = d.model_path("m");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 2;
  f.file_system_poll_wait_seconds = 0.05;
  ModelServer server(f);
  server.start();
  const int port = server.rest_port();
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::set<std::string> seen_versions;
  std::mutex seen_mutex;
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&] {
      HttpClient c(port);
      const std::string body = "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}";
      while (!stop.load()) {
        const auto r = c.request("POST", "/v1/models/m:predict", body);
        if (r.status == 200) ok++;
        else failed++;
        const auto m = c.request("GET", "/v1/models/m/metadata");
        if (m.status == 200) {
          std::lock_guard<std::mutex> lock(seen_mutex);
          seen_versions.insert(nlohmann::json::parse(m.body)["model_spec"]["version"].get<std::string>());
        } else {
          failed++;
        }
      }
    });
  }
  auto wait_for = [&](auto pred) {
    for (int i = 0; i < 400 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return pred();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Drop version 2 in the way deployments should: write elsewhere, then rename into place.
  const std::string staging = d.path() + "/staging2";
  fs::create_directories(staging);
  fs::copy_file(kMlp, staging + "/model.keras");
  fs::rename(staging, d.model_path("m") + "/2");
  EXPECT_TRUE(wait_for([&] { return available(server.repository(), "m") == std::vector<int64_t>{2}; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  fs::remove_all(d.model_path("m") + "/1");
  // Version 3 arrives and 2 is removed at once.
  d.add_version("m", "3", kMlp);
  fs::remove_all(d.model_path("m") + "/2");
  EXPECT_TRUE(wait_for([&] { return available(server.repository(), "m") == std::vector<int64_t>{3}; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(ok.load(), 100);
  EXPECT_TRUE(seen_versions.count("1") && seen_versions.count("3")) << seen_versions.size();
  const auto loads = tickinfer::formats::isolated_load_counts();
  EXPECT_EQ(loads.via_fork, loads_before.via_fork);
  EXPECT_EQ(loads.via_loader_process - loads_before.via_loader_process, 3u);  // versions 1, 2 and 3
}

}  // namespace

namespace {

// A SavedModel version folder as TF Serving loads it: <base>/<version>/saved_model.pb + variables/.
std::string add_saved_model_version(const TempDir& d, const std::string& model, const std::string& version) {
  const fs::path dir = fs::path(d.model_path(model)) / version;
  fs::create_directories(dir.parent_path());
  fs::copy(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/savedmodel/dense_act_k3/k3_export", dir,
           fs::copy_options::recursive);
  return dir.string();
}

TEST(ServingRepository, ServesASavedModelWithItsSignatures) {
  TempDir d;
  add_saved_model_version(d, "m", "1");
  ModelRepository repo({config(d, "m")}, {}, nullptr);
  repo.poll_once();
  ASSERT_EQ(available(repo, "m"), (std::vector<int64_t>{1})) << status_of(repo, "m", 1)->error_message;
  const auto snap = repo.snapshot();
  const auto servable = snap->find("m")->available.back();
  EXPECT_EQ(servable->model_file(), d.model_path("m") + "/1");
  EXPECT_EQ(servable->served_signature(), "serving_default");
  // Keras 3 export writes `serve` and `serving_default` (the init op is not a signature).
  std::vector<std::string> keys;
  for (const auto& s : servable->signatures()) keys.push_back(s.key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"serve", "serving_default"}));
  for (const auto& s : servable->signatures()) {
    if (s.key != "serving_default") continue;
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0].key, servable->inputs()[0].name);
    EXPECT_EQ(s.inputs[0].tensor_name, "serving_default_" + s.inputs[0].key + ":0");
    EXPECT_EQ(s.inputs[0].shape.front(), -1);
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_EQ(s.outputs[0].key, "output_0");
  }
  EXPECT_TRUE(servable->serves_signature(""));
  EXPECT_TRUE(servable->serves_signature("serving_default"));
  EXPECT_FALSE(servable->serves_signature("nope"));
}

TEST(ServingRepository, SavedModelTagsSelectTheMetaGraph) {
  TempDir d;
  add_saved_model_version(d, "m", "1");
  RepositoryOptions ro;
  ro.saved_model_tags = "serve,gpu";  // a tag set the export does not have
  ModelRepository repo({config(d, "m")}, ro, nullptr);
  repo.poll_once();
  EXPECT_TRUE(available(repo, "m").empty());
  const auto s = status_of(repo, "m", 1);
  ASSERT_TRUE(s.has_value());
  EXPECT_NE(s->error_message.find("no MetaGraph with tags 'serve,gpu'"), std::string::npos) << s->error_message;
  EXPECT_NE(s->error_message.find("{serve}"), std::string::npos) << s->error_message;
}

}  // namespace
