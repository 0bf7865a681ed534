#pragma once
// The int8 formulas of the elementwise unary ops, evaluated into a 256-entry table at prepare time.
#include "tflite/kernels/lut.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {

// Fills `lut` with TFLite's int8 result of ctx.op for every input value; fails (naming the op)
// for an unsupported op or invalid quantization parameters.
void build_unary_int8_lut(const PrepareContext& ctx, const AffineParams& in, const AffineParams& out,
                          kernels::LutS8* lut);

}  // namespace tickinfer::tfl::ops
