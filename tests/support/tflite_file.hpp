#pragma once
// Loads a .tflite file from disk for tests (formats::load_tflite over its bytes, labelled with the
// path), as a Program or as the shared Program the interpreter and Model::from_program take.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "formats/tflite/tflite_file.hpp"

namespace tickinfer::test {

inline tfl::Program load_tflite_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  return formats::load_tflite(bytes.data(), bytes.size(), path);
}

inline std::shared_ptr<const tfl::Program> load_shared_tflite_file(const std::string& path) {
  return std::make_shared<const tfl::Program>(load_tflite_file(path));
}

}  // namespace tickinfer::test
