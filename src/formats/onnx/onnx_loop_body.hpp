#pragma once
// An ONNX Loop's body as the recurrent-loop lift (onnx_loop_rnn.cpp) reads it.
//
// tf2onnx converts a tf.while it cannot rewrite into an ONNX RNN op into a Loop whose body is
// the converted while body: inputs [iteration, cond, carried...], outputs [cond, carried...,
// scans...]. Weights travel as carried values the body passes through unchanged; the sequence is
// an outer-scope tensor the body Gathers at a counter. This header gives the lift the body's
// values by producer, its constants (folded through the slicing tf2onnx leaves in the body) and
// the check that the loop runs exactly once per time step.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

class LoopBody {
 public:
  LoopBody(Lowerer& L, const onnx::NodeProto& loop);

  Lowerer& L;
  const onnx::NodeProto& loop;
  const onnx::GraphProto& g;
  int carried = 0;  // loop-carried values (loop inputs after M and cond)

  // `name` with Identity nodes of the body skipped.
  std::string skip_identity(std::string name) const;
  // The body node producing `name` when its op is `op`, else nullptr.
  const onnx::NodeProto* made(const std::string& name, const char* op) const;
  const onnx::NodeProto* producer(const std::string& name) const;
  // The index of body input `name`, or -1.
  int input_index(const std::string& name) const;
  // A float or integer constant: a body initializer or Constant node, a carried value the body
  // passes through unchanged whose initial value is constant, an outer-scope constant, or a
  // an Identity / Squeeze / Slice / Split of those. nullopt when computed.
  std::optional<Tensor> constant(const std::string& name, int depth = 0) const;

  [[noreturn]] void refuse(const std::string& why) const;

  // Refuses unless the loop runs exactly `steps` iterations (-1: the window length is free, in
  // which case every length from 1 to 64, and 100, 128, 256 and 1000, are checked) and the value
  // `index` (a body name) equals the iteration number in each. The trip count M, the initial
  // condition, the carried counters and the body's condition are evaluated as the small integer
  // programs tf2onnx writes (Shape, Slice, Cast, Add, Less, And, ...).
  void check_runs_once_per_step(const std::string& index, int steps) const;

 private:
  std::unordered_map<std::string, std::pair<const onnx::NodeProto*, int>> producers_;
  std::map<std::string, Tensor> inits_;
  std::unordered_map<std::string, int> inputs_;
};

}  // namespace tickinfer::formats::onnx_import
