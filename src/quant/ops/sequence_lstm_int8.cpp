#include "quant/ops/sequence_lstm_variants.hpp"
namespace tickinfer::quant::ops::lstm {
std::unique_ptr<PreparedOp> prepare_int8(const PrepareContext& ctx, const LstmOperands&) { ctx.fail("int8 LSTM: not yet"); }
}
