// The integer LSTM's vector step kernels (the AVX2 and AVX-512 sets, each where the CPU has it)
// equal the scalar reference bit for bit: seeded random inputs over the whole int32/int16 ranges
// and realistic ones, lengths around the vector widths, guard values after the outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
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

// The vector sets this CPU runs (none on a machine without AVX2: those tests skip).
std::vector<const Int8LstmKernels*> vector_sets() {
  std::vector<const Int8LstmKernels*> sets;
  for (tickinfer::kernels::Isa isa : {tickinfer::kernels::Isa::Avx2, tickinfer::kernels::Isa::Avx512}) {
    if (tickinfer::kernels::isa_supported(isa) && int8_lstm_kernels(isa).isa == isa) sets.push_back(&int8_lstm_kernels(isa));
  }
  return sets;
}

TEST(QuantLstmKernels, DispatchNamesTheVariant) {
  EXPECT_STREQ(int8_lstm_kernels(tickinfer::kernels::Isa::Scalar).name, "scalar");
  if (have_avx2()) {
    EXPECT_STREQ(int8_lstm_kernels(tickinfer::kernels::Isa::Avx2).name, "avx2");  // not $TICKINFER_ISA's pick
  }
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) {
    EXPECT_STREQ(int8_lstm_kernels(tickinfer::kernels::Isa::Avx512).name, "avx512");
  }
}

// Every set's gate kernels, composed as the LSTM composes them (the input term for a chunk, then
// the recurrent term added, or a constant recurrent term added), equal TFLite's two-term gate
// written out here: sat16(MBQM(bias_h + acc_h) + sat16(MBQM(bias_x + acc_x))), double rounding.
TEST(QuantLstmKernels, GateKernelsEqualTheTwoTermRequantization) {
  std::vector<const Int8LstmKernels*> sets = vector_sets();
  sets.insert(sets.begin(), &int8_lstm_kernels(tickinfer::kernels::Isa::Scalar));
  const uint32_t seed = 20261206;
  std::mt19937 rng(seed);
  const auto wrap_add = [](int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  };
  const auto sat16 = [](int32_t v) { return static_cast<int16_t>(std::min(32767, std::max(-32768, v))); };
  for (int trial = 0; trial < 400; ++trial) {
    const int n = trial % 70;
    const bool wide = trial % 3 == 0;  // whole int32 range, else accumulator-like values
    std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), acc(-400000, 400000);
    std::vector<int32_t> ax(n), bx(n), ah(n), bh(n), th(n);
    std::uniform_real_distribution<double> m(1e-6, 4.0);
    const QuantizedMultiplier qx = quantize_multiplier(m(rng), Rounding::Double);
    const QuantizedMultiplier qh = quantize_multiplier(m(rng), Rounding::Double);
    std::vector<int16_t> want(n + 4, kGuard), want_x(n + 4, kGuard);
    for (int k = 0; k < n; ++k) {
      ax[k] = wide ? any(rng) : acc(rng);
      bx[k] = wide ? any(rng) : acc(rng);
      ah[k] = wide ? any(rng) : acc(rng);
      bh[k] = wide ? any(rng) : acc(rng);
      th[k] = multiply_by_quantized_multiplier<Rounding::Double>(wrap_add(ah[k], bh[k]), qh.multiplier, qh.shift);
      want_x[k] = sat16(multiply_by_quantized_multiplier<Rounding::Double>(wrap_add(ax[k], bx[k]), qx.multiplier, qx.shift));
      want[k] = sat16(wrap_add(th[k], want_x[k]));
    }
    for (const Int8LstmKernels* set : sets) {
      std::vector<int16_t> gx(n + 4, kGuard), got(n + 4, kGuard), got_const(n + 4, kGuard);
      set->gate_input(ax.data(), bx.data(), n, qx.multiplier, qx.shift, gx.data());
      ASSERT_EQ(gx, want_x) << set->name << " input term, seed " << seed << " trial " << trial << " n " << n;
      set->gate_recurrent(ah.data(), bh.data(), gx.data(), n, qh.multiplier, qh.shift, got.data());
      ASSERT_EQ(got, want) << set->name << " gate, seed " << seed << " trial " << trial << " n " << n;
      set->gate_const_h(th.data(), gx.data(), n, got_const.data());
      ASSERT_EQ(got_const, want) << set->name << " constant recurrent term, seed " << seed << " trial " << trial;
    }
  }
}

TEST(QuantLstmKernels, CellUpdateMatchesScalar) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
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
    std::vector<int16_t> want = c;
    int8_cell_scalar(cifg ? nullptr : i.data(), f.data(), g.data(), n, shift, clip, want.data());
    for (const Int8LstmKernels* set : vector_sets()) {
      std::vector<int16_t> got = c;
      set->cell(cifg ? nullptr : i.data(), f.data(), g.data(), n, shift, clip, got.data());
      ASSERT_EQ(got, want) << set->name << " seed " << seed << " trial " << trial << " n " << n;
    }
  }
}

// Each vector set computes the activations in vector lanes (fx16_avx2.hpp, fx16_avx512.hpp)
// where the scalar kernel looks them up: every function, every int16 input, and lengths around
// the vector widths.
TEST(QuantLstmKernels, ComputedActivationsEqualTheTableOnEveryInput) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::vector<fx16::Activation> functions{fx16::logistic_q3_activation()};
  for (int ib = 0; ib <= 6; ++ib) functions.push_back(fx16::tanh_activation(ib));
  std::vector<int16_t> every(65536);
  for (int r = -32768; r <= 32767; ++r) every[static_cast<size_t>(r + 32768)] = static_cast<int16_t>(r);
  for (const Int8LstmKernels* set : vector_sets()) {
    for (const fx16::Activation& f : functions) {
      std::vector<int16_t> got = every;
      set->computed.activate(f, got.data(), static_cast<int>(got.size()));
      for (int r = -32768; r <= 32767; ++r) {
        ASSERT_EQ(got[static_cast<size_t>(r + 32768)], (*f.table)[static_cast<size_t>(r + 32768)])
            << set->name << " function " << f.tanh_integer_bits << " (-1: logistic) input " << r;
      }
    }
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> v16(-32768, 32767);
    for (const fx16::Activation& f : functions) {
      for (int n = 0; n < 200; n += n < 70 ? 1 : 13) {
        std::vector<int16_t> x(n + 4, kGuard);
        for (int k = 0; k < n; ++k) x[k] = static_cast<int16_t>(v16(rng));
        std::vector<int16_t> want = x, got = x;
        int8_activate_scalar(f, want.data(), n);
        set->computed.activate(f, got.data(), n);
        ASSERT_EQ(got, want) << set->name << " n " << n;
      }
    }
  }
}

// Both forms of each set (the table's and the computed tanh), lengths around the vector widths,
// the side-by-side blocks and the lookup chunk.
TEST(QuantLstmKernels, HiddenStateMatchesScalar) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  const uint32_t seed = 5;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v16(-32768, 32767), gate(0, 32767), zp(-128, 127);
  std::uniform_real_distribution<double> scale(1e-9, 1e-4);
  const int longer[] = {63, 64, 65, 80, 128, 255, 256, 257, 300, 531};
  for (int trial = 0; trial < 220; ++trial) {
    const int n = trial < 200 ? trial % 70 : longer[trial % 10];
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
      for (const Int8LstmKernels* set : vector_sets()) {
        for (const Int8Activations* form : {&set->table, &set->computed}) {
          std::vector<int8_t> got(n + 4, 0x5A);
          (r == Rounding::Double ? form->hidden_double : form->hidden_single)(o.data(), c.data(), t, n, q.multiplier,
                                                                              q.shift, z, got.data());
          ASSERT_EQ(got, want) << set->name << " " << form->name << " seed " << seed << " trial " << trial << " n " << n;
        }
      }
    }
  }
}

// A forced form is taken where the set has it; the measured choice runs the given step with each
// form, takes one of the two and states both medians; the scalar set has one form and nothing to
// measure.
TEST(QuantLstmKernels, ActivationChoiceTimesTheGivenStep) {
  int calls = 0;
  std::vector<int16_t> x(64);
  const auto step = [&](const Int8Activations& form) {
    ++calls;
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int16_t>(static_cast<int>(i * 7919u % 16384u) - 8192);
    form.activate(fx16::logistic_q3_activation(), x.data(), static_cast<int>(x.size()));
  };
  const Int8LstmKernels& scalar = int8_lstm_kernels(tickinfer::kernels::Isa::Scalar);
  const Int8ActivationChoice plain = choose_int8_activations(scalar, ActivationForm::Auto, step);
  EXPECT_EQ(plain.form, &scalar.table);
  EXPECT_EQ(plain.note, "");
  EXPECT_EQ(choose_int8_activations(scalar, ActivationForm::Computed, step).form, &scalar.table);
  EXPECT_EQ(calls, 0);
  for (const Int8LstmKernels* set : vector_sets()) {
    EXPECT_EQ(choose_int8_activations(*set, ActivationForm::Table, step).form, &set->table);
    EXPECT_EQ(choose_int8_activations(*set, ActivationForm::Computed, step).form, &set->computed);
    EXPECT_EQ(calls, 0);
    const Int8ActivationChoice c = choose_int8_activations(*set, ActivationForm::Auto, step);
    ASSERT_TRUE(c.form == &set->table || c.form == &set->computed);
    EXPECT_GT(calls, 0);
    EXPECT_EQ(c.note.rfind("activation forms measured per step: table ", 0), 0u) << c.note;
    EXPECT_NE(c.note.find(" ns, computed "), std::string::npos) << c.note;
    calls = 0;
  }
}

// Auto keeps the tables only when they are clearly faster (97 % of the computed form's time or
// less): steps that spin for set times, tables half or the same.
TEST(QuantLstmKernels, ActivationChoiceKeepsTablesOnlyWhenClearlyFaster) {
  const auto spin = [](int ns) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  for (const Int8LstmKernels* set : vector_sets()) {
    const auto tables_half = [&](const Int8Activations& form) { spin(&form == &set->table ? 20000 : 40000); };
    EXPECT_EQ(choose_int8_activations(*set, ActivationForm::Auto, tables_half).form, &set->table);
    const auto same = [&](const Int8Activations&) { spin(20000); };
    EXPECT_EQ(choose_int8_activations(*set, ActivationForm::Auto, same).form, &set->computed);
  }
}

}  // namespace
