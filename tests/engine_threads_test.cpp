// The thread-safety contract: one Model shared by all threads, one Plan per thread (clones share
// the packed weights read-only). Several threads running clones at once must each get exactly
// the single-threaded result. Run under ThreadSanitizer with `cmake --preset tsan`.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

TEST(Threads, ClonesRunConcurrentlyAndMatchTheSingleThreadedResult) {
  const Model model =
      Model::load(std::string(::tickinfer::test::source_dir()) + "/bench/models/lstm_window/model.keras");
  Plan base = compile(model);
  constexpr int kInputs = 64;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  std::vector<std::vector<float>> inputs(kInputs, std::vector<float>(base.input_size(0)));
  for (auto& in : inputs) {
    for (float& v : in) v = nd(rng);
  }
  std::vector<float> expected(kInputs);
  for (int i = 0; i < kInputs; ++i) base.run(inputs[i].data(), &expected[i]);

  constexpr int kThreads = 4;
  std::vector<Plan> plans;
  for (int t = 0; t < kThreads; ++t) plans.push_back(base.clone());
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      float y = 0;
      for (int rep = 0; rep < 50; ++rep) {
        for (int i = 0; i < kInputs; ++i) {
          plans[t].run(inputs[(i + t) % kInputs].data(), &y);
          if (y != expected[(i + t) % kInputs]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Threads, ModelsLoadConcurrently) {
  // Loading parses in child processes; concurrent loads from several threads must all succeed.
  const std::string path = std::string(::tickinfer::test::source_dir()) + "/bench/models/mlp_small/model.keras";
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Model m = Model::load(path);
      ok[t] = m.inputs().size() == 1 && m.inputs()[0].shape == Shape{10};
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

}  // namespace
}  // namespace tickinfer
