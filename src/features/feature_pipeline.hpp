#pragma once
// The live feature pipeline: per-tick incremental features for a configured instrument set,
// bar rows with gap handling, standardization and the per-instrument window for models.
//
// Per event (on_event / on_tick, the hot path; noexcept, O(width) plus rows closed, no
// allocation, no lock, no syscall):
//   1. the instrument is looked up in a preallocated table (unknown: counted and ignored, or
//      reported as UnknownInstrument under the Fail policy: the caller decides to stop);
//   2. the event is validated; an invalid one is counted by reason and handled by the policy;
//   3. a valid event updates every feature; the instrument's current vector (raw and, when
//      configured, standardized as float model input) is returned in FeatureUpdate.
//
// Bars and gaps. A bar is the half-open exchange-time interval [k*bar_ns, (k+1)*bar_ns); its
// row is the feature vector as of the last event of the instrument in that bar. A bar is
// observed when an accepted event (or, under hold_last, an invalid one) fell in it after the
// instrument's first valid quote; missing when nothing did; invalid under mark_invalid when an
// invalid event fell in it. Rows are emitted in bar order when a later bar begins:
//   * a run of m <= gap_limit missing bars between two observed bars is filled by linear
//     interpolation between them (per column, in bar index), emitted when the right-hand
//     observed bar closes: the live path never guesses ahead, so during the gap no rows are
//     emitted and no model runs;
//   * a longer run, or any run that contains an invalid bar, becomes invalid rows (NaN), as
//     soon as that is known (on_timer advances time when no events come);
//   * batch runs (set_grid / finish) also fill the edges like pandas limit_direction="both":
//     missing bars before the first observed bar are back-filled, those after the last are
//     forward-filled, each only when the run is at most gap_limit long and holds no invalid bar.
// Each row is standardized, pushed into the window ring (WindowRing, contiguous [T, width]
// float view) and handed to an optional RowSink. A model must run only when window_ready.
//
// Threads: one thread owns the pipeline (all calls above). Rolling standardization refits run
// on another thread through refit_step(), or synchronously after each row when
// Options::synchronous_refit (batch, deterministic).
#include <cstdint>
#include <memory>
#include <vector>

#include "features/book_tick.hpp"
#include "features/feature.hpp"
#include "features/feature_spec.hpp"
#include "features/standardizer.hpp"
#include "features/tick_source.hpp"
#include "features/validation.hpp"
#include "features/window_ring.hpp"
#include "tickinfer/market_data.hpp"

namespace tickinfer::features {

enum class RowState : std::uint8_t {
  Invalid = 0,       // long gap, gap with an invalid bar, or an invalid bar: NaN, never modelled
  Observed = 1,      // the instrument had an event in the bar
  Interpolated = 2,  // inside a short gap, linear between the observed rows around it
  EdgeFilled = 3,    // batch only: short run before the first / after the last observed bar
};

struct RowMeta {
  std::uint32_t instrument = 0;
  std::int64_t bar = 0;  // bar index: bar start = bar * bar_ns
  RowState state = RowState::Invalid;
  bool warm = false;     // every feature's window was full (observed rows; else the brackets')
};

// Receives every emitted row, in bar order per instrument. raw: width values (NaN for invalid
// rows); standardized: width values or nullptr when the spec has no standardization.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void on_row(const RowMeta& meta, const double* raw, const double* standardized) noexcept = 0;
  // `count` invalid rows for bars [first_bar, first_bar + count) of `instrument` (NaN values).
  // A run can be arbitrarily long (a feed outage over many small bars, a bad timestamp), so the
  // pipeline reports it in one call; this default forwards each row to on_row (what the batch
  // path wants: its grid bounds the count). Live sinks should override it with O(1) work.
  virtual void on_invalid_run(std::uint32_t instrument, std::int64_t first_bar, std::int64_t count,
                              const double* nan_row, const double* nan_standardized) noexcept {
    RowMeta m;
    m.instrument = instrument;
    for (std::int64_t k = 0; k < count; ++k) {
      m.bar = first_bar + k;
      on_row(m, nan_row, nan_standardized);
    }
  }
};

enum class UpdateStatus : std::uint8_t {
  Applied,            // a valid event updated the features
  Dropped,            // invalid, policy drop
  Held,               // invalid, policy hold_last
  MarkedInvalid,      // invalid, policy mark_invalid: the bar is invalid
  UnknownInstrument,  // not in the configured set
};

// The result of one event. Pointers stay valid until the next call for the same instrument.
struct FeatureUpdate {
  std::uint32_t instrument = 0;
  UpdateStatus status = UpdateStatus::Applied;
  InvalidReason reason = InvalidReason::None;
  const double* values = nullptr;    // raw current vector; nullptr for an unknown instrument
  const float* model_input = nullptr;  // standardized (or raw) current vector as float
  bool has_values = false;           // a valid quote has been seen (values are defined)
  std::uint64_t warm_mask = 0;       // bit i: feature i's window is full
  bool all_warm = false;
  bool params_ready = false;         // standardization parameters are published (or not needed)
  std::uint32_t rows_emitted = 0;    // bar rows this event closed (saturates at 2^32-1)
  bool window_ready = false;         // the instrument's window may be fed to a model now
};

struct PipelineCounters {
  std::uint64_t events = 0, accepted = 0, unknown_instrument = 0;
  std::uint64_t invalid_by_reason[kInvalidReasonCount] = {};
  std::uint64_t dropped = 0, held = 0, marked = 0;
  std::uint64_t rows_observed = 0, rows_interpolated = 0, rows_invalid = 0, rows_edge_filled = 0;
  std::uint64_t gaps_interpolated = 0, gaps_invalidated = 0;
  // Rows emitted while the window held an unusable row: model calls withheld.
  std::uint64_t windows_withheld = 0;
  std::uint64_t invalid_total() const {
    std::uint64_t s = 0;
    for (auto v : invalid_by_reason) s += v;
    return s;
  }
};

class FeaturePipeline {
 public:
  struct Options {
    bool synchronous_refit = false;  // batch: refit after every row on the calling thread
    std::size_t refit_queue_rows = 1024;
  };
  // Preallocates everything for spec.instruments. Throws tickinfer::Error for an invalid spec.
  explicit FeaturePipeline(const FeatureSpec& spec);
  FeaturePipeline(const FeatureSpec& spec, Options options);
  ~FeaturePipeline();
  FeaturePipeline(const FeaturePipeline&) = delete;
  FeaturePipeline& operator=(const FeaturePipeline&) = delete;

  // Hot path. now_ns: the caller's clock (unused by the features, which run on exchange time;
  // kept for cache TTL and staleness decisions of the caller and for symmetry with on_timer).
  const FeatureUpdate& on_event(const md::Event& event, std::int64_t now_ns) noexcept;
  // A tick from a TickSource: its flaw (if any) is an invalid reason.
  const FeatureUpdate& on_tick(const SourceTick& tick, std::int64_t now_ns) noexcept;
  // One message of a full-depth book (the ITCH path): validated on the book's top (both sides
  // present, not crossed) and its trade; a quote tick when the top moved (see BookTick).
  const FeatureUpdate& on_book(const BookTick& tick, std::int64_t now_ns) noexcept;
  // Exchange time has reached exchange_now_ns with no event for some instruments: closes their
  // open bars and turns gaps already longer than gap_limit into invalid rows.
  void on_timer(std::int64_t exchange_now_ns) noexcept;

  // Batch edges: the grid the output covers, [first_bar, last_bar]. set_grid before the first
  // event; finish after the last (closes open bars, fills or invalidates the trailing runs).
  void set_grid(std::int64_t first_bar, std::int64_t last_bar) noexcept;
  void finish() noexcept;

  void set_sink(RowSink* sink) noexcept { sink_ = sink; }
  // Refit side: one step for every instrument's standardizer. Returns the work done.
  int refit_step() noexcept;

  const FeatureSpec& spec() const noexcept { return spec_; }
  std::size_t width() const noexcept { return spec_.width(); }
  // Index in spec.instruments, or -1.
  int instrument_index(std::uint32_t instrument) const noexcept;
  const WindowRing& window(std::size_t instrument_index) const noexcept;
  const Standardizer& standardizer(std::size_t instrument_index) const noexcept;
  const PipelineCounters& counters() const noexcept { return counters_; }

 private:
  struct Instrument;
  void close_bar(Instrument& in) noexcept;
  void advance_to_bar(Instrument& in, std::int64_t bar) noexcept;
  void emit(Instrument& in, std::int64_t bar, RowState state, const double* raw, bool warm) noexcept;
  void emit_invalid_until(Instrument& in, std::int64_t bar_exclusive) noexcept;
  void emit_invalid_run(Instrument& in, std::int64_t first_bar, std::int64_t count) noexcept;
  void fill_update(Instrument& in, FeatureUpdate& u) noexcept;
  Instrument* begin_event(std::uint32_t instrument) noexcept;
  TickContext& begin_accepted(Instrument& in, std::int64_t ts) noexcept;
  const FeatureUpdate& finish_accepted(Instrument& in, std::int64_t ts) noexcept;
  const FeatureUpdate& reject(Instrument& in, std::int64_t ts, InvalidReason reason) noexcept;

  FeatureSpec spec_;
  Options options_;
  std::vector<std::unique_ptr<Instrument>> instruments_;
  std::vector<std::int32_t> table_;  // open addressing: instrument id hash -> index, -1 empty
  std::size_t table_mask_ = 0;
  RowSink* sink_ = nullptr;
  PipelineCounters counters_;
  FeatureUpdate update_;
  std::vector<double> scratch_, scratch_z_;
  std::int64_t grid_first_ = 0, grid_last_ = 0;
  bool grid_set_ = false;
};

}  // namespace tickinfer::features
