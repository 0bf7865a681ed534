#pragma once
// `tickinfer quantize --mode auto`'s last pass: the error search (auto_precision.hpp) weighs
// latency by MACs x a fixed cost per precision, which assumes a quantized layer is cheaper than
// fp32. On a core without int8 dot-product instructions (AVX2 without VNNI: one vpmaddwd of
// int16 pairs per 8 products, the rate of an fp32 FMA) an int8 convolution or a dynamic-range
// layer (its input quantized per row) can be slower than the same layer in fp32. So each layer
// the search left quantized, the largest share of the measured time first, is timed at fp32 in
// the same run: whole quantized programs, the chosen one and the one with that layer in fp32,
// invoked alternately on the interpreter that runs .tkq files (kernels::time_interleaved, the
// dense-or-sparse choice's measurement), medians compared. The layer stays
// fp32 when that program is faster by more than `margin` (fp32 is the reference: the model's
// error is evaluated again and must still meet the bound). The all-fp32 program is timed the
// same way, so the report says when no quantized form is faster on this CPU.
#include <vector>

#include "quantizer/evaluation.hpp"
#include "quantizer/quantizer.hpp"
#include "quantizer/sample_set.hpp"

namespace tickinfer::quantizer {

struct MeasuredStep {
  size_t layer = 0;
  Precision from{};
  double ns_quantized = 0.0, ns_fp32 = 0.0;  // median ns per invoke of the whole program, same run
  double error_fp32 = 0.0;                   // model max_rel with the layer in fp32
  bool kept_fp32 = false;                    // faster by more than the margin and within the bound
};

struct MeasuredChoice {
  std::vector<Precision> precisions;  // one per layer
  std::vector<MeasuredStep> steps;    // one per layer tried, in the order tried
  double ns_chosen = 0.0;             // the final program, median ns per invoke
  double ns_float = 0.0;              // the float program, same run
};

struct MeasureOptions {
  int runs = 200;        // interleaved rounds (of at least one invoke) per program per comparison
  double margin = 0.03;  // fp32 must be this much faster (a fraction of the quantized time): above
                         // the spread of medians of the same program on a shared core
  // The samples are ticks of a stream (a program lowered one step per call): the state runs on
  // from call to call, as in use; false: reset before each call, as for each window.
  bool carry_state = false;
};

MeasuredChoice keep_fp32_where_faster(const Program& float_program, const std::vector<Layer>& layers,
                                      const std::vector<TensorRange>& ranges, const Evaluator& evaluator,
                                      std::vector<Precision> precisions, double max_error,
                                      const QuantizeOptions& quantize, const std::vector<SampleSet>& samples,
                                      const MeasureOptions& options = {});

}  // namespace tickinfer::quantizer
