// The Interpreter's choice between the integer LSTM's activation forms by timing whole invokes
// (tflite/interpreter_timed_forms.cpp): made where the form is left to timing and the kernel set
// has both, named in the op's description, not made where a form is asked for; the interpreter
// it leaves has zeroed inputs and a reset state, so its outputs are TFLite's (the fixtures',
// written by the TFLite interpreter) bit for bit, the first one in stream mode too. (Programs of
// several ops go through the same choice in the TFLite fixture tests, against TFLite's outputs.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "quant_lstm_fixture.hpp"
#include "tflite/interpreter.hpp"

namespace {

using namespace tickinfer::tfl;

const char* kTimed = "forms timed over whole invokes of the program: table ";

std::vector<const char*> vector_isas() {
  std::vector<const char*> out;
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) out.push_back("avx2");
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) out.push_back("avx512");
  return out;
}

// Sample s of the fixture through the interpreter: its output bytes.
std::vector<uint8_t> run_sample(const lstm_fixture::LstmFixture& f, Interpreter& it, int s) {
  const size_t in_bytes = f.tensor_bytes(f.input_tensor()), out_bytes = f.tensor_bytes(f.output_tensor());
  std::memcpy(it.input_data(0), f.inputs.data() + in_bytes * static_cast<size_t>(s), in_bytes);
  it.invoke();
  const auto* out = static_cast<const uint8_t*>(it.output_data(0));
  return std::vector<uint8_t>(out, out + out_bytes);
}

std::vector<uint8_t> expected_sample(const lstm_fixture::LstmFixture& f, int s) {
  const size_t out_bytes = f.tensor_bytes(f.output_tensor());
  const auto first = f.outputs.begin() + static_cast<long>(out_bytes * static_cast<size_t>(s));
  return std::vector<uint8_t>(first, first + static_cast<long>(out_bytes));
}

TEST(QuantLstmTimedForms, ChosenOverWholeInvokesAndTheInterpreterLeftFresh) {
  const std::vector<const char*> isas = vector_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector kernel set with both activation forms on this CPU";
  for (const char* name : {"big_seq_int8", "small_int8", "peephole_int8"}) {
    const lstm_fixture::LstmFixture f = lstm_fixture::load(name);
    const auto program = std::make_shared<const Program>(f.program);
    const size_t in_bytes = f.tensor_bytes(f.input_tensor());
    for (const char* isa : isas) {
      for (const bool stream : {false, true}) {
        InterpreterOptions options;
        options.isa = isa;
        options.reset_variables_each_invoke = !stream;
        Interpreter it(program, options);
        const std::string what = std::string(name) + " " + isa + (stream ? " stream" : " window");
        // The form kept is the faster of the two timings the description names (printed to the
        // nanosecond: equal printed times may hide either order).
        const std::string d = it.describe();
        const size_t at = d.find(kTimed);
        ASSERT_NE(at, std::string::npos) << what << ": " << d;
        double table_ns = 0, computed_ns = 0;
        ASSERT_EQ(std::sscanf(d.c_str() + at + std::strlen(kTimed), "%lf ns, computed %lf ns", &table_ns, &computed_ns), 2) << d;
        if (computed_ns != table_ns) {
          EXPECT_NE(d.find(computed_ns < table_ns ? "activations=computed" : "activations=table"), std::string::npos) << d;
        }
        const auto* in = static_cast<const uint8_t*>(it.input_data(0));
        EXPECT_EQ(std::vector<uint8_t>(in, in + in_bytes), std::vector<uint8_t>(in_bytes, 0)) << what;
        // Window mode: every sample from the zero state; stream mode: the first one is.
        for (int s = 0; s < (stream ? 1 : f.samples); ++s) {
          EXPECT_EQ(run_sample(f, it, s), expected_sample(f, s)) << what << " sample " << s;
        }
      }
      for (const ActivationForm form : {ActivationForm::Table, ActivationForm::Computed}) {
        InterpreterOptions options;
        options.isa = isa;
        options.lstm_activations = form;
        const Interpreter it(program, options);
        const std::string d = it.describe();
        EXPECT_EQ(d.find(kTimed), std::string::npos) << name << " " << isa << ": " << d;
        EXPECT_NE(d.find(form == ActivationForm::Table ? "activations=table" : "activations=computed"), std::string::npos)
            << name << " " << isa << ": " << d;
      }
    }
  }
}

// The scalar set has one form: nothing to time.
TEST(QuantLstmTimedForms, NotTimedWithOneForm) {
  const lstm_fixture::LstmFixture f = lstm_fixture::load("small_int8");
  InterpreterOptions options;
  options.isa = "scalar";
  const Interpreter it(std::make_shared<const Program>(f.program), options);
  EXPECT_EQ(it.describe().find(kTimed), std::string::npos) << it.describe();
}

}  // namespace
