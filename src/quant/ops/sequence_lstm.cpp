// Placeholder until the UNIDIRECTIONAL_SEQUENCE_LSTM implementation lands (it replaces this file).
#include "quant/ops/ops.hpp"

namespace tickinfer::quant::ops {

std::unique_ptr<PreparedOp> prepare_sequence_lstm(const PrepareContext& ctx) {
  ctx.fail("UNIDIRECTIONAL_SEQUENCE_LSTM is not available in this build");
}

}  // namespace tickinfer::quant::ops
