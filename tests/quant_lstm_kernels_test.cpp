// The integer LSTM's AVX2 step kernels equal the scalar reference bit for bit: seeded random
// inputs over the whole int32/int16 ranges and realistic ones, lengths around the vector width,
// guard values after the outputs. Skipped where the CPU has no AVX2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::ops::lstm;
namespace fx16 = tickinfer::tfl::ops::lstm::fx16;

constexpr int16_t kGuard = 0x5A5A;

bool have_avx2() { return tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2); }

TEST(QuantLstmKernels, DispatchNamesTheVariant) {
  EXPECT_STREQ(int8_lstm_kernels(tickinfer::kernels::Isa::Scalar).name, "scalar");
  if (have_avx2()) {
    EXPECT_STREQ(int8_lstm_kernels(tickinfer::kernels::Isa::Avx2).name, "avx2");  // not $TICKINFER_ISA's pick
  }
}

TEST(QuantLstmKernels, GateRequantizationAvx2MatchesScalar) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const Int8LstmKernels& fast = int8_lstm_kernels(tickinfer::kernels::Isa::Avx2);
  const uint32_t seed = 20261130;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = trial % 40;
    const bool wide = trial % 3 == 0;  // whole int32 range, else accumulator-like values
    std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), acc(-400000, 400000);
    std::vector<int32_t> ax(n), bx(n), ah(n), bh(n);
    for (int k = 0; k < n; ++k) {
      ax[k] = wide ? any(rng) : acc(rng);
      bx[k] = wide ? any(rng) : acc(rng);
      ah[k] = wide ? any(rng) : acc(rng);
      bh[k] = wide ? any(rng) : acc(rng);
    }
    std::uniform_real_distribution<double> m(1e-6, 4.0);
    const QuantizedMultiplier qx = quantize_multiplier(m(rng), Rounding::Double);
    const QuantizedMultiplier qh = quantize_multiplier(m(rng), Rounding::Double);
    const Int8GateScales s{qx.multiplier, qh.multiplier, qx.shift, qh.shift};
    std::vector<int16_t> want(n + 4, kGuard), got(n + 4, kGuard);
    int8_gate_scalar(ax.data(), bx.data(), ah.data(), bh.data(), n, s, want.data());
    fast.gate(ax.data(), bx.data(), ah.data(), bh.data(), n, s, got.data());
    ASSERT_EQ(got, want) << "seed " << seed << " trial " << trial << " n " << n;
  }
}

// The zero-state gate takes the recurrent term requantized in advance; both variants must equal
// the full two-term reference gate given the same recurrent accumulators.
TEST(QuantLstmKernels, ConstantRecurrentTermGateMatchesFullGate) {
  const uint32_t seed = 20261201;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = trial % 40;
    const bool wide = trial % 3 == 0;
    std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), acc(-400000, 400000);
    std::vector<int32_t> ax(n), bx(n), ah(n), bh(n), th(n);
    std::uniform_real_distribution<double> m(1e-6, 4.0);
    const QuantizedMultiplier qx = quantize_multiplier(m(rng), Rounding::Double);
    const QuantizedMultiplier qh = quantize_multiplier(m(rng), Rounding::Double);
    for (int k = 0; k < n; ++k) {
      ax[k] = wide ? any(rng) : acc(rng);
      bx[k] = wide ? any(rng) : acc(rng);
      ah[k] = wide ? any(rng) : acc(rng);
      bh[k] = wide ? any(rng) : acc(rng);
      const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(ah[k]) + static_cast<uint32_t>(bh[k]));
      th[k] = multiply_by_quantized_multiplier<Rounding::Double>(sum, qh.multiplier, qh.shift);
    }
    const Int8GateScales s{qx.multiplier, qh.multiplier, qx.shift, qh.shift};
    std::vector<int16_t> want(n + 4, kGuard), got(n + 4, kGuard);
    int8_gate_scalar(ax.data(), bx.data(), ah.data(), bh.data(), n, s, want.data());
    int8_gate_const_h_scalar(ax.data(), bx.data(), th.data(), n, qx.multiplier, qx.shift, got.data());
    ASSERT_EQ(got, want) << "scalar, seed " << seed << " trial " << trial << " n " << n;
    if (have_avx2()) {
      std::fill(got.begin(), got.end(), kGuard);
      int8_lstm_kernels(tickinfer::kernels::Isa::Avx2).gate_const_h(ax.data(), bx.data(), th.data(), n, qx.multiplier, qx.shift, got.data());
      ASSERT_EQ(got, want) << "avx2, seed " << seed << " trial " << trial << " n " << n;
    }
  }
}

TEST(QuantLstmKernels, CellUpdateAvx2MatchesScalar) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const Int8LstmKernels& fast = int8_lstm_kernels(tickinfer::kernels::Isa::Avx2);
  const uint32_t seed = 7;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v16(-32768, 32767), gate(0, 32767);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = trial % 40;
    const bool cifg = trial % 2 == 1;
    const bool any = trial % 5 == 0;  // arbitrary int16 gates, not only sigmoid outputs
    const int shift = 15 + trial % 7;  // 30 + cell_scale for cell scales 2^-15 .. 2^-9
    const auto clip = static_cast<int16_t>(trial % 4 == 0 ? 0 : 1000 + trial * 50);
    std::vector<int16_t> i(n), f(n), g(n), c(n + 4, kGuard);
    for (int k = 0; k < n; ++k) {
      i[k] = static_cast<int16_t>(any ? v16(rng) : gate(rng));
      f[k] = static_cast<int16_t>(any ? v16(rng) : gate(rng));
      g[k] = static_cast<int16_t>(v16(rng));
      c[k] = static_cast<int16_t>(v16(rng));
    }
    std::vector<int16_t> want = c, got = c;
    int8_cell_scalar(cifg ? nullptr : i.data(), f.data(), g.data(), n, shift, clip, want.data());
    fast.cell(cifg ? nullptr : i.data(), f.data(), g.data(), n, shift, clip, got.data());
    ASSERT_EQ(got, want) << "seed " << seed << " trial " << trial << " n " << n;
  }
}

// The AVX2 kernel computes the activations in vector lanes (fx16_avx2.hpp) where the scalar one
// looks them up: every function, every int16 input, and lengths around the vector width.
TEST(QuantLstmKernels, ActivationAvx2EqualsTheTableOnEveryInput) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const Int8LstmKernels& fast = int8_lstm_kernels(tickinfer::kernels::Isa::Avx2);
  std::vector<fx16::Activation> functions{fx16::logistic_q3_activation()};
  for (int ib = 0; ib <= 6; ++ib) functions.push_back(fx16::tanh_activation(ib));
  std::vector<int16_t> every(65536);
  for (int r = -32768; r <= 32767; ++r) every[static_cast<size_t>(r + 32768)] = static_cast<int16_t>(r);
  for (const fx16::Activation& f : functions) {
    std::vector<int16_t> got = every;
    fast.computed.activate(f, got.data(), static_cast<int>(got.size()));
    for (int r = -32768; r <= 32767; ++r) {
      ASSERT_EQ(got[static_cast<size_t>(r + 32768)], (*f.table)[static_cast<size_t>(r + 32768)])
          << "function " << f.tanh_integer_bits << " (-1: logistic) input " << r;
    }
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> v16(-32768, 32767);
  for (const fx16::Activation& f : functions) {
    for (int n = 0; n < 40; ++n) {
      std::vector<int16_t> x(n + 4, kGuard);
      for (int k = 0; k < n; ++k) x[k] = static_cast<int16_t>(v16(rng));
      std::vector<int16_t> want = x, got = x;
      int8_activate_scalar(f, want.data(), n);
      fast.computed.activate(f, got.data(), n);
      ASSERT_EQ(got, want) << "n " << n;
    }
  }
}

// Both AVX2 forms (the table's and the computed tanh), lengths around the vector widths, the
// four-vector blocks and the lookup chunk.
TEST(QuantLstmKernels, HiddenStateAvx2MatchesScalar) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const Int8LstmKernels& fast = int8_lstm_kernels(tickinfer::kernels::Isa::Avx2);
  const uint32_t seed = 5;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v16(-32768, 32767), gate(0, 32767), zp(-128, 127);
  std::uniform_real_distribution<double> scale(1e-9, 1e-4);
  const int longer[] = {63, 64, 65, 80, 128, 255, 256, 257, 300, 531};
  for (int trial = 0; trial < 220; ++trial) {
    const int n = trial < 200 ? trial % 40 : longer[trial % 10];
    const fx16::Activation t = fx16::tanh_activation(trial % 7);
    std::vector<int16_t> o(n), c(n);
    for (int k = 0; k < n; ++k) {
      o[k] = static_cast<int16_t>(trial % 4 == 0 ? v16(rng) : gate(rng));
      c[k] = static_cast<int16_t>(v16(rng));
    }
    const int32_t z = zp(rng);
    for (Rounding r : {Rounding::Double, Rounding::Single}) {
      const QuantizedMultiplier q = quantize_multiplier(scale(rng), r);
      std::vector<int8_t> want(n + 4, 0x5A);
      (r == Rounding::Double ? int8_hidden_double_scalar : int8_hidden_single_scalar)(o.data(), c.data(), t, n,
                                                                                      q.multiplier, q.shift, z, want.data());
      for (const Int8Activations* form : {&fast.table, &fast.computed}) {
        std::vector<int8_t> got(n + 4, 0x5A);
        (r == Rounding::Double ? form->hidden_double : form->hidden_single)(o.data(), c.data(), t, n, q.multiplier,
                                                                            q.shift, z, got.data());
        ASSERT_EQ(got, want) << form->name << " seed " << seed << " trial " << trial << " n " << n;
      }
    }
  }
}

// A forced form is taken where the set has it; the measured choice takes one of the two and
// states both medians; the scalar set has one form and nothing to measure.
TEST(QuantLstmKernels, ActivationChoiceNamesItsMeasurements) {
  const Int8LstmKernels& scalar = int8_lstm_kernels(tickinfer::kernels::Isa::Scalar);
  const Int8ActivationChoice plain = choose_int8_activations(scalar, ActivationForm::Auto, 64, fx16::tanh_activation(2));
  EXPECT_EQ(plain.form, &scalar.table);
  EXPECT_EQ(plain.note, "");
  EXPECT_EQ(choose_int8_activations(scalar, ActivationForm::Computed, 64, fx16::tanh_activation(2)).form, &scalar.table);
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const Int8LstmKernels& fast = int8_lstm_kernels(tickinfer::kernels::Isa::Avx2);
  EXPECT_EQ(choose_int8_activations(fast, ActivationForm::Table, 64, fx16::tanh_activation(2)).form, &fast.table);
  EXPECT_EQ(choose_int8_activations(fast, ActivationForm::Computed, 64, fx16::tanh_activation(2)).form, &fast.computed);
  const Int8ActivationChoice c = choose_int8_activations(fast, ActivationForm::Auto, 64, fx16::tanh_activation(2));
  ASSERT_TRUE(c.form == &fast.table || c.form == &fast.computed);
  EXPECT_EQ(c.note.rfind("activation forms measured per step: table ", 0), 0u) << c.note;
  EXPECT_NE(c.note.find(" ns, computed "), std::string::npos) << c.note;
}

}  // namespace
