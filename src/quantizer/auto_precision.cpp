// Greedy mixed-precision search (see auto_precision.hpp).
#include "quantizer/auto_precision.hpp"

#include <algorithm>
#include <limits>

namespace tickinfer::quantizer {

namespace {

// The next precision up the ladder that the layer allows, or F32 again when it is at the top.
Precision promote(const Layer& layer, Precision p) {
  static const Precision kLadder[] = {Precision::Int8, Precision::Int8Dynamic, Precision::BF16, Precision::F32};
  bool above = false;
  for (Precision q : kLadder) {
    if (above && layer_allows(layer, q)) return q;
    above = above || q == p;
  }
  return Precision::F32;
}

}  // namespace

AutoResult choose_precisions(const Program& float_program, const std::vector<Layer>& layers,
                             const std::vector<TensorRange>& ranges, const Evaluator& evaluator,
                             double max_error, const QuantizeOptions& options) {
  AutoResult r;
  for (const Layer& l : layers) r.precisions.push_back(nearest_allowed(l, Precision::Int8));
  const auto evaluate = [&](const std::vector<Precision>& plan) {
    return evaluator.evaluate(quantize_program(float_program, layers, plan, ranges, options));
  };
  r.evaluation = evaluate(r.precisions);
  int64_t total_macs = 0;
  for (const Layer& l : layers) total_macs += l.macs;
  if (total_macs <= 0) total_macs = 1;

  while (r.evaluation.output.max_rel() > max_error) {
    const double now = r.evaluation.output.max_rel();
    double best_score = -1.0;
    AutoStep best;
    Evaluation best_eval;
    // Every layer, every precision above its current one (a jump straight to bf16 or fp32 can
    // help where the next step alone does not).
    for (size_t l = 0; l < layers.size(); ++l) {
      for (Precision to = promote(layers[l], r.precisions[l]); r.precisions[l] != Precision::F32;
           to = promote(layers[l], to)) {
        auto plan = r.precisions;
        plan[l] = to;
        const Evaluation e = evaluate(plan);
        const double gain = now - e.output.max_rel();
        const double cost = static_cast<double>(layers[l].macs) / static_cast<double>(total_macs) *
                            (precision_cost(plan[l]) - precision_cost(r.precisions[l]));
        // Error removed per unit of latency added; a free promotion that helps always wins.
        const double score = gain <= 0.0 ? 0.0 : cost <= 0.0 ? std::numeric_limits<double>::infinity() : gain / cost;
        if (score > best_score) {
          best_score = score;
          best = {l, r.precisions[l], plan[l], now, e.output.max_rel(), cost};
          best_eval = e;
        }
        if (to == Precision::F32) break;
      }
    }
    if (best_score < 0.0) break;  // every layer is fp32 already
    if (best_score == 0.0) {
      // No single step reduces the error (quantization noise can mask a step): take the
      // cheapest step of the layer with the largest own error, so the search keeps moving.
      size_t worst = layers.size();
      for (size_t l = 0; l < layers.size(); ++l) {
        if (r.precisions[l] == Precision::F32) continue;
        if (worst == layers.size() || r.evaluation.layers[l].max_rel() > r.evaluation.layers[worst].max_rel()) worst = l;
      }
      auto plan = r.precisions;
      plan[worst] = promote(layers[worst], plan[worst]);
      best_eval = evaluate(plan);
      best = {worst, r.precisions[worst], plan[worst], now, best_eval.output.max_rel(),
              static_cast<double>(layers[worst].macs) / static_cast<double>(total_macs) *
                  (precision_cost(plan[worst]) - precision_cost(r.precisions[worst]))};
    }
    r.precisions[best.layer] = best.to;
    r.steps.push_back(best);
    r.evaluation = best_eval;
  }
  r.met = r.evaluation.output.max_rel() <= max_error;
  if (r.met) {
    // Prune: a promotion taken early may no longer be needed once later ones are in. Try each
    // promoted layer, the costliest first, back at every cheaper precision it allows; keep the
    // cheapest that still meets E. The result keeps the fewest layers above their floor.
    std::vector<size_t> order;
    for (size_t l = 0; l < layers.size(); ++l) {
      if (r.precisions[l] != nearest_allowed(layers[l], Precision::Int8)) order.push_back(l);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return layers[a].macs * precision_cost(r.precisions[a]) > layers[b].macs * precision_cost(r.precisions[b]);
    });
    for (size_t l : order) {
      for (Precision to = nearest_allowed(layers[l], Precision::Int8); to != r.precisions[l]; to = promote(layers[l], to)) {
        auto plan = r.precisions;
        plan[l] = to;
        const Evaluation e = evaluate(plan);
        if (e.output.max_rel() <= max_error) {
          const double cost = static_cast<double>(layers[l].macs) / static_cast<double>(total_macs) *
                              (precision_cost(to) - precision_cost(r.precisions[l]));
          r.steps.push_back({l, r.precisions[l], to, r.evaluation.output.max_rel(), e.output.max_rel(), cost});
          r.precisions[l] = to;
          r.evaluation = e;
          break;
        }
        if (to == Precision::F32) break;
      }
    }
  }
  return r;
}

}  // namespace tickinfer::quantizer
