// The prepared UNIDIRECTIONAL_SEQUENCE_LSTM's eval never allocates or locks, in every variant
// (float, bf16 weights, hybrid, int8) and kernel set: global malloc/new and pthread_mutex_lock
// are counted around eval (tests/support/counting_allocator.hpp), the integer LSTM with either
// activation form.
#include <gtest/gtest.h>

#include <string>

#include "kernels/kernel_set.hpp"
#include "quant_lstm_fixture.hpp"
#include "support/counting_allocator.hpp"

namespace {

using namespace tickinfer::tfl;

TEST(QuantLstmHotPath, EvalDoesNotAllocateOrLock) {
  const char* isas[] = {"scalar", "portable", "avx2"};
  for (const char* name : {"small_float", "small_seq_bf16", "wide_dynamic", "big_seq_int8"}) {
    lstm_fixture::LstmFixture f = lstm_fixture::load(name);
    if (f.bf16_weights) lstm_fixture::make_weights_bf16(f);
    for (const char* isa : isas) {
      if (std::string(isa) == "avx2" && !tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) continue;
      // The integer LSTM's two activation forms (the others ignore the option).
      for (ActivationForm form : {ActivationForm::Table, ActivationForm::Computed}) {
        InterpreterOptions options;
        options.lstm_activations = form;
        auto op = lstm_fixture::prepare(f.program, options, isa);
        lstm_fixture::Memory m(f.program);
        std::memcpy(m.bytes(f.input_tensor()), f.inputs.data(), f.tensor_bytes(f.input_tensor()));
        op->eval(m.mem);  // first run outside the count (nothing is lazily built, but be fair)
        g_allocs = 0;
        g_locks = 0;
        g_counting = true;
        for (int i = 0; i < 5; ++i) op->eval(m.mem);
        g_counting = false;
        const char* form_name = form == ActivationForm::Table ? "table" : "computed";
        EXPECT_EQ(g_allocs.load(), 0) << name << " " << isa << " " << form_name;
        EXPECT_EQ(g_locks.load(), 0) << name << " " << isa << " " << form_name;
      }
    }
  }
}

}  // namespace
