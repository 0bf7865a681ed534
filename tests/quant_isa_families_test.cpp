// One ISA resolution, one table per kernel family: kernels::resolve_isa / best_isa / parse_isa
// decide the ISA once (the Interpreter keeps it), and each family, handed that Isa, picks its
// variant from its table by the rule of kernels/isa_variants.hpp: the asked ISA's own variant,
// else the first down avx512 -> avx2 -> portable -> scalar. Each ISA is forced in turn and every
// family must report exactly what that rule gives (skipped, with a message, where the CPU
// lacks the ISA).
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "kernels/isa_variants.hpp"
#include "kernels/kernel_set.hpp"
#include "support/quant_program_builder.hpp"
#include "tflite/interpreter.hpp"
#include "tflite/kernels/gemv_bf16.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/gemm_s8_rows.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/gemv_sparse_sequential.hpp"
#include "tflite/kernels/quantize_input.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/kernels/tflite_float_activations.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

using kernels::Isa;
namespace tk = tfl::kernels;

// The fallback rule written out independently of IsaVariants: the ISA a family with variants
// for `has` must run when `asked` is forced.
Isa expected(Isa asked, std::initializer_list<Isa> has) {
  for (Isa i = asked;; i = kernels::narrower_isa(i)) {
    for (Isa h : has) {
      if (h == i) return i;
    }
    if (i == Isa::Scalar) return Isa::Scalar;
  }
}

class IsaFamilies : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!kernels::isa_supported(GetParam())) {
      GTEST_SKIP() << "this CPU (or build) lacks " << kernels::isa_name(GetParam()) << "; nothing to force";
    }
  }
  Isa isa() const { return GetParam(); }
};

TEST_P(IsaFamilies, ResolutionReturnsTheForcedIsa) {
  EXPECT_EQ(kernels::resolve_isa(kernels::isa_name(isa())), isa());
}

TEST(IsaResolution, UnknownNamesAreErrorsNamingThem) {
  try {
    kernels::resolve_isa("avx9000");
    FAIL() << "an unknown ISA name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("avx9000"), std::string::npos) << e.what();
  }
}

TEST_P(IsaFamilies, InterpreterKeepsTheForcedIsa) {
  tfl::testing::ProgramBuilder b;
  const int x = b.tensor("x", tfl::DType::F32, {1, 4});
  const int y = b.tensor("y", tfl::DType::F32, {1, 4});
  b.op(tfl::OpCode::Relu, {x}, {y});
  b.program.inputs = {x};
  b.program.outputs = {y};
  tfl::InterpreterOptions o;
  o.isa = kernels::isa_name(isa());
  tfl::Interpreter in(std::make_shared<const tfl::Program>(b.program), o);
  EXPECT_EQ(in.kernel_isa(), isa());
  EXPECT_STREQ(in.isa(), kernels::isa_name(isa()));
}

TEST_P(IsaFamilies, Fp32KernelSetAndItsSequentialGemm4) {
  const kernels::KernelSet& ks = kernels::kernel_set(isa());
  EXPECT_EQ(ks.isa, isa());
  // gemm4_sequential exists for avx2 only; avx512 holds avx2's, scalar and portable none.
  const Isa want = expected(isa(), {Isa::Scalar, Isa::Avx2});
  if (want == Isa::Avx2) {
    EXPECT_NE(ks.gemm4_sequential, nullptr);
    EXPECT_EQ(ks.gemm4_sequential, kernels::kernel_set(Isa::Avx2).gemm4_sequential);
  } else {
    EXPECT_EQ(ks.gemm4_sequential, nullptr);
  }
}

TEST_P(IsaFamilies, Int8Gemv) {
  const bool vnni = tk::s8_vnni_supported();
  const Isa want = vnni ? expected(isa(), {Isa::Scalar, Isa::Avx2, Isa::Avx512}) : expected(isa(), {Isa::Scalar, Isa::Avx2});
  for (bool minus_128 : {false, true}) {
    const tk::S8Kernels& k = tk::s8_kernels(isa(), minus_128);
    EXPECT_EQ(k.isa, want) << k.name << (minus_128 ? " (weights reach -128)" : "");
    if (want == Isa::Avx2) {
      EXPECT_STREQ(k.name, minus_128 ? "avx2 rows" : "avx2 quad blocks");
    }
  }
}

// The interpreter's block-sparse float FC in the reference order: scalar, and AVX2 (which the
// avx512 ISA falls back to).
TEST_P(IsaFamilies, SparseSequentialFloatGemv) {
  const Isa want = expected(isa(), {Isa::Scalar, Isa::Avx2});
#if defined(__x86_64__)
  EXPECT_EQ(tk::gemv_sparse_sequential_for(isa()),
            want == Isa::Avx2 ? &tk::avx2::gemv_sparse_sequential : &tk::scalar::gemv_sparse_sequential);
#else
  EXPECT_EQ(tk::gemv_sparse_sequential_for(isa()), &tk::scalar::gemv_sparse_sequential);
#endif
}

// int8 BATCH_MATMUL's row and dot products: the plain build, and the AVX2 build.
TEST_P(IsaFamilies, Int8BatchMatMulProducts) {
#if defined(__x86_64__)
  EXPECT_EQ(tk::gemm_s8_row_kernels(isa()).isa, expected(isa(), {Isa::Scalar, Isa::Avx2}));
#else
  EXPECT_EQ(tk::gemm_s8_row_kernels(isa()).isa, Isa::Scalar);
#endif
}

TEST_P(IsaFamilies, Bf16Gemv) {
  EXPECT_EQ(tk::bf16_gemv(isa()).isa, expected(isa(), {Isa::Scalar, Isa::Avx2, Isa::Avx512}));
}

TEST_P(IsaFamilies, TfliteFloatActivations) {
  EXPECT_EQ(tk::tflite_float_activations(isa()).isa, expected(isa(), {Isa::Scalar, Isa::Avx2, Isa::Avx512}));
}

TEST_P(IsaFamilies, Int8LstmStepKernels) {
#if defined(__x86_64__)
  EXPECT_EQ(tfl::ops::lstm::int8_lstm_kernels(isa()).isa, expected(isa(), {Isa::Scalar, Isa::Avx2, Isa::Avx512}));
#else
  EXPECT_EQ(tfl::ops::lstm::int8_lstm_kernels(isa()).isa, Isa::Scalar);
#endif
}

TEST_P(IsaFamilies, HybridEpilogueInputAndRowQuantization) {
  const bool avx2 = expected(isa(), {Isa::Scalar, Isa::Avx2}) == Isa::Avx2;
  tk::HybridEpilogueFn epilogue = tk::hybrid_epilogue_portable;
  tk::HybridConvEpilogueFn conv_epilogue = tk::hybrid_conv_epilogue_portable;
  tk::HybridGateFn lstm_gate = tk::hybrid_gate_portable;
  tk::QuantizeF32S8Fn input = tk::quantize_f32_to_s8_scalar;
  tk::QuantizeRowBodyFn row = tk::quantize_row_body_portable;
  tk::MinMaxFn min_max = tk::min_max_portable;
#if defined(__x86_64__)
  if (avx2) {
    epilogue = tk::hybrid_epilogue_avx2;
    conv_epilogue = tk::hybrid_conv_epilogue_avx2;
    lstm_gate = tk::hybrid_gate_avx2;
    input = tk::quantize_f32_to_s8_avx2;
    row = tk::quantize_row_body_avx2;
    min_max = tk::min_max_avx2;
  }
  if (expected(isa(), {Isa::Scalar, Isa::Avx2, Isa::Avx512}) == Isa::Avx512) {
    conv_epilogue = tk::hybrid_conv_epilogue_avx512;
    input = tk::quantize_f32_to_s8_avx512;
    row = tk::quantize_row_body_avx512;
    min_max = tk::min_max_avx512;
  }
#else
  ASSERT_FALSE(avx2);
#endif
  EXPECT_EQ(tk::hybrid_epilogue(isa()), epilogue);
  EXPECT_EQ(tk::hybrid_conv_epilogue(isa()), conv_epilogue);
  EXPECT_EQ(tk::hybrid_gate(isa()), lstm_gate);
  EXPECT_EQ(tk::quantize_f32_to_s8(isa()), input);
  EXPECT_EQ(tk::quantize_row_kernels(isa()).body, row);
  EXPECT_EQ(tk::quantize_row_kernels(isa()).min_max, min_max);
}

INSTANTIATE_TEST_SUITE_P(EachIsa, IsaFamilies, ::testing::Values(Isa::Scalar, Isa::Portable, Isa::Avx2, Isa::Avx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(kernels::isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer
