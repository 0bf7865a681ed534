#pragma once
// Running a subgraph's ops from inside an op (WHILE's cond and body, CALL_ONCE's init): the
// subgraph is prepared once with the enclosing op's context, and run in order at eval.
#include <cstdint>
#include <memory>
#include <vector>

#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops {

using PreparedOps = std::vector<std::unique_ptr<PreparedOp>>;

// Prepares subgraph `index` (the file's numbering, >= 1) for an op at ctx.depth; fails naming
// ctx's op when it does not exist or subgraphs nest too deep.
PreparedOps prepare_subgraph(const PrepareContext& ctx, int index);
void run_subgraph(const PreparedOps& ops, const TensorMemory& mem) noexcept;
bool subgraph_has_state(const PreparedOps& ops);
void reset_subgraph(const PreparedOps& ops) noexcept;
int64_t subgraph_macs(const PreparedOps& ops);

// The op every output of which the interpreter computed at prepare (tflite/rewrite/program_rewrite.hpp):
// nothing left to do at eval.
std::unique_ptr<PreparedOp> make_folded_op();

}  // namespace tickinfer::tfl::ops
