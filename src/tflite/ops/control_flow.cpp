// WHILE, CALL_ONCE and the resource-variable ops (TFLite while.cc, call_once.cc, var_handle.cc,
// read_variable.cc, assign_variable.cc), for loops whose variables keep their shapes.
//  WHILE: the loop variables live in the op's output tensors. Each iteration copies them into the
//    cond subgraph's inputs, runs cond, stops when its bool output is false, else copies them into
//    the body's inputs, runs the body and copies its outputs back. A variable the cond (or body)
//    never reads is not copied in; a body output that is its own input is not copied back; a
//    loop invariant (the body's output is its own input and no body op writes it) is copied into
//    the body once, before the first iteration.
//  CALL_ONCE: runs the init subgraph on the first eval after a reset (Interpreter::reset_state).
//  READ_VARIABLE / ASSIGN_VARIABLE: the interpreter has replaced the handle operand by the
//    variable's own tensor (tflite/rewrite/program_rewrite.hpp), so both are copies; VAR_HANDLE does
//    nothing at eval.
#include <algorithm>
#include <cstring>
#include <set>

#include "tflite/ops/control_flow.hpp"
#include "tflite/ops/op_support.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl::ops {
namespace {

// A hostile file may nest WHILE / CALL_ONCE without end (a body naming its own WHILE).
constexpr int kMaxDepth = 8;

struct Copy {
  int src, dst;
  size_t bytes;
};

void run_copies(const std::vector<Copy>& copies, const TensorMemory& mem) noexcept {
  for (const Copy& c : copies) {
    void* d = mem.addr[static_cast<size_t>(c.dst)];
    const void* s = mem.addr[static_cast<size_t>(c.src)];
    if (d != s) std::memmove(d, s, c.bytes);
  }
}

size_t bytes_of(const Tensor& t) { return static_cast<size_t>(element_count(t.shape)) * dtype_size(t.type); }

// Tensors any op of the subgraph reads.
std::set<int> read_by(const Subgraph& sg) {
  std::set<int> r;
  for (const Op& op : sg.ops) r.insert(op.inputs.begin(), op.inputs.end());
  return r;
}

class WhileOp final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    run_copies(init_, mem);
    for (int64_t i = 0; i < max_iterations_; ++i) {
      run_copies(to_cond_, mem);
      run_subgraph(cond_, mem);
      if (*mem.at<const uint8_t>(cond_out_) == 0) break;  // a bool tensor's byte: nonzero = true
      run_copies(to_body_, mem);
      run_subgraph(body_, mem);
      run_copies(from_body_, mem);
    }
  }
  std::string describe() const override {
    return "loop: cond " + std::to_string(cond_.size()) + " ops, body " + std::to_string(body_.size()) + " ops";
  }
  int64_t macs() const override { return subgraph_macs(body_); }
  bool has_state() const override { return subgraph_has_state(cond_) || subgraph_has_state(body_); }
  void reset() noexcept override {
    reset_subgraph(cond_);
    reset_subgraph(body_);
  }

  std::vector<Copy> init_, to_cond_, to_body_, from_body_;
  PreparedOps cond_, body_;
  int cond_out_ = -1;
  int64_t max_iterations_ = 0;  // InterpreterOptions::max_loop_iterations
};

// Every loop variable has one type and shape in the WHILE's inputs and outputs and the cond's
// and body's inputs and outputs.
void check_loop_variables(const PrepareContext& ctx, const Subgraph& cond, const Subgraph& body) {
  const Op& op = ctx.op;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor& t = ctx.input(i);
    for (int x : {op.outputs[i], cond.inputs[i], body.inputs[i], body.outputs[i]}) {
      const Tensor& y = ctx.program.tensors[static_cast<size_t>(x)];
      if (y.type != t.type || y.shape != t.shape) {
        ctx.fail("loop variable " + std::to_string(i) + " ('" + t.name + "' " + dtype_name(t.type) + shape_str(t.shape) +
                 ") is '" + y.name + "' " + dtype_name(y.type) + shape_str(y.shape) +
                 " elsewhere in the loop: loops whose variables change shape are not supported");
      }
    }
  }
}

// A WHILE the interpreter recognised as a Keras LSTM layer (tflite/rewrite/lstm_loop.cpp; the GRU's
// below uses the same class): its
// UNIDIRECTIONAL_SEQUENCE_LSTM runs all T steps from the initial h and c over x (LstmLoopVars);
// then the loop's outputs are what the loop would have left: both counters T, the buffer (if
// the loop has one) every h_t (written by the fused op) or the last one, h, c and x.
class LoweredLstmLoop final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    run_copies(before_, mem);
    run_subgraph(lstm_, mem);
    for (int t : counters_) *mem.at<int32_t>(t) = steps_;
    run_copies(after_, mem);
  }
  std::string describe() const override {
    return std::string(layer_) + " loop (" + std::to_string(steps_) + " steps) run as " +
           (lstm_.empty() ? std::string() : lstm_[0]->describe());
  }
  int64_t macs() const override { return subgraph_macs(lstm_); }

  std::vector<Copy> before_, after_;
  std::vector<int> counters_;
  int32_t steps_ = 0;
  const char* layer_ = "LSTM";
  PreparedOps lstm_;  // the fused op (an LSTM's or a GRU's)
};

std::unique_ptr<PreparedOp> prepare_lowered_lstm_loop(const PrepareContext& ctx) {
  const Op& op = ctx.op;
  const Subgraph* sg = ctx.program.subgraph(op.options.lowered_subgraph);
  if (!sg || sg->ops.size() != 1 || sg->ops[0].code != OpCode::SequenceLstm || (op.inputs.size() != 6 && op.inputs.size() != 5)) {
    ctx.fail("the lowered LSTM loop's subgraph is not one UNIDIRECTIONAL_SEQUENCE_LSTM");
  }
  const LstmLoopVars v = lstm_loop_vars(op.inputs.size());
  const auto at = [](int i) { return static_cast<size_t>(i); };
  const Op& lstm = sg->ops[0];
  auto l = std::make_unique<LoweredLstmLoop>();
  l->lstm_ = prepare_subgraph(ctx, op.options.lowered_subgraph);
  const Tensor& seq = ctx.program.tensors[at(lstm.outputs[0])];
  const Tensor& h = ctx.input(at(v.h));
  l->steps_ = seq.shape.at(0);
  const size_t state = bytes_of(h);
  l->before_ = {{op.inputs[at(v.h)], lstm.inputs[18], state}, {op.inputs[at(v.c)], lstm.inputs[19], state}};
  l->counters_ = {op.outputs[0], op.outputs[1]};
  if (v.buffer >= 0 && lstm.outputs[0] != op.outputs[at(v.buffer)]) {  // the last h only
    l->after_.push_back({lstm.inputs[18], op.outputs[at(v.buffer)], state});
  }
  l->after_.push_back({lstm.inputs[18], op.outputs[at(v.h)], state});
  l->after_.push_back({lstm.inputs[19], op.outputs[at(v.c)], state});
  l->after_.push_back({op.inputs[at(v.x)], op.outputs[at(v.x)], bytes_of(ctx.input(at(v.x)))});
  return l;
}

// A WHILE recognised as a Keras GRU layer (tflite/rewrite/gru_loop_lowering.cpp): loop variables
// [step, t, buffer, h, x]; its SEQUENCE_GRU runs all T steps from the loop's h, then the outputs
// are what the loop would have left (as for the LSTM above).
std::unique_ptr<PreparedOp> prepare_lowered_gru_loop(const PrepareContext& ctx, const Op& gru) {
  const Op& op = ctx.op;
  if (op.inputs.size() != 5 || gru.inputs.size() != 6 || gru.inputs[0] != op.inputs[4]) {
    ctx.fail("the lowered GRU loop does not run over the loop's [step, t, buffer, h, x]");
  }
  auto l = std::make_unique<LoweredLstmLoop>();
  l->layer_ = "GRU";
  l->lstm_ = prepare_subgraph(ctx, op.options.lowered_subgraph);
  l->steps_ = ctx.program.tensors[static_cast<size_t>(gru.outputs[0])].shape.at(0);
  const size_t state = bytes_of(ctx.input(3));
  l->before_ = {{op.inputs[3], gru.inputs[5], state}};
  l->counters_ = {op.outputs[0], op.outputs[1]};
  if (gru.outputs[0] != op.outputs[2]) l->after_.push_back({gru.inputs[5], op.outputs[2], state});  // the last h only
  l->after_.push_back({gru.inputs[5], op.outputs[3], state});
  l->after_.push_back({op.inputs[4], op.outputs[4], bytes_of(ctx.input(4))});
  return l;
}

std::unique_ptr<PreparedOp> prepare_while(const PrepareContext& ctx) {
  const Op& op = ctx.op;
  const Subgraph& cond = *ctx.program.subgraph(op.options.cond_subgraph);  // validate() checked both
  const Subgraph& body = *ctx.program.subgraph(op.options.body_subgraph);
  check_loop_variables(ctx, cond, body);
  if (op.options.lowered_subgraph > 0) {
    const Subgraph* sg = ctx.program.subgraph(op.options.lowered_subgraph);
    if (sg && sg->ops.size() == 1 && sg->ops[0].code == OpCode::SequenceGru) return prepare_lowered_gru_loop(ctx, sg->ops[0]);
    return prepare_lowered_lstm_loop(ctx);
  }
  auto w = std::make_unique<WhileOp>();
  const std::set<int> cond_reads = read_by(cond), body_reads = read_by(body);
  std::set<int> body_writes;
  for (const Op& o : body.ops) body_writes.insert(o.outputs.begin(), o.outputs.end());
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int in = op.inputs[i], out = op.outputs[i];
    const int c = cond.inputs[i], b = body.inputs[i], bo = body.outputs[i];
    const Tensor& t = ctx.input(i);
    const size_t n = bytes_of(t);
    w->init_.push_back({in, out, n});
    const bool c_used = cond_reads.count(c) || cond.outputs[0] == c;
    if (c_used) w->to_cond_.push_back({out, c, n});
    bool b_used = body_reads.count(b) != 0;
    for (size_t j = 0; j < body.outputs.size(); ++j) b_used |= j != i && body.outputs[j] == b;
    if (bo == b && !body_writes.count(b)) {
      // A loop invariant (the body hands its input back unchanged, and no body op writes it:
      // a Keras RNN's input sequence): its value never changes, and a subgraph's tensors keep
      // their memory for the whole invoke, so it is copied into the body once, not twice per
      // iteration.
      if (b_used) w->init_.push_back({in, b, n});
    } else if (b_used || bo != b) {
      if (b_used) w->to_body_.push_back({out, b, n});
      w->from_body_.push_back({bo, out, n});
    }
  }
  const Tensor& flag = ctx.program.tensors[static_cast<size_t>(cond.outputs[0])];
  if (flag.type != DType::Bool || element_count(flag.shape) != 1) {
    ctx.fail("the cond subgraph's output '" + flag.name + "' must be one bool, not " + dtype_name(flag.type) + shape_str(flag.shape));
  }
  w->cond_out_ = cond.outputs[0];
  w->max_iterations_ = ctx.options.max_loop_iterations;
  w->cond_ = prepare_subgraph(ctx, op.options.cond_subgraph);
  w->body_ = prepare_subgraph(ctx, op.options.body_subgraph);
  return w;
}

class CallOnceOp final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    if (done_) return;
    run_subgraph(init_, mem);
    done_ = true;
  }
  std::string describe() const override { return "init: " + std::to_string(init_.size()) + " ops, first run only"; }
  bool has_state() const override { return true; }
  void reset() noexcept override {
    done_ = false;
    reset_subgraph(init_);
  }
  PreparedOps init_;

 private:
  bool done_ = false;
};

class NothingOp final : public PreparedOp {
 public:
  explicit NothingOp(std::string what) : what_(std::move(what)) {}
  void eval(const TensorMemory&) noexcept override {}
  std::string describe() const override { return what_; }

 private:
  std::string what_;
};

class CopyVariable final : public PreparedOp {
 public:
  CopyVariable(int src, int dst, size_t bytes, std::string what) : copy_{src, dst, bytes}, what_(std::move(what)) {}
  void eval(const TensorMemory& mem) noexcept override {
    std::memmove(mem.addr[static_cast<size_t>(copy_.dst)], mem.addr[static_cast<size_t>(copy_.src)], copy_.bytes);
  }
  std::string describe() const override { return what_; }

 private:
  Copy copy_;
  std::string what_;
};

// READ_VARIABLE (variable -> output) and ASSIGN_VARIABLE (value -> variable).
std::unique_ptr<PreparedOp> prepare_variable_copy(const PrepareContext& ctx) {
  const Tensor& var = ctx.input(0);
  if (var.type == DType::Resource) {
    ctx.fail("resource '" + var.name + "' does not come from a VAR_HANDLE of this program (a resource passed in from "
             "outside is not supported)");
  }
  const bool read = ctx.op.code == OpCode::ReadVariable;
  const Tensor& value = read ? ctx.output(0) : ctx.input(1);
  if (value.type != var.type || value.shape != var.shape) {
    ctx.fail("value '" + value.name + "' " + dtype_name(value.type) + shape_str(value.shape) + " does not match variable '" +
             var.name + "' " + dtype_name(var.type) + shape_str(var.shape));
  }
  const size_t n = bytes_of(var);
  if (read) return std::make_unique<CopyVariable>(ctx.input_index(0), ctx.output_index(0), n, "read " + var.name);
  return std::make_unique<CopyVariable>(ctx.input_index(1), ctx.input_index(0), n, "assign " + var.name);
}

}  // namespace

PreparedOps prepare_subgraph(const PrepareContext& ctx, int index) {
  if (ctx.depth >= kMaxDepth) {
    ctx.fail("subgraphs nest deeper than " + std::to_string(kMaxDepth) + " levels (or a subgraph runs itself)");
  }
  const Subgraph* sg = ctx.program.subgraph(index);
  if (!sg) ctx.fail("subgraph " + std::to_string(index) + " does not exist");
  PreparedOps ops;
  ops.reserve(sg->ops.size());
  for (const Op& op : sg->ops) {
    PrepareContext inner{ctx.program, op, ctx.options, ctx.isa, ctx.depth + 1};
    ops.push_back(prepare_op(inner));
    if (!ops.back()) inner.fail("no kernel");
  }
  return ops;
}

void run_subgraph(const PreparedOps& ops, const TensorMemory& mem) noexcept {
  for (const auto& op : ops) op->eval(mem);
}

bool subgraph_has_state(const PreparedOps& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const auto& op) { return op->has_state(); });
}

void reset_subgraph(const PreparedOps& ops) noexcept {
  for (const auto& op : ops) op->reset();
}

int64_t subgraph_macs(const PreparedOps& ops) {
  int64_t n = 0;
  for (const auto& op : ops) n += op->macs();
  return n;
}

std::unique_ptr<PreparedOp> prepare_control_flow(const PrepareContext& ctx) {
  switch (ctx.op.code) {
    case OpCode::While: return prepare_while(ctx);
    case OpCode::CallOnce: {
      auto c = std::make_unique<CallOnceOp>();
      c->init_ = prepare_subgraph(ctx, ctx.op.options.body_subgraph);
      return c;
    }
    case OpCode::VarHandle:
      return std::make_unique<NothingOp>("handle " + ctx.op.options.container + "/" + ctx.op.options.shared_name);
    case OpCode::ReadVariable:
    case OpCode::AssignVariable: return prepare_variable_copy(ctx);
    default: break;
  }
  ctx.fail("not a control-flow op");
}

std::unique_ptr<PreparedOp> make_folded_op() { return std::make_unique<NothingOp>("folded at prepare (a constant)"); }

}  // namespace tickinfer::tfl::ops
