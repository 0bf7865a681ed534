// UNIDIRECTIONAL_SEQUENCE_LSTM: checks the operands and picks the variant from their types.
#include <string>

#include "tflite/ops/ops.hpp"
#include "tflite/ops/lstm/sequence_lstm_variants.hpp"

namespace tickinfer::tfl::ops {

std::unique_ptr<PreparedOp> prepare_sequence_lstm(const PrepareContext& ctx) {
  const lstm::LstmOperands o = lstm::parse_lstm_operands(ctx);
  const DType in = ctx.program.tensors[static_cast<size_t>(o.input)].type;
  const DType w = ctx.program.tensors[static_cast<size_t>(o.input_weights[lstm::kOutputGate])].type;
  if (in == DType::F32 && (w == DType::F32 || w == DType::BF16)) return lstm::prepare_float(ctx, o);
  if (in == DType::F32 && w == DType::I8) {
    return ctx.op.options.keras_cell ? lstm::prepare_keras_cell_hybrid(ctx, o) : lstm::prepare_hybrid(ctx, o);
  }
  if (in == DType::I8 && w == DType::I8) return lstm::prepare_int8(ctx, o);
  ctx.fail(std::string("unsupported type combination: input ") + dtype_name(in) + ", weights " +
           dtype_name(w) + " (supported: float32/float32, float32/bfloat16, float32/int8 hybrid, int8/int8)");
}

}  // namespace tickinfer::tfl::ops
