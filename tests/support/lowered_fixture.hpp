#pragma once
// A Keras fixture lowered as the CUDA programs take it (engine/lowering/): window mode, with the
// case's window length where the model's time axis is None. For the tests that build
// DeviceProgram forms of one case and compare them.
#include "engine/lowering/lowered_graph.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::testing {

inline engine::LoweredGraph lower_fixture(const FixtureCase& c) {
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.window_length = c.window_length;
  return engine::lower_for_plan(model.graph(), opt);
}

}  // namespace tickinfer::testing
