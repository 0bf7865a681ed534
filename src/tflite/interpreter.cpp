// Interpreter: prepares a Program's ops, lays out the arena, runs the ops.
#include "tflite/interpreter.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "kernels/kernel_set.hpp"
#include "model/arena_plan.hpp"
#include "tflite/rewrite/program_rewrite.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::tfl {

namespace {

constexpr size_t kAlign = kArenaAlign;

size_t tensor_bytes(const Tensor& t) {
  const int64_t n = element_count(t.shape);
  return n < 0 ? 0 : static_cast<size_t>(n) * dtype_size(t.type);
}

size_t align_up(size_t v) { return arena_align_up(v); }

}  // namespace

void Interpreter::ArenaFree::operator()(void* p) const noexcept { std::free(p); }

Interpreter::~Interpreter() = default;

Interpreter::Interpreter(std::shared_ptr<const Program> program, InterpreterOptions options)
    : program_(std::move(program)), options_(std::move(options)) {
  if (!program_) throw Error("interpreter: no program");
  validate(*program_);
  isa_ = ::tickinfer::kernels::resolve_isa(options_.isa);
  quantize_input_ = kernels::quantize_f32_to_s8(isa_);
  program_ = rewrite_for_interpreter(program_, options_, isa_);
  const Program& p = *program_;

  const int n_tensors = static_cast<int>(p.tensors.size());
  const int n_ops = static_cast<int>(p.ops.size());
  std::vector<int> first(n_tensors, std::numeric_limits<int>::max()), last(n_tensors, -1);
  auto touch = [&](int t, int op) {
    if (t < 0) return;
    first[t] = std::min(first[t], op);
    last[t] = std::max(last[t], op);
  };
  for (int t : p.inputs) touch(t, -1);
  for (int i = 0; i < n_ops; ++i) {
    for (int t : p.ops[i].inputs) touch(t, i);
    for (int t : p.ops[i].outputs) touch(t, i);
    for (int t : p.ops[i].intermediates) touch(t, i);
  }
  for (int t : p.outputs) touch(t, n_ops);
  // A subgraph's tensors are used whenever its WHILE / CALL_ONCE runs, at any iteration: they
  // live for the whole invoke.
  for (const Subgraph& sg : p.subgraphs) {
    auto whole = [&](int t) {
      touch(t, -1);
      touch(t, n_ops);
    };
    for (const Op& op : sg.ops) {
      for (int t : op.inputs) whole(t);
      for (int t : op.outputs) whole(t);
      for (int t : op.intermediates) whole(t);
    }
    for (int t : sg.inputs) whole(t);
    for (int t : sg.outputs) whole(t);
  }

  // A RESHAPE, EXPAND_DIMS or SQUEEZE whose input dies there hands its output the input's
  // memory: layouts are row-major, so the bytes already lie where the output wants them and the
  // op's copy is skipped (shape_ops.cpp; a Keras Conv1D converts to a CONV_2D between two of
  // them, 8 KB copies each in float). Not for model inputs, variables or subgraph tensors (their
  // lifetimes are pinned) and not with keep_all_tensors (every tensor kept on its own).
  std::vector<int> shares(n_tensors, -1);  // tensor -> the tensor whose memory it uses
  std::vector<int> shared_until(last);     // a memory's last use over every tensor in it
  for (int i = 0; i < n_ops && !options_.keep_all_tensors; ++i) {
    const Op& op = p.ops[i];
    const bool reshapes = op.code == OpCode::Reshape || op.code == OpCode::ExpandDims || op.code == OpCode::Squeeze;
    if (!reshapes || op.inputs.empty() || op.outputs.size() != 1) continue;
    const int in = op.inputs[0], out = op.outputs[0];
    if (in < 0 || out < 0 || in == out) continue;
    const Tensor& a = p.tensors[in];
    const Tensor& b = p.tensors[out];
    const bool movable = !a.is_constant() && !a.is_variable && !b.is_constant() && !b.is_variable &&
                         first[in] != -1 && first[out] == i && last[in] == i && element_count(a.shape) >= 0 &&
                         element_count(b.shape) >= 0 && tensor_bytes(a) == tensor_bytes(b);
    if (!movable) continue;
    const int root = shares[in] >= 0 ? shares[in] : in;
    shares[out] = root;
    shared_until[root] = std::max(shared_until[root], last[out]);
  }

  // Lifetimes in op indices: model inputs are live from before op 0; outputs and variables
  // until after the last op.
  std::vector<ArenaLifetime> lives;
  for (int t = 0; t < n_tensors; ++t) {
    if (shares[t] >= 0) continue;
    const Tensor& tensor = p.tensors[t];
    // Model inputs always get memory, even one no op reads (the caller still writes it); so do
    // subgraph tensors (touched at -1 above).
    const bool is_input = first[t] == -1;
    const bool in_arena = tensor.is_variable || (!tensor.is_constant() && (last[t] >= 0 || is_input));
    if (!in_arena) continue;
    if (element_count(tensor.shape) < 0) {
      throw Error("tensor " + std::to_string(t) + " '" + tensor.name + "': unknown dimension in shape");
    }
    int lo = first[t], hi = shared_until[t];
    // Inputs stay intact for the whole run (as in TFLite), so invoking twice without writing
    // them again computes the same thing; variables and kept tensors live throughout too.
    if (tensor.is_variable || options_.keep_all_tensors || is_input) {
      lo = -1;
      hi = n_ops;
    }
    lives.push_back({t, lo, hi, tensor_bytes(tensor), 0});
  }
  arena_bytes_ = plan_arena(lives, !options_.keep_all_tensors);
  if (arena_bytes_ > options_.max_arena_bytes) {
    throw Error("the model's activations need " + std::to_string(arena_bytes_ >> 20) + " MiB, over the limit of " +
                std::to_string(options_.max_arena_bytes >> 20) + " MiB (InterpreterOptions::max_arena_bytes)");
  }
  const size_t alloc = std::max<size_t>(kAlign, align_up(arena_bytes_));
  arena_.reset(std::aligned_alloc(kAlign, alloc));
  if (!arena_) throw std::bad_alloc();
  std::memset(arena_.get(), 0, alloc);

  mem_.addr.assign(static_cast<size_t>(n_tensors), nullptr);
  for (int t = 0; t < n_tensors; ++t) {
    const Tensor& tensor = p.tensors[t];
    // Ops only read constants (they pack what they need at prepare), so pointing into the
    // Program's own bytes is safe.
    if (tensor.is_constant()) mem_.addr[t] = const_cast<uint8_t*>(tensor.data.data());
  }
  auto* base = static_cast<uint8_t*>(arena_.get());
  for (const ArenaLifetime& l : lives) mem_.addr[l.id] = base + l.offset;
  for (int t = 0; t < n_tensors; ++t) {
    if (shares[t] >= 0) mem_.addr[t] = mem_.addr[shares[t]];
  }

  for (const ArenaLifetime& l : lives) {
    const Tensor& tensor = p.tensors[l.id];
    if (!tensor.is_variable) continue;
    VariableRange v{mem_.addr[l.id], l.bytes, 0};
    if (tensor.type == DType::I8 && !tensor.quant.zero_point.empty()) {
      v.fill = static_cast<int8_t>(tensor.quant.zero_point[0]);
    }
    variables_.push_back(v);
  }
  reset_state();

  ops_.reserve(p.ops.size());
  for (const Op& op : p.ops) {
    PrepareContext ctx{p, op, options_, isa_};
    ops_.push_back(prepare_op(ctx));
    if (!ops_.back()) ctx.fail("no kernel");
    if (ops_.back()->has_state()) stateful_ops_.push_back(ops_.back().get());
  }
  choose_timed_forms();
  reset_state();
}

void Interpreter::reset_state() noexcept {
  for (const VariableRange& v : variables_) std::memset(v.data, static_cast<unsigned char>(v.fill), v.bytes);
  for (PreparedOp* op : stateful_ops_) op->reset();
}

void Interpreter::invoke() noexcept {
  if (options_.reset_variables_each_invoke) reset_state();
  for (auto& op : ops_) op->eval(mem_);
}

void Interpreter::invoke_ops(size_t first, size_t last) noexcept {
  if (options_.reset_variables_each_invoke) reset_state();
  invoke_range(first, last);
}

void Interpreter::invoke_range(size_t first, size_t last) noexcept {
  last = std::min(last, ops_.size());
  for (size_t i = first; i < last; ++i) ops_[i]->eval(mem_);
}

int64_t Interpreter::macs() const {
  int64_t total = 0;
  for (const auto& op : ops_) total += op->macs();
  return total;
}

std::string Interpreter::describe() const {
  std::ostringstream out;
  const Program& p = *program_;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = p.ops[i];
    out << i << ": " << op_name(op.code) << " '" << op.label << "' [" << precision_name(op.precision) << "] -> ";
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      const Tensor& t = p.tensors[op.outputs[k]];
      out << (k ? ", " : "") << dtype_name(t.type) << "[";
      for (size_t d = 0; d < t.shape.size(); ++d) out << (d ? "," : "") << t.shape[d];
      out << "]";
    }
    const std::string kernel = ops_[i]->describe();
    if (!kernel.empty()) out << "  " << kernel;
    out << "\n";
  }
  return out.str();
}

std::string Interpreter::integer_forms(size_t op, std::vector<IntegerForm>* out) const {
  if (ops_.at(op)->integer_form(out)) return {};
  const Op& o = program_->ops.at(op);
  return "op " + std::to_string(op) + " (" + op_name(o.code) + " '" + o.label + "') has no integer form (" +
         ops_[op]->describe() + ")";
}

}  // namespace tickinfer::tfl
