#pragma once
// Sets $TICKINFER_TFLITE_ENGINE (formats/tflite_graph_lift.hpp) for the guard's lifetime, so a
// test can load a float TFLite file onto the interpreter (the escape hatch) or demand the graph
// engine. Model::load reads the variable; set it around loads on one thread only.
#include <cstdlib>
#include <optional>
#include <string>

namespace tickinfer::test {

class ScopedTfliteEngine {
 public:
  explicit ScopedTfliteEngine(const char* engine) {
    if (const char* old = std::getenv(kName)) old_ = old;
    ::setenv(kName, engine, 1);
  }
  ~ScopedTfliteEngine() {
    if (old_) {
      ::setenv(kName, old_->c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
  }
  ScopedTfliteEngine(const ScopedTfliteEngine&) = delete;
  ScopedTfliteEngine& operator=(const ScopedTfliteEngine&) = delete;

 private:
  static constexpr const char* kName = "TICKINFER_TFLITE_ENGINE";
  std::optional<std::string> old_;
};

}  // namespace tickinfer::test
