#pragma once
// Batch feature computation for research and training sets (`tickinfer features`): runs the
// live pipeline over every tick of a source, with the bar grid spanning the source's first to
// last timestamp so both series edges are filled the way pandas
// interpolate(method="linear", limit_direction="both") with the gap limit fills them.
//
// Output: one row per (instrument, bar) for every bar of the grid, instruments in spec order,
// bars ascending. Columns: instrument, bar, state (RowState as a number), warm, then the
// features. `raw` holds the raw features; `standardized` the standardized ones (empty when the
// spec has no standardization). Invalid rows hold NaN.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "features/book_tick.hpp"
#include "features/feature_pipeline.hpp"
#include "features/feature_spec.hpp"
#include "features/tick_source.hpp"

namespace tickinfer::features {

struct FeatureMatrix {
  std::vector<std::string> columns;  // "instrument", "bar", "state", "warm", then feature names
  std::size_t rows = 0;
  std::vector<double> raw;           // rows x columns.size(), row-major
  std::vector<double> standardized;  // same shape, or empty
  PipelineCounters counters;
};

// Throws tickinfer::Error from the source (malformed input) or when an event names an unknown
// instrument under UnknownInstrumentPolicy::Fail.
FeatureMatrix compute_features(const FeatureSpec& spec, TickSource& source);

// A full-depth book source the batch path reads twice: once for the bar grid's span, once for the
// features (src/pipeline/itch_book_ticks.hpp replays ITCH files through the order books).
class BookTickReplay {
 public:
  virtual ~BookTickReplay() = default;
  // Every tick of the source in order, each valid only during the call. Throws tickinfer::Error
  // for a source that is not what it claims.
  virtual void replay(const std::function<void(const BookTick&)>& on_tick) = 0;
};

// The same over book ticks: every instrument of the source outside the spec is skipped (the
// source selects its own instruments, so unknown_instrument does not apply).
FeatureMatrix compute_book_features(const FeatureSpec& spec, BookTickReplay& source);

// Writes the matrix as .npy (float64, shape [rows, columns]) or .csv (header = columns, values
// with 17 significant digits), chosen by the extension. Throws tickinfer::Error naming the path.
void write_feature_matrix(const std::string& path, const FeatureMatrix& m, bool standardized);
// The .npy bytes of a float64 C-order 2-D array.
std::string serialize_npy_f8(std::size_t rows, std::size_t cols, const double* data);

// Counters as "name value" lines, for reports.
std::string format_counters(const PipelineCounters& c);

}  // namespace tickinfer::features
