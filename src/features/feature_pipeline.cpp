#include "features/feature_pipeline.hpp"

#include <cmath>
#include <limits>

#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {
constexpr std::int64_t kNoTs = std::numeric_limits<std::int64_t>::min();
// Fixed point to double by one multiplication (not md::price_to_double's division, which is
// ~13 cycles of latency on the per-tick chain); within 1 ulp of the exact decimal.
constexpr double kInvPriceScale = 1.0 / static_cast<double>(md::kPriceScale);

// floor(ts / bar_ns) for negative timestamps too.
std::int64_t bar_of(std::int64_t ts, std::int64_t bar_ns) noexcept {
  std::int64_t q = ts / bar_ns;
  if ((ts % bar_ns) < 0) --q;
  return q;
}
}  // namespace

// Everything one instrument needs, allocated in the pipeline's constructor.
struct FeaturePipeline::Instrument {
  Instrument(const FeatureSpec& spec, std::uint32_t id_, std::size_t queue_rows)
      : id(id_), values(spec.width(), 0.0), z(spec.width(), 0.0), model_in(spec.width(), 0.0f),
        last_obs(spec.width(), 0.0), row(spec.width(), 0.0),
        standardizer(spec.standardize, spec.width(), queue_rows),
        window(static_cast<std::size_t>(spec.window), spec.width()) {
    for (const auto& d : spec.features) features.push_back(make_feature(d));
    ctx.book = &top_book;  // empty until the first quote (a trade may come first)
  }
  std::uint32_t id;
  std::vector<AnyFeature> features;  // inline storage, spec order
  TickContext ctx;
  BookLevels top_book;  // quote feeds: the last quote as a one-level book
  std::int64_t last_ts = kNoTs;  // last accepted event
  std::vector<double> values, z;
  std::vector<float> model_in;
  std::uint64_t warm_mask = 0;
  bool all_warm = false;
  // Open bar.
  bool bar_open = false, bar_observed = false, bar_marked = false;
  std::int64_t bar = 0;
  std::int64_t bar_start_ns = 0, bar_end_ns = 0;  // [start, end) of the open bar: no division per event
  // Emitted series.
  bool any_emitted = false;
  std::int64_t last_emitted_bar = 0;
  bool have_last_obs = false, last_obs_warm = false;
  std::vector<double> last_obs;  // the last Observed row (left bracket of the next gap)
  bool run_poisoned = false;     // the current run of non-observed bars can no longer be filled
  std::vector<double> row;       // scratch for interpolated rows
  std::uint32_t rows_this_event = 0;
  Standardizer standardizer;
  WindowRing window;
};

FeaturePipeline::FeaturePipeline(const FeatureSpec& spec) : FeaturePipeline(spec, Options{}) {}

FeaturePipeline::FeaturePipeline(const FeatureSpec& spec, Options options) : spec_(spec), options_(options) {
  if (spec_.features.empty()) throw Error("feature pipeline: the spec has no features");
  if (spec_.features.size() > kMaxFeatures) throw Error("feature pipeline: more than 64 features");
  if (spec_.instruments.empty()) throw Error("feature pipeline: the spec lists no instruments");
  std::size_t cap = 16;
  while (cap < 2 * spec_.instruments.size()) cap <<= 1;
  table_.assign(cap * 2, -1);  // pairs (id, index); id stored as int32 bits
  table_mask_ = cap - 1;
  for (std::size_t i = 0; i < spec_.instruments.size(); ++i) {
    const std::uint32_t id = spec_.instruments[i];
    std::size_t h = (id * 0x9E3779B1u) & table_mask_;
    while (table_[2 * h + 1] >= 0) {
      if (static_cast<std::uint32_t>(table_[2 * h]) == id) throw Error("feature pipeline: instrument listed twice");
      h = (h + 1) & table_mask_;
    }
    table_[2 * h] = static_cast<std::int32_t>(id);
    table_[2 * h + 1] = static_cast<std::int32_t>(i);
    instruments_.push_back(std::make_unique<Instrument>(spec_, id, options_.refit_queue_rows));
  }
  scratch_.assign(spec_.width(), std::numeric_limits<double>::quiet_NaN());
  scratch_z_.assign(spec_.width(), std::numeric_limits<double>::quiet_NaN());
}

FeaturePipeline::~FeaturePipeline() = default;

int FeaturePipeline::instrument_index(std::uint32_t id) const noexcept {
  std::size_t h = (id * 0x9E3779B1u) & table_mask_;
  for (;;) {
    const std::int32_t idx = table_[2 * h + 1];
    if (idx < 0) return -1;
    if (static_cast<std::uint32_t>(table_[2 * h]) == id) return idx;
    h = (h + 1) & table_mask_;
  }
}

const WindowRing& FeaturePipeline::window(std::size_t i) const noexcept { return instruments_[i]->window; }
const Standardizer& FeaturePipeline::standardizer(std::size_t i) const noexcept {
  return instruments_[i]->standardizer;
}

const FeatureUpdate& FeaturePipeline::on_event(const md::Event& event, std::int64_t now_ns) noexcept {
  SourceTick t;
  t.event = event;
  return on_tick(t, now_ns);
}

// The start of every event: counted, looked up; nullptr (and u filled) for an unknown instrument.
FeaturePipeline::Instrument* FeaturePipeline::begin_event(std::uint32_t instrument) noexcept {
  ++counters_.events;
  FeatureUpdate& u = update_;
  u.instrument = instrument;
  u.reason = InvalidReason::None;
  u.rows_emitted = 0;
  const int idx = instrument_index(instrument);
  if (idx < 0) {
    ++counters_.unknown_instrument;
    u.status = UpdateStatus::UnknownInstrument;
    u.values = nullptr;
    u.model_input = nullptr;
    u.has_values = u.all_warm = u.params_ready = u.window_ready = false;
    u.warm_mask = 0;
    return nullptr;
  }
  Instrument& in = *instruments_[static_cast<std::size_t>(idx)];
  in.rows_this_event = 0;
  return &in;
}

const FeatureUpdate& FeaturePipeline::on_tick(const SourceTick& tick, std::int64_t /*now_ns*/) noexcept {
  const md::Event& e = tick.event;
  Instrument* inp = begin_event(e.instrument());
  if (!inp) return update_;
  Instrument& in = *inp;
  const std::int64_t ts = e.exchange_ts_ns();
  const InvalidReason reason = tick.flaw != InvalidReason::None ? tick.flaw : validate_event(e, in.last_ts);
  if (reason != InvalidReason::None) return reject(in, ts, reason);
  TickContext& c = begin_accepted(in, ts);
  c.adds = c.cancels = c.executions = 0;
  if (e.kind == md::Event::Kind::Quote) {
    const md::Quote& q = e.quote;
    c.is_quote = true;
    c.is_trade = false;
    c.bid = static_cast<double>(q.bid_price) * kInvPriceScale;
    c.ask = static_cast<double>(q.ask_price) * kInvPriceScale;
    c.bid_size = static_cast<double>(q.bid_size);
    c.ask_size = static_cast<double>(q.ask_size);
    const double mid = (c.bid + c.ask) * 0.5;
    c.r1 = c.have_quote ? std::log(mid / c.mid) : 0.0;
    c.mid = mid;
    c.have_quote = true;
    // A quote is a one-level book.
    BookLevels& b = in.top_book;
    b.bid_count = b.ask_count = 1;
    b.bid_price[0] = c.bid;
    b.bid_size[0] = c.bid_size;
    b.ask_price[0] = c.ask;
    b.ask_size[0] = c.ask_size;
    c.book = &b;
  } else {
    const md::Trade& t = e.trade;
    c.is_quote = false;
    c.is_trade = true;
    c.trade_price = static_cast<double>(t.price) * kInvPriceScale;
    c.trade_size = static_cast<double>(t.size);
    c.trade_sign = t.aggressor == md::Side::Buy ? 1 : t.aggressor == md::Side::Sell ? -1 : 0;
    c.last_trade_ts_ns = ts;
  }
  return finish_accepted(in, ts);
}

const FeatureUpdate& FeaturePipeline::on_book(const BookTick& tick, std::int64_t /*now_ns*/) noexcept {
  Instrument* inp = begin_event(tick.instrument);
  if (!inp) return update_;
  Instrument& in = *inp;
  const BookLevels& b = *tick.levels;
  const std::int64_t ts = tick.ts_ns;
  const InvalidReason reason = validate_book_tick(tick, in.last_ts);
  if (reason != InvalidReason::None) return reject(in, ts, reason);
  TickContext& c = begin_accepted(in, ts);
  // A quote tick when the top of book moved (or the first accepted tick).
  const double bid = b.bid_price[0], ask = b.ask_price[0], bid_size = b.bid_size[0], ask_size = b.ask_size[0];
  c.is_quote = !c.have_quote || bid != c.bid || ask != c.ask || bid_size != c.bid_size || ask_size != c.ask_size;
  if (c.is_quote) {
    c.bid = bid;
    c.ask = ask;
    c.bid_size = bid_size;
    c.ask_size = ask_size;
    const double mid = (bid + ask) * 0.5;
    c.r1 = c.have_quote ? std::log(mid / c.mid) : 0.0;
    c.mid = mid;
    c.have_quote = true;
  }
  c.book = &b;
  c.adds = tick.adds;
  c.cancels = tick.cancels;
  c.executions = tick.executions;
  c.is_trade = tick.has_trade;
  if (tick.has_trade) {
    c.trade_price = tick.trade_price;
    c.trade_size = tick.trade_size;
    c.trade_sign = tick.trade_sign;
    c.last_trade_ts_ns = ts;
  }
  return finish_accepted(in, ts);
}

TickContext& FeaturePipeline::begin_accepted(Instrument& in, std::int64_t ts) noexcept {
  if (!in.bar_open || ts >= in.bar_end_ns) advance_to_bar(in, bar_of(ts, spec_.bar_ns));
  TickContext& c = in.ctx;
  if (in.last_ts == kNoTs) c.first_ts_ns = ts;
  c.ts_ns = ts;
  return c;
}

const FeatureUpdate& FeaturePipeline::finish_accepted(Instrument& in, std::int64_t ts) noexcept {
  TickContext& c = in.ctx;
  FeatureUpdate& u = update_;
  std::uint64_t warm = 0;
  const std::size_t n = in.features.size();
  for (std::size_t i = 0; i < n; ++i) {
    const FeatureBase& f = update_feature(in.features[i], c);
    in.values[i] = f.value();
    warm |= static_cast<std::uint64_t>(f.warm()) << i;
  }
  in.warm_mask = warm;
  in.all_warm = warm == (n == 64 ? ~0ull : ((1ull << n) - 1));
  in.last_ts = ts;
  if (in.bar_open && c.have_quote) in.bar_observed = true;
  ++counters_.accepted;
  u.status = UpdateStatus::Applied;
  fill_update(in, u);
  return u;
}

const FeatureUpdate& FeaturePipeline::reject(Instrument& in, std::int64_t ts, InvalidReason reason) noexcept {
  FeatureUpdate& u = update_;
  u.reason = reason;
  ++counters_.invalid_by_reason[static_cast<int>(reason)];
  const bool ts_ok = ts >= in.last_ts;
  switch (spec_.invalid_policy) {
    case InvalidPolicy::Drop:
      ++counters_.dropped;
      u.status = UpdateStatus::Dropped;
      break;
    case InvalidPolicy::HoldLast:
      ++counters_.held;
      u.status = UpdateStatus::Held;
      if (ts_ok) advance_to_bar(in, bar_of(ts, spec_.bar_ns));
      if (in.bar_open && in.ctx.have_quote) in.bar_observed = true;
      break;
    case InvalidPolicy::MarkInvalid:
      ++counters_.marked;
      u.status = UpdateStatus::MarkedInvalid;
      if (ts_ok) advance_to_bar(in, bar_of(ts, spec_.bar_ns));
      if (in.bar_open) in.bar_marked = true;
      break;
  }
  fill_update(in, u);
  return u;
}

void FeaturePipeline::fill_update(Instrument& in, FeatureUpdate& u) noexcept {
  u.values = in.values.data();
  u.has_values = in.ctx.have_quote;
  u.warm_mask = in.warm_mask;
  u.all_warm = in.all_warm;
  u.rows_emitted = in.rows_this_event;
  u.window_ready = in.window.ready();
  if (spec_.standardize.mode == StandardizeMode::None) {
    u.params_ready = true;
    for (std::size_t i = 0; i < in.values.size(); ++i) in.model_in[i] = static_cast<float>(in.values[i]);
  } else {
    u.params_ready = in.standardizer.apply(in.values.data(), in.z.data());
    for (std::size_t i = 0; i < in.values.size(); ++i) in.model_in[i] = static_cast<float>(in.z[i]);
  }
  u.model_input = in.model_in.data();
}

void FeaturePipeline::advance_to_bar(Instrument& in, std::int64_t bar) noexcept {
  if (in.bar_open) {
    if (bar <= in.bar) return;
    close_bar(in);
  }
  if (in.any_emitted && bar <= in.last_emitted_bar) return;  // late event: its bar was closed by on_timer
  // The bars before this one that nothing filled: if they can no longer be interpolated (the run
  // already holds an invalid bar or is longer than the limit), say so now rather than later.
  if (in.any_emitted || grid_set_) {
    const std::int64_t start = in.any_emitted ? in.last_emitted_bar + 1 : grid_first_;
    if (start < bar && (in.run_poisoned || bar - start > spec_.gap_limit)) emit_invalid_until(in, bar);
  }
  in.bar_open = true;
  in.bar = bar;
  in.bar_start_ns = bar * spec_.bar_ns;
  in.bar_end_ns = in.bar_start_ns + spec_.bar_ns;
  in.bar_observed = in.bar_marked = false;
}

void FeaturePipeline::emit(Instrument& in, std::int64_t bar, RowState state, const double* raw, bool warm) noexcept {
  const bool valid = state != RowState::Invalid;
  switch (state) {
    case RowState::Invalid: ++counters_.rows_invalid; break;
    case RowState::Observed: ++counters_.rows_observed; break;
    case RowState::Interpolated: ++counters_.rows_interpolated; break;
    case RowState::EdgeFilled: ++counters_.rows_edge_filled; break;
  }
  const double* row = valid ? raw : scratch_.data();  // scratch_ holds NaN
  const bool standardize = spec_.standardize.mode != StandardizeMode::None;
  double* z = scratch_z_.data();
  if (standardize) {
    if (valid) {
      in.standardizer.apply(row, z);
    } else {
      for (std::size_t i = 0; i < spec_.width(); ++i) z[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  in.window.push(standardize ? z : row, valid);
  if (in.window.filled() == in.window.rows() && in.window.unusable() > 0) ++counters_.windows_withheld;
  if (state == RowState::Observed || state == RowState::Interpolated) {
    in.standardizer.submit_row(row);
    if (options_.synchronous_refit) in.standardizer.refit_step();
  }
  if (sink_) {
    RowMeta m;
    m.instrument = in.id;
    m.bar = bar;
    m.state = state;
    m.warm = valid && warm;
    sink_->on_row(m, row, standardize ? z : nullptr);
  }
  in.any_emitted = true;
  in.last_emitted_bar = bar;
  ++in.rows_this_event;
}

void FeaturePipeline::emit_invalid_until(Instrument& in, std::int64_t end) noexcept {
  std::int64_t start = in.any_emitted ? in.last_emitted_bar + 1 : (grid_set_ ? grid_first_ : end);
  if (start < end) {
    if (!in.run_poisoned) ++counters_.gaps_invalidated;
    emit_invalid_run(in, start, end - start);
  }
  in.run_poisoned = true;
}

// O(min(count, T)) whatever the run's length: the window only ever holds T rows, and the sink
// gets the run in one call.
void FeaturePipeline::emit_invalid_run(Instrument& in, std::int64_t first_bar, std::int64_t count) noexcept {
  const auto t = static_cast<std::int64_t>(in.window.rows());
  const std::int64_t pushed = count < t ? count : t;
  for (std::int64_t k = 0; k < pushed; ++k) {
    in.window.push(scratch_.data(), false);
    if (in.window.filled() == in.window.rows()) ++counters_.windows_withheld;
  }
  counters_.windows_withheld += static_cast<std::uint64_t>(count - pushed);  // the window stays invalid
  counters_.rows_invalid += static_cast<std::uint64_t>(count);
  if (sink_) {
    for (std::size_t i = 0; i < spec_.width(); ++i) scratch_z_[i] = std::numeric_limits<double>::quiet_NaN();
    sink_->on_invalid_run(in.id, first_bar, count, scratch_.data(),
                          spec_.standardize.mode != StandardizeMode::None ? scratch_z_.data() : nullptr);
  }
  in.any_emitted = true;
  in.last_emitted_bar = first_bar + count - 1;
  const std::uint64_t rows = in.rows_this_event + static_cast<std::uint64_t>(count);
  in.rows_this_event = rows > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rows);
}

void FeaturePipeline::close_bar(Instrument& in) noexcept {
  in.bar_open = false;
  const std::int64_t b = in.bar;
  if (in.bar_marked) {
    emit_invalid_until(in, b);  // the missing bars before it, if any
    emit_invalid_run(in, b, 1);
    return;
  }
  if (!in.bar_observed) return;  // a missing bar: decided when the run ends
  const std::int64_t start = in.any_emitted ? in.last_emitted_bar + 1 : (grid_set_ ? grid_first_ : b);
  const std::int64_t m = b - start;
  const std::size_t w = spec_.width();
  if (m > 0) {
    if (in.run_poisoned || m > spec_.gap_limit) {
      emit_invalid_until(in, b);
    } else if (!in.have_last_obs) {
      // Leading edge (batch grid): back-fill with this bar's values.
      for (std::int64_t k = start; k < b; ++k) emit(in, k, RowState::EdgeFilled, in.values.data(), in.all_warm);
    } else {
      // Linear in bar index between the brackets, as numpy.interp: slope * k + left.
      ++counters_.gaps_interpolated;
      const double span = static_cast<double>(m + 1);
      for (std::int64_t k = 1; k <= m; ++k) {
        for (std::size_t i = 0; i < w; ++i) {
          const double slope = (in.values[i] - in.last_obs[i]) / span;
          in.row[i] = slope * static_cast<double>(k) + in.last_obs[i];
        }
        emit(in, start + k - 1, RowState::Interpolated, in.row.data(), in.last_obs_warm && in.all_warm);
      }
    }
  }
  emit(in, b, RowState::Observed, in.values.data(), in.all_warm);
  for (std::size_t i = 0; i < w; ++i) in.last_obs[i] = in.values[i];
  in.have_last_obs = true;
  in.last_obs_warm = in.all_warm;
  in.run_poisoned = false;
}

void FeaturePipeline::on_timer(std::int64_t exchange_now_ns) noexcept {
  if (exchange_now_ns < 0 || exchange_now_ns >= kMaxTimestampNs) return;  // not a time we can bar
  const std::int64_t now_bar = bar_of(exchange_now_ns, spec_.bar_ns);
  for (auto& p : instruments_) {
    Instrument& in = *p;
    in.rows_this_event = 0;
    if (in.bar_open && in.bar < now_bar) close_bar(in);
    if (in.bar_open || !in.any_emitted) continue;
    // Bars [last_emitted + 1, now_bar) are missing so far; past the limit they can never be
    // interpolated, so say so now.
    if (now_bar - (in.last_emitted_bar + 1) > spec_.gap_limit) emit_invalid_until(in, now_bar);
  }
}

void FeaturePipeline::set_grid(std::int64_t first_bar, std::int64_t last_bar) noexcept {
  grid_first_ = first_bar;
  grid_last_ = last_bar;
  grid_set_ = true;
}

void FeaturePipeline::finish() noexcept {
  for (auto& p : instruments_) {
    Instrument& in = *p;
    if (in.bar_open) close_bar(in);
    if (!grid_set_) continue;
    const std::int64_t start = in.any_emitted ? in.last_emitted_bar + 1 : grid_first_;
    const std::int64_t m = grid_last_ + 1 - start;
    if (m <= 0) continue;
    if (in.run_poisoned || m > spec_.gap_limit || !in.have_last_obs || !in.any_emitted) {
      emit_invalid_until(in, grid_last_ + 1);
    } else {
      for (std::int64_t k = start; k <= grid_last_; ++k)
        emit(in, k, RowState::EdgeFilled, in.last_obs.data(), in.last_obs_warm);
    }
  }
}

int FeaturePipeline::refit_step() noexcept {
  int work = 0;
  for (auto& p : instruments_) work += p->standardizer.refit_step();
  return work;
}

}  // namespace tickinfer::features
