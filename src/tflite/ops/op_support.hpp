#pragma once
// Prepare-time helpers shared by the op families: operand type/shape checks that fail with the
// op named, per-tensor quantization parameters, fused-activation ranges. Nothing here runs in eval.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "tflite/fixed_point.hpp"
#include "tflite/integer_form.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops {

inline int64_t num_elements(const Tensor& t) { return element_count(t.shape); }

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// Fails unless t.type is one of `allowed`.
inline void require_type(const PrepareContext& ctx, const Tensor& t, const char* role,
                         std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (t.type == d) return;
  std::string names;
  for (DType d : allowed) names += std::string(names.empty() ? "" : " or ") + dtype_name(d);
  ctx.fail(std::string(role) + " '" + t.name + "' has type " + dtype_name(t.type) + ", expected " + names);
}

inline void require_same_type(const PrepareContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.type != b.type) {
    ctx.fail("tensors '" + a.name + "' (" + dtype_name(a.type) + ") and '" + b.name + "' (" +
             dtype_name(b.type) + ") must have the same type");
  }
}

// Fails unless the tensor has a known, non-negative shape; returns its element count.
inline int64_t require_static(const PrepareContext& ctx, const Tensor& t) {
  const int64_t n = num_elements(t);
  if (n < 0) ctx.fail("tensor '" + t.name + "' has an unknown dimension in shape " + shape_str(t.shape));
  return n;
}

inline void require_constant(const PrepareContext& ctx, const Tensor& t, const char* role) {
  if (!t.is_constant()) ctx.fail(std::string(role) + " '" + t.name + "' must be a constant tensor");
  const int64_t n = require_static(ctx, t);
  if (t.data.size() != static_cast<size_t>(n) * dtype_size(t.type)) {
    ctx.fail(std::string(role) + " '" + t.name + "' holds " + std::to_string(t.data.size()) +
             " bytes, its shape " + shape_str(t.shape) + " needs " +
             std::to_string(static_cast<size_t>(n) * dtype_size(t.type)));
  }
}

// Constant data as a typed pointer (little-endian host assumed, as everywhere in the project).
template <class T>
const T* const_data(const Tensor& t) { return reinterpret_cast<const T*>(t.data.data()); }

// Reads an int32 (or int64) constant vector operand into `out`.
inline std::vector<int64_t> const_ints(const PrepareContext& ctx, const Tensor& t, const char* role) {
  require_constant(ctx, t, role);
  require_type(ctx, t, role, {DType::I32, DType::I64});
  const int64_t n = num_elements(t);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (t.type == DType::I32) {
      int32_t x;
      std::memcpy(&x, t.data.data() + i * 4, 4);
      v[static_cast<size_t>(i)] = x;
    } else {
      std::memcpy(&v[static_cast<size_t>(i)], t.data.data() + i * 8, 8);
    }
  }
  return v;
}

struct AffineParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Per-tensor quantization of an int8/int16 tensor; fails when absent, per-axis, or invalid.
inline AffineParams per_tensor_params(const PrepareContext& ctx, const Tensor& t, const char* role) {
  if (t.quant.empty()) ctx.fail(std::string(role) + " '" + t.name + "' has no quantization parameters");
  if (t.quant.per_axis()) ctx.fail(std::string(role) + " '" + t.name + "' must be quantized per tensor");
  AffineParams p;
  p.scale = t.quant.scale[0];
  p.zero_point = t.quant.zero_point.empty() ? 0 : static_cast<int32_t>(t.quant.zero_point[0]);
  if (!(p.scale > 0.0f) || !std::isfinite(p.scale)) {
    ctx.fail(std::string(role) + " '" + t.name + "' has scale " + std::to_string(p.scale) + " (must be > 0)");
  }
  const int64_t zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
  const int64_t lo = t.type == DType::I16 ? -32768 : -128, hi = t.type == DType::I16 ? 32767 : 127;
  if (zp < lo || zp > hi) ctx.fail(std::string(role) + " '" + t.name + "' zero point " + std::to_string(zp) + " is out of range");
  return p;
}

// Float bounds of a fused activation (CalculateActivationRange); Tanh / SignBit are not clamp
// activations and are refused.
inline void float_activation_range(const PrepareContext& ctx, FusedActivation act, float* lo, float* hi) {
  const float inf = std::numeric_limits<float>::infinity();
  switch (act) {
    case FusedActivation::None: *lo = -inf; *hi = inf; return;
    case FusedActivation::Relu: *lo = 0.0f; *hi = inf; return;
    case FusedActivation::ReluN1To1: *lo = -1.0f; *hi = 1.0f; return;
    case FusedActivation::Relu6: *lo = 0.0f; *hi = 6.0f; return;
    default: break;
  }
  ctx.fail("fused activation " + std::to_string(static_cast<int>(act)) + " (TANH/SIGN_BIT) is not supported on this op");
}

// int8 output bounds of a fused activation for an output with params `out`.
inline void int8_activation_range(const PrepareContext& ctx, FusedActivation act, const AffineParams& out,
                                  int32_t* lo, int32_t* hi) {
  if (!quantized_activation_range(act, out.scale, out.zero_point, -128, 127, lo, hi)) {
    ctx.fail("fused activation " + std::to_string(static_cast<int>(act)) + " (TANH/SIGN_BIT) is not supported on an int8 op");
  }
}

// The rounding this op's requantization uses (InterpreterOptions::tflite_mixed_rounding).
// FULLY_CONNECTED rounds once on a dense filter, but a filter the file stored sparse runs
// TFLite's block-sparse kernel (tensor_utils::SparseMatrixBatchVectorMultiplyAccumulate1x16),
// which rounds twice like the other int8 kernels: measured layer by layer on the pruned MLP of
// tests/fixtures/fidelity_repro (a filter densified by a DENSIFY op is dense to FULLY_CONNECTED).
inline Rounding rounding(const PrepareContext& ctx) {
  if (!ctx.options.tflite_mixed_rounding) return ctx.options.rounding;
  if (ctx.op.code != OpCode::FullyConnected) return Rounding::Double;
  const bool sparse_filter = ctx.has_input(1) && ctx.input(1).sparse_in_file;
  return sparse_filter ? Rounding::Double : Rounding::Single;
}

// An int32 accumulator's requantization into an op's integer form (one multiplier and shift, or
// one per unit / output channel).
inline void requant_form(RequantForm r, const std::vector<int32_t>& mult, const std::vector<int32_t>& shift,
                         int32_t in_offset, int32_t out_zp, int32_t lo, int32_t hi, IntegerForm* f) {
  f->requant = r;
  f->multiplier = mult;
  f->shift = shift;
  f->in_offset = in_offset;
  f->out_zp = out_zp;
  f->lo = lo;
  f->hi = hi;
}

// A 256-entry int8 table op (a LUT activation, a binary op with one constant operand) as its
// integer form.
inline bool table_form(const int8_t (&table)[256], int in, int out, int64_t count, std::vector<IntegerForm>* forms) {
  IntegerForm* f = &forms->emplace_back();
  f->kind = IntegerKind::Table;
  f->inputs = {in};
  f->output = out;
  f->count = count;
  std::memcpy(f->table, table, sizeof f->table);
  return true;
}

}  // namespace tickinfer::tfl::ops
