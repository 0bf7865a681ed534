// prepare_layout_op: routes each layout op to the file that builds its copy plan
// (tflite/ops/layout_copy.hpp).
#include "tflite/ops/layout_copy.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {

std::unique_ptr<PreparedOp> prepare_layout_op(const PrepareContext& ctx) {
  switch (ctx.op.code) {
    case OpCode::Concatenation:
    case OpCode::Split:
    case OpCode::SplitV:
    case OpCode::Pack:
    case OpCode::Unpack: return prepare_concat_split(ctx);
    case OpCode::Pad:
    case OpCode::StridedSlice:
    case OpCode::Transpose:
    case OpCode::ReverseV2:
    case OpCode::Gather: return prepare_index_map(ctx);
    case OpCode::SpaceToBatchNd:
    case OpCode::BatchToSpaceNd: return prepare_space_batch(ctx);
    default: break;
  }
  ctx.fail("not a layout op");
}

}  // namespace tickinfer::tfl::ops
