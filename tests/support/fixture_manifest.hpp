#pragma once
// Reads the manifest written by tools/make_fixtures.py: the models, their inputs and the
// outputs real TensorFlow/Keras produced for them. The directory comes from $TICKINFER_FIXTURES
// (set by CTest to the committed tests/fixtures; `make test` also points it at a directory the
// script just regenerated against live TensorFlow).
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "source_paths.hpp"

namespace tickinfer::testing {

struct FixtureCase {
  std::string name, format, dir, file;
  std::vector<std::string> inputs, outputs;
  double rtol = 1e-5, atol = 1e-6;
  std::string stream_in, stream_out;  // empty when the case has no stream fixture
  double stream_atol = 0;             // the stream fixture's own atol (the window's where it has none)
  // A sliding sequence [N, T + S, ...] and Keras on each of its S + 1 windows [N, S + 1, ...]
  // (incremental window updates); empty when the case has none.
  std::string slide_in, slide_out;
  double slide_atol = 1e-6;
  int window_length = 0;  // set when the model's time axis is None (variable length)
};

// A gtest-safe name for a case: its name, "bench_" first for the bench suites' models (whose names
// the fixtures may share), every other character an underscore.
inline std::string case_test_name(const FixtureCase& c) {
  std::string n = (c.dir.find("bench") != std::string::npos ? "bench_" : "") + c.name;
  for (char& ch : n)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) ch = '_';
  return n;
}

inline std::string fixtures_dir() {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
}

// All cases of <dir>/manifest.json; an empty list if the file is missing.
inline std::vector<FixtureCase> load_manifest(const std::string& dir) {
  std::ifstream f(dir + "/manifest.json");
  std::vector<FixtureCase> out;
  if (!f) return out;
  const nlohmann::json m = nlohmann::json::parse(f);
  for (const auto& c : m.at("cases")) {
    FixtureCase fc;
    fc.dir = dir;
    fc.name = c.at("name");
    fc.format = c.value("format", "");
    fc.file = dir + "/" + c.at("file").get<std::string>();
    for (const auto& p : c.at("inputs")) fc.inputs.push_back(dir + "/" + p.get<std::string>());
    for (const auto& p : c.at("outputs")) fc.outputs.push_back(dir + "/" + p.get<std::string>());
    fc.rtol = c.value("rtol", 1e-5);
    fc.atol = c.value("atol", 1e-6);
    fc.window_length = c.value("window_length", 0);
    if (c.contains("stream") && c["stream"].is_object()) {
      fc.stream_in = dir + "/" + c["stream"].at("inputs").get<std::string>();
      fc.stream_out = dir + "/" + c["stream"].at("outputs").get<std::string>();
      fc.stream_atol = c["stream"].value("atol", fc.atol);
    }
    if (c.contains("slide") && c["slide"].is_object()) {
      fc.slide_in = dir + "/" + c["slide"].at("inputs").get<std::string>();
      fc.slide_out = dir + "/" + c["slide"].at("outputs").get<std::string>();
      fc.slide_atol = c["slide"].value("atol", 1e-6);
    }
    out.push_back(std::move(fc));
  }
  return out;
}

}  // namespace tickinfer::testing
