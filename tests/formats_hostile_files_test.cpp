// Files that once made a parser crash or hang (found by fuzzing) must now be refused with a
// clear tickinfer::Error, quickly. One file per finding in tests/fixtures/hostile/.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "formats/model_file.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

TEST(HostileFiles, AreRefusedWithAnErrorNotAHang) {
  const std::filesystem::path dir = std::filesystem::path(::tickinfer::test::source_dir()) / "tests/fixtures/hostile";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(formats::load_model_file(entry.path().string()), Error) << entry.path();
    // libhdf5 looped forever on the first of these; a refusal takes microseconds.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << entry.path();
    ++seen;
  }
  EXPECT_GE(seen, 1);
}

TEST(HostileFiles, GlobalHeapCheckNamesTheProblem) {
  const auto path = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/hostile/global_heap_zero_free_space.h5";
  try {
    formats::load_model_file(path);
    FAIL() << "loaded a corrupt file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt HDF5 global heap"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tickinfer
