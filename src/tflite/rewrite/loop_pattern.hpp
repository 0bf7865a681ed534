#pragma once
// Matching the converter's Keras 3 recurrent loops (a float WHILE over cond/body subgraphs, one
// per RNN layer): what the LSTM and GRU recognisers (lstm_loop.cpp, gru_loop.cpp) share. Both
// loops carry [step, t, buffer, h, ... , x] with x time-major [T, 1, F]; the cond is
// step < K1 && t < K2; the body advances both counters by one and writes h' into the buffer.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tflite/program.hpp"

namespace tickinfer::tfl::loop {

// A subgraph's ops by the tensors they produce.
struct BodyGraph {
  const Program& p;
  std::map<int, const Op*> producer;
  // The op of `code` (with no fused activation, and with every operand the matchers read present)
  // producing t, else nullptr.
  const Op* made(int t, OpCode code) const;
  const Tensor& tensor(int t) const { return p.tensors[static_cast<size_t>(t)]; }
  bool scalar_int(int t, int32_t* v) const;
  bool scalar_float(int t, float* v) const;
  bool float_const(int t, const Shape& shape) const;
};

BodyGraph graph_of(const Program& p, const std::vector<Op>& ops);

// A gate matrix of `shape`: a float constant, or an int8 one with symmetric scales (per tensor,
// or one per row) that a hybrid FULLY_CONNECTED can run (the converter's dynamic-range loops).
enum class Filter { None, Float, Int8 };
Filter filter_kind(const BodyGraph& g, int t, const Shape& shape);

// The other operand of a binary op when one of them is `t`, else -1.
int other(const Op* op, int t);

// out = in + 1 (int32).
bool counter_step(const BodyGraph& g, int out, int in);

// The cond subgraph is step < K1 && t < K2 (inputs 0 and 1; Keras 3) or one of the two alone
// (tf_keras writes t < K), with the smallest limit == T. Both counters start at 0 and step by 1,
// so either bounds the loop.
bool match_cond(const Program& p, const Subgraph& cond, int T);

// A WHILE with n loop variables, every input present, both subgraphs in the file, a body of n
// inputs and n outputs, and its first two inputs (step, t) constant 0; else {nullptr, nullptr}.
struct WhileParts {
  const Subgraph* cond = nullptr;
  const Subgraph* body = nullptr;
};
WhileParts while_parts(const Program& p, const Op& w, size_t n);

// body.outputs[2] is RESHAPE(h') to [1, 1, H] (last output only: *sequences = false) or
// DYNAMIC_UPDATE_SLICE(buffer, RESHAPE(h'), [t, ...]) of [T, 1, H] (*sequences = true), with
// h' = body.outputs[3].
bool match_buffer(const BodyGraph& g, const Subgraph& body, int T, int H, bool* sequences);

// Lowering a matched loop (lstm_loop.cpp, gru_loop_lowering.cpp): a new float32 activation tensor
// of `shape` appended to p, its index returned.
int new_activation(Program& p, const std::string& name, Shape shape);
// WHILE w gets a new subgraph holding `fused` alone, which the interpreter runs instead of the
// loop (Op::options.lowered_subgraph).
void attach_lowered(Program& p, Op& w, Op fused);
// lower(p, w) for every main-graph WHILE not lowered yet; it returns whether it lowered w. The
// count of those it did.
template <class Lower>
int lower_whiles(Program& p, Lower lower) {
  int n = 0;
  for (Op& w : p.ops) {
    if (w.code == OpCode::While && w.options.lowered_subgraph == 0 && lower(p, w)) ++n;
  }
  return n;
}

}  // namespace tickinfer::tfl::loop
