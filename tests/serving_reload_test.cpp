// Reconfiguring a serving repository (HandleReloadConfigRequest, a re-read --model_config_file):
// kept models keep their loaded versions and take a new policy, new models load and get their
// own metrics series, removed ones leave the snapshot; a bad list changes nothing. Loads on
// several threads (--num_load_threads) give the same repository as one at a time. Per-model
// batching (--enable_per_model_batching_parameters): a version's own batching_params.pbtxt sets
// its batch size, a half-written one fails the load, a version without one is not batched.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "serving/batch_scheduler.hpp"
#include "serving/config_file_watcher.hpp"
#include "serving/model_repository.hpp"
#include "support/serving_repo.hpp"
#include "tickinfer/error.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::TempDir;

namespace {

const std::string kMlp = tickinfer::testing::bench_model("mlp_small/model.keras");

ModelConfig config(const TempDir& d, const std::string& name) {
  ModelConfig c;
  c.name = name;
  c.base_path = d.model_path(name);
  return c;
}

std::vector<int64_t> available(const ModelRepository& r, const std::string& model) {
  const auto snap = r.snapshot();
  std::vector<int64_t> v;
  const ModelSnapshot* m = snap->find(model);
  if (!m) return {-1};
  for (const auto& s : m->available) v.push_back(s->version());
  return v;
}

TEST(ServingReload, KeptModelsKeepTheirVersionsNewOnesLoadRemovedOnesLeave) {
  TempDir d;
  d.add_version("a", "1", kMlp);
  d.add_version("a", "2", kMlp);
  d.add_version("b", "5", kMlp);
  Metrics metrics({"a"});
  ModelRepository repo({config(d, "a")}, {}, &metrics);
  repo.poll_once();
  ASSERT_EQ(available(repo, "a"), (std::vector<int64_t>{2}));
  const Servable* a2 = repo.snapshot()->find("a")->latest();

  // 'a' with all versions, 'b' new.
  ModelConfig a = config(d, "a");
  a.policy.kind = VersionPolicy::Kind::All;
  EXPECT_TRUE(repo.reconfigure({a, config(d, "b")}).empty());
  EXPECT_EQ(available(repo, "a"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(available(repo, "b"), (std::vector<int64_t>{5}));
  EXPECT_EQ(repo.snapshot()->find("a")->find_version(2).get(), a2);  // the same servable: not reloaded
  EXPECT_EQ(&metrics.for_model("b"), repo.snapshot()->find("b")->metrics);
  EXPECT_NE(&metrics.for_model("b"), &metrics.unknown_model());
  EXPECT_NE(metrics.render().find(":tickinfer:serving:model_version_available{model_name=\"b\"} 1"), std::string::npos);

  // Duplicate names: refused, nothing changed.
  EXPECT_THROW(repo.reconfigure({config(d, "b"), config(d, "b")}), tickinfer::Error);
  EXPECT_EQ(available(repo, "a"), (std::vector<int64_t>{1, 2}));

  // 'a' removed: gone from the snapshot, its gauge 0; a new model without versions is named.
  d.add_version("c", "not-a-version", kMlp);
  const auto unavailable = repo.reconfigure({config(d, "b"), config(d, "c")});
  EXPECT_EQ(unavailable, (std::vector<std::string>{"c"}));
  EXPECT_EQ(available(repo, "a"), (std::vector<int64_t>{-1}));
  EXPECT_EQ(available(repo, "b"), (std::vector<int64_t>{5}));
  EXPECT_NE(metrics.render().find(":tickinfer:serving:model_version_available{model_name=\"a\"} 0"), std::string::npos);
  EXPECT_FALSE(repo.ready());  // 'c' has nothing to serve
}

TEST(ServingReload, LoadsOnSeveralThreadsGiveTheSameRepository) {
  TempDir d;
  for (const char* v : {"1", "2", "3", "4"}) d.add_version("m", v, kMlp);
  d.add_version("n", "9", kMlp);
  d.add_version("broken", "1", kMlp);
  std::ofstream(d.model_path("broken") + "/1/model.keras", std::ios::trunc) << "half-written";
  ModelConfig m = config(d, "m");
  m.policy.kind = VersionPolicy::Kind::All;
  RepositoryOptions opt;
  opt.load_threads = 3;
  ModelRepository repo({m, config(d, "n"), config(d, "broken")}, opt, nullptr);
  repo.poll_once();
  EXPECT_EQ(available(repo, "m"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(available(repo, "n"), (std::vector<int64_t>{9}));
  EXPECT_TRUE(available(repo, "broken").empty());
  const auto snap = repo.snapshot();
  ASSERT_EQ(snap->find("broken")->statuses.size(), 1u);
  EXPECT_EQ(snap->find("broken")->statuses[0].state, VersionState::End);
  EXPECT_FALSE(snap->find("broken")->statuses[0].error_message.empty());
}

TEST(ServingReload, ConfigFileWatcherAppliesAChangedFileAndKeepsServingOnABadOne) {
  TempDir d;
  d.add_version("a", "1", kMlp);
  d.add_version("b", "2", kMlp);
  const std::string path = d.path() + "/models.config";
  const std::string first = "model_config_list { config { name: \"a\" base_path: \"" + d.model_path("a") + "\" } }";
  std::ofstream(path) << first;
  ModelRepository repo({config(d, "a")}, {}, nullptr);
  repo.poll_once();
  std::FILE* log = std::tmpfile();
  ConfigFileWatcher w(path, 3600, repo, first, log);  // the test checks; the thread's period never comes
  EXPECT_FALSE(w.check());  // unchanged
  std::ofstream(path) << "model_config_list { config { name: \"b\" base_path: \"" + d.model_path("b") + "\" } }";
  EXPECT_TRUE(w.check());
  EXPECT_EQ(available(repo, "b"), (std::vector<int64_t>{2}));
  EXPECT_EQ(available(repo, "a"), (std::vector<int64_t>{-1}));
  std::ofstream(path) << "model_config_list { config { name: \"b\" ";  // half-written
  EXPECT_FALSE(w.check());
  EXPECT_FALSE(w.check());  // the same bad content is reported once
  EXPECT_EQ(available(repo, "b"), (std::vector<int64_t>{2}));
  EXPECT_EQ(w.applied_count(), 1u);
  std::rewind(log);
  char buf[4096] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, log);
  const std::string text(buf, n);
  EXPECT_NE(text.find("changed: applied"), std::string::npos) << text;
  EXPECT_EQ(text.find("not applied"), text.rfind("not applied")) << text;  // once
  EXPECT_NE(text.find("not applied"), std::string::npos) << text;
  std::fclose(log);
}

TEST(ServingReload, PerModelBatchingParametersFromTheVersionFolder) {
  TempDir d;
  const std::string own = d.add_version("own", "1", kMlp);
  std::ofstream(own + "/batching_params.pbtxt") << "max_batch_size { value: 2 } batch_timeout_micros { value: 0 }";
  const std::string plain = d.add_version("plain", "1", kMlp);
  const std::string bad = d.add_version("bad", "1", kMlp);
  std::ofstream(bad + "/batching_params.pbtxt") << "max_batch_size { value: ";
  ServableOptions o;
  o.per_model_batching = true;
  const auto s_own = Servable::load(own, 1, o);
  const auto s_plain = Servable::load(plain, 1, o);
  ASSERT_NE(s_own->batching_parameters(), nullptr);
  EXPECT_EQ(s_own->batching_parameters()->max_batch_size, 2);
  EXPECT_EQ(s_plain->batching_parameters(), nullptr);
  EXPECT_THROW(Servable::load(bad, 1, o), tickinfer::Error);
  ServableOptions off;
  EXPECT_EQ(Servable::load(own, 1, off)->batching_parameters(), nullptr);  // the flag is off: not read

  BatchingParameters global;
  global.max_batch_size = 64;
  global.num_batch_threads = 1;
  BatchScheduler sched(global, 0, true);
  EXPECT_TRUE(sched.batches(*s_own));
  EXPECT_FALSE(sched.batches(*s_plain));
  float x[30] = {}, y[3] = {};
  const float* in[] = {x};
  float* out[] = {y};
  EXPECT_EQ(sched.run(s_own, 3, in, out).code, StatusCode::InvalidArgument);  // its own max_batch_size: 2
  EXPECT_EQ(sched.run(s_own, 2, in, out).code, StatusCode::Ok);
  BatchScheduler one_for_all(global, 0, false);
  EXPECT_TRUE(one_for_all.batches(*s_plain));
  EXPECT_EQ(one_for_all.run(s_own, 3, in, out).code, StatusCode::Ok);  // the global 64 applies
}

}  // namespace
