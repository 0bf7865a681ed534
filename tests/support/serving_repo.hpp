#pragma once
// Scratch model repositories for the serving tests: a temporary folder of version folders
// holding copies of the committed Keras fixtures.
#include <unistd.h>

#include <filesystem>
#include <string>
#include "source_paths.hpp"

namespace tickinfer::testing {

inline std::string fixture_path(const std::string& rel) {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return std::string(env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures") + "/" + rel;
}
// ServableOptions with `n` plans and every other field at its default.
template <class Options>
Options with_plans(size_t n) {
  Options o;
  o.num_plans = n;
  return o;
}

inline std::string bench_model(const std::string& rel) {
  return std::string(::tickinfer::test::source_dir()) + "/bench/models/" + rel;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tickinfer_serving_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Copies `model_file` to <path>/<model>/<version>/model.keras (or model.h5 / model.tflite /
  // model.tkq, keeping the file's own extension for those formats).
  std::string add_version(const std::string& model, const std::string& version,
                          const std::string& model_file) const {
    const auto dir = std::filesystem::path(path_) / model / version;
    std::filesystem::create_directories(dir);
    const std::string ext = std::filesystem::path(model_file).extension().string();
    const std::string name = (ext == ".h5" || ext == ".tflite" || ext == ".tkq") ? "model" + ext : "model.keras";
    std::filesystem::copy_file(model_file, dir / name, std::filesystem::copy_options::overwrite_existing);
    return dir.string();
  }
  std::string model_path(const std::string& model) const { return path_ + "/" + model; }

 private:
  std::string path_;
};

}  // namespace tickinfer::testing
