#pragma once
// One `tickinfer quantize` run as a library call: calibrate a float program, choose the
// precisions (all int8-dynamic, all int8, or the auto search), build the quantized program, and
// report the per-layer error, each layer's share of the measured latency and the calibration
// coverage findings. The CLI (src/cli/quantize_command.cpp) only reads files and prints this.
#include <string>
#include <vector>

#include "quantizer/auto_precision.hpp"
#include "quantizer/calibration.hpp"
#include "quantizer/evaluation.hpp"
#include "quantizer/measured_choice.hpp"
#include "quantizer/quantizer.hpp"

namespace tickinfer::quantizer {

enum class QuantizeMode {
  Dynamic,  // every layer with weights int8-dynamic, the rest fp32
  Int8,     // every layer int8 where possible, else int8-dynamic, else fp32
  Bf16,     // every layer with weights bf16 where possible (FC, LSTM), the rest fp32
  Auto,     // the cheapest plan meeting max_error (auto_precision.hpp)
};

struct QuantizeRequest {
  QuantizeMode mode = QuantizeMode::Int8;
  double max_error = 0.01;            // auto: bound on the model's max_rel (evaluation.hpp)
  CalibrationOptions calibration;
  QuantizeOptions quantize;
  double coverage_threshold = 0.01;   // report inputs/layers with more validation values than
                                      // this fraction outside the calibrated range
  // GRU layers' arithmetic (QuantizeOptions::gru_own_arithmetic): ByMode is the converter's exact
  // arithmetic in Dynamic mode (what its dynamic-range file computes, bit for bit) and tickinfer's
  // own in the others (no converter file to equal; faster where U outgrows L1: docs/performance.md).
  enum class GruArithmetic { ByMode, Exact, Own } gru_arithmetic = GruArithmetic::ByMode;
  // The float program was lowered one step per call (LowerOptions::one_step_per_call): the
  // validation samples are ticks in order and the error table carries the state across them.
  bool one_step_per_call = false;
  int timing_runs = 200;              // invokes per op for the latency shares (0: MAC shares), and
                                      // per program for auto's measured fp32 pass (0: no such pass)
  double fp32_margin = 0.03;          // auto: how much faster fp32 must be to keep a layer in it
};

struct QuantizeReport {
  QuantizedProgram result;
  std::vector<Layer> layers;
  std::vector<Precision> precisions;    // one per layer
  std::vector<TensorRange> ranges;      // of the float program's tensors
  Evaluation evaluation;                // on the validation data
  std::vector<double> latency_share;    // one per layer, sums to 1
  bool latency_measured = false;        // false: shares are MAC counts
  std::vector<AutoStep> steps;          // auto mode
  bool met = true;                      // auto mode: max_error reached
  std::vector<MeasuredStep> measured;   // auto mode: each quantized layer timed against fp32
  bool choice_measured = false;         // auto mode with timing_runs > 0
  double ns_chosen = 0.0, ns_float = 0.0;  // auto mode: the chosen and the float program, same run
  std::vector<CoverageFinding> coverage;
};

// `validation` may be the calibration set again when the user gives none.
QuantizeReport quantize_model(const Program& float_program, const std::vector<SampleSet>& calibration,
                              const std::vector<SampleSet>& validation, const QuantizeRequest& request);

}  // namespace tickinfer::quantizer
