#pragma once
// How an op of a Program becomes runnable. prepare_op() (tflite/ops/registry.cpp) turns each Op
// into a PreparedOp once, at interpreter construction: it checks types and shapes, derives
// fixed-point multipliers and shifts, builds lookup tables, packs weights for the chosen
// kernels and allocates the op's own scratch. eval() then only reads and writes memory: no
// allocation, lock, syscall or exception (the interpreter's hot-path test counts allocations).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/integer_form.hpp"
#include "tflite/program.hpp"

namespace tickinfer::tfl {

// How MultiplyByQuantizedMultiplier rounds: TFLite's reference kernels in a default source build
// round twice; a TFLITE_SINGLE_ROUNDING build rounds once. Both are supported bit-exactly. The
// TFLite interpreters on PyPI (ai-edge-litert 2.3, TensorFlow 2.21) round once: measured on the
// mlp_small int8 fixture, where double rounding leaves 10 of 200 outputs one step off their
// BUILTIN_REF output and single rounding none. So Single is the default; but see
// InterpreterOptions::tflite_mixed_rounding: the other int8 kernels of those interpreters round
// twice.
enum class Rounding : uint8_t { Double, Single };

// Whether a pruned int8 / hybrid FULLY_CONNECTED filter runs block-sparse (tflite/kernels/
// s8_sparse.hpp): CompileOptions::sparse (SparseMode) as the interpreter sees it. Auto times both
// forms at prepare (ops/fc_sparse_choice.hpp), Dense never, Sparse whenever a block is zero.
enum class SparseChoice : uint8_t { Auto, Dense, Sparse };

// How the integer LSTM applies its fixed-point logistic and tanh (ops/lstm/
// sequence_lstm_int8_kernels.hpp): Auto times the kernel set's table and computed forms at
// prepare and keeps the faster; Table and Computed force one (Computed falls back to the table in
// a set without it). Every form gives the same bits.
enum class ActivationForm : uint8_t { Auto, Table, Computed };

struct InterpreterOptions {
  Rounding rounding = Rounding::Single;
  // Kernel set for the int8 / hybrid / float kernels: "" = kernels::best_isa() (the fastest the
  // CPU supports, or $TICKINFER_ISA), "scalar" = the plain reference kernels, "portable", "avx2",
  // "avx512". Resolved once by the Interpreter (kernels::resolve_isa); every op gets the result.
  std::string isa;
  // true: variable tensors (LSTM state) are zeroed before every invoke, which is what the Keras
  // model computes for each window. false: they carry over (streaming, one step per invoke).
  bool reset_variables_each_invoke = true;
  // Keep every tensor in its own memory (no arena reuse), so all can be read after invoke:
  // calibration and per-layer error need this.
  bool keep_all_tensors = false;
  // The published TFLite interpreters do not round uniformly: measured op by op on the int8
  // fixtures (ai-edge-litert 2.3, BUILTIN_REF), FULLY_CONNECTED rounds once while CONV_2D, ADD,
  // SUB, MUL, SQUARED_DIFFERENCE, MEAN, SOFTMAX and the other requantizing kernels round twice.
  // true (default): match that, per op family, and ignore `rounding`; false: every op rounds as
  // `rounding` says (what a uniform single- or double-rounding TFLite build computes).
  bool tflite_mixed_rounding = true;
  // The activations' arena may not exceed this: a batch-1 model needing more is a broken or
  // hostile file, refused with an Error instead of an allocation of gigabytes.
  size_t max_arena_bytes = size_t{512} << 20;
  // Run a WHILE loop recognised as a Keras 3 LSTM layer as one UNIDIRECTIONAL_SEQUENCE_LSTM
  // (tflite/rewrite/lstm_loop.cpp); false runs every loop op by op (the reference the lowering is
  // tested against).
  bool lower_recurrent_loops = true;
  // Fuse a float LEAKY_RELU into the CONV_2D whose output it alone reads (applied in the
  // convolution's epilogue, the same formula: the same bits); false keeps both ops (the
  // reference the fusion is tested against, and what the graph-engine lift reads). Never with
  // keep_all_tensors: the conv's own output would hold nothing to read.
  bool fuse_activations = true;
  SparseChoice sparse = SparseChoice::Auto;
  ActivationForm lstm_activations = ActivationForm::Auto;
  // A WHILE that has not ended after this many iterations stops there (the converter's loops run
  // once per time step; a hostile cond could loop for ever). The fuzzers lower it.
  int64_t max_loop_iterations = int64_t{1} << 24;
};

// Where every tensor of the program lives during eval, fixed at prepare time: constants point
// into the Program's data, activations into the interpreter's arena.
struct TensorMemory {
  std::vector<void*> addr;  // indexed by tensor index
  template <class T>
  T* at(int tensor) const { return static_cast<T*>(addr[static_cast<size_t>(tensor)]); }
};

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  virtual void eval(const TensorMemory& mem) noexcept = 0;
  // One line for `tickinfer inspect --plan`: kernel and parameters chosen.
  virtual std::string describe() const { return {}; }
  // Multiply-accumulates of one eval (for bench floors and the quantizer's latency shares).
  virtual int64_t macs() const { return 0; }
  // Ops that keep state of their own between evals (CALL_ONCE's "done", a WHILE holding such
  // ops) say so; Interpreter::reset_state() then calls reset() on them (no allocation).
  virtual bool has_state() const { return false; }
  virtual void reset() noexcept {}
  // An int8 op's arithmetic for another executor (tflite/integer_form.hpp), from the parameters
  // eval uses, appended to `forms` (one per output); false, appending nothing, for an op without one.
  virtual bool integer_form(std::vector<IntegerForm>*) const { return false; }
  // An op with two kernels that compute the same bits but whose speeds depend on what the rest of
  // the program leaves in the caches (the integer LSTM's activation tables against its computed
  // activations) says so (true) and names them; the Interpreter times whole invokes with every
  // such op on form 0, then on form 1, and keeps the faster (Interpreter::choose_timed_forms).
  // use_form switches (prepare time, and the timing's invokes); initial_form is the op's own
  // choice, kept where the Interpreter does not time; note_timed_forms adds the measurement to
  // describe().
  virtual bool has_timed_forms() const { return false; }
  virtual const char* timed_form_name(int) const { return ""; }
  virtual int initial_form() const { return 0; }
  virtual void use_form(int) noexcept {}
  virtual void note_timed_forms(const std::string&) {}
};

struct PrepareContext {
  const Program& program;
  const Op& op;
  const InterpreterOptions& options;
  // The resolved ISA every kernel family of this op picks its variant for (kernels/isa_variants.hpp);
  // Scalar also selects the ops' plain reference loops.
  ::tickinfer::kernels::Isa isa;
  // How many WHILE / CALL_ONCE subgraphs enclose this op (a hostile file could nest them
  // without end; prepare refuses past a small limit).
  int depth = 0;

  bool has_input(size_t i) const { return i < op.inputs.size() && op.inputs[i] >= 0; }
  // Throw tickinfer::Error naming the op when missing.
  const Tensor& input(size_t i) const;
  const Tensor& output(size_t i) const;
  int input_index(size_t i) const { return has_input(i) ? op.inputs[i] : -1; }
  int output_index(size_t i) const { return op.outputs.at(i); }
  // An Error message prefix naming the op: "op 3 (FULLY_CONNECTED 'dense_1'): ".
  std::string where() const;
  [[noreturn]] void fail(const std::string& what) const;
};

// Dispatches on op.code; throws tickinfer::Error for an op or option it does not support,
// naming both.
std::unique_ptr<PreparedOp> prepare_op(const PrepareContext& ctx);

}  // namespace tickinfer::tfl
