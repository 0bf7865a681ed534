#pragma once
// `tickinfer quantize --mode auto --max-error E`: the cheapest per-layer precision plan whose
// model output error (max_rel, see evaluation.hpp) on the validation data is at most E.
//
// Greedy: start with every layer at its cheapest precision (int8, or int8-dynamic where int8 is
// not possible). While the error is above E, try each layer at each precision above its current
// one on its ladder (int8 -> int8-dynamic -> bf16 -> fp32, skipping steps the layer cannot take),
// and keep the promotion that removes the most error per unit of added latency (the layer's MACs
// times the rise of precision_cost). Stops when the error is met or nothing is left to promote.
// Then prunes: each promoted layer, costliest first, goes back to the cheapest precision that
// still meets E (a demotion step, to < from), so the plan keeps the fewest layers promoted.
#include <string>
#include <vector>

#include "quantizer/evaluation.hpp"

namespace tickinfer::quantizer {

struct AutoStep {
  size_t layer = 0;
  Precision from{}, to{};
  double error_before = 0.0, error_after = 0.0;  // model max_rel
  double added_cost = 0.0;                        // share of the model's MACs x cost rise
};

struct AutoResult {
  std::vector<Precision> precisions;  // one per layer
  std::vector<AutoStep> steps;        // promotions in the order taken
  Evaluation evaluation;              // of the final plan
  bool met = false;                   // final max_rel <= max_error
};

AutoResult choose_precisions(const Program& float_program, const std::vector<Layer>& layers,
                             const std::vector<TensorRange>& ranges, const Evaluator& evaluator,
                             double max_error, const QuantizeOptions& options = {});

}  // namespace tickinfer::quantizer
