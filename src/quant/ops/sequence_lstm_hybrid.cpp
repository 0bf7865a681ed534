#include "quant/ops/sequence_lstm_variants.hpp"
namespace tickinfer::quant::ops::lstm {
std::unique_ptr<PreparedOp> prepare_hybrid(const PrepareContext& ctx, const LstmOperands&) { ctx.fail("hybrid LSTM: not yet"); }
}
