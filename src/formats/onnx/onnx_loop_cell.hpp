#pragma once
// Reading a recurrent cell out of a Loop body (onnx_loop_rnn.cpp): the body's values as linear
// forms of the step's input x_t, a carried state h, and r * h (a GRU's reset product).
//
// Every gate argument of a Keras GRU or LSTM cell, however tf2onnx wrote it (MatMul + Add, a Gemm
// whose C is the state's product, a Split or Slice of a wider product, a Squeeze of the batch
// axis), is such a form: columns of x_t W + h U + b. Reading it as a form, instead of matching
// one op sequence, is what lets one matcher take the converter's variants; which columns feed
// which gate comes from where each form is used.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "formats/onnx/onnx_loop_body.hpp"

namespace tickinfer::formats::onnx_import {

enum Source { kX = 0, kH = 1, kResetH = 2 };

// sum over sources s of src_s @ w[s] + b; w[s] is [rows(s), cols] row-major (empty: no term).
struct Linear {
  int cols = 0;
  std::array<std::vector<float>, 3> w;
  std::array<int, 3> rows{0, 0, 0};
  std::vector<float> b;  // [cols]
  std::string reset;     // kResetH: the r of r * h
  bool has(Source s) const { return !w[s].empty(); }
  Linear columns(int c0, int c1) const;
};

class CellReader {
 public:
  explicit CellReader(LoopBody& body) : b_(body) {}

  std::string x_name, index_name;  // the outer sequence and the body value indexing it
  std::string h_name;  // the carried state the forms read as h (the matcher's, else the first one read)

  // `name` as a linear form; refuses naming what it is not.
  Linear linear(const std::string& name, int depth = 0);
  // Whether `name` is produced by an op a linear form is read through (a projection's columns).
  bool is_linear_op(const std::string& name) const;

  // The two operands of the `op` (Add, Mul) producing `name`, Identity skipped; refuses otherwise.
  std::array<std::string, 2> operands(const std::string& name, const char* op, const std::string& what) const;
  // The op producing `name` ("an input" for a body input), for refusals.
  std::string op_of(const std::string& name) const;
  bool is_one(const std::string& name) const;
  LoopBody& body() { return b_; }

 private:
  std::pair<Source, std::string> source(const std::string& name);

  LoopBody& b_;
};

}  // namespace tickinfer::formats::onnx_import
