#pragma once
// Features of the book's depth (docs/features.md, "Book features"): prices and sizes of level k,
// cumulative depth and depth imbalance over the best N levels, queue imbalance at level k,
// multi-level order-flow imbalance, and order arrival / cancel / execution rates. They read
// TickContext::book, which validation guarantees holds at least one level on each side and is
// not crossed (a quote feed's trades before its first quote find an empty book: the values stay
// 0, and the rows before the first quote are never emitted); levels past the book's depth are
// absent (size 0).
#include <cstdint>
#include <limits>
#include <vector>

#include "features/feature_base.hpp"
#include "features/ring_buffer.hpp"

namespace tickinfer::features {

namespace depth {
struct SideView {
  std::uint32_t count;
  const double* price;
  const double* size;
};
inline SideView side(const BookLevels& b, std::uint8_t s) noexcept {
  return s == 0 ? SideView{b.bid_count, b.bid_price, b.bid_size} : SideView{b.ask_count, b.ask_price, b.ask_size};
}
inline double sum_sizes(const SideView& v, std::uint32_t levels) noexcept {
  const std::uint32_t n = v.count < levels ? v.count : levels;
  double s = 0;
  for (std::uint32_t i = 0; i < n; ++i) s += v.size[i];
  return s;
}
}  // namespace depth

// Level k (1-based) of one side: its price, or its size. An absent level has size 0 and the
// price of the deepest level present on that side, so prices stay ordered down the book.
template <bool kPrice>
class LevelValue final : public FeatureBase {
 public:
  LevelValue(std::uint8_t side, std::int64_t level) : side_(side), i_(static_cast<std::uint32_t>(level - 1)) {
    warm_ = true;
  }
  void update(const TickContext& c) noexcept {
    const depth::SideView v = depth::side(*c.book, side_);
    if (v.count == 0) return;  // a quote feed's trade before its first quote
    if constexpr (kPrice) value_ = v.price[i_ < v.count ? i_ : v.count - 1];
    else value_ = i_ < v.count ? v.size[i_] : 0.0;
  }

 private:
  std::uint8_t side_;
  std::uint32_t i_;
};

// Shares on one side over the best N levels.
class CumulativeDepth final : public FeatureBase {
 public:
  CumulativeDepth(std::uint8_t side, std::int64_t levels) : side_(side), n_(static_cast<std::uint32_t>(levels)) {
    warm_ = true;
  }
  void update(const TickContext& c) noexcept { value_ = depth::sum_sizes(depth::side(*c.book, side_), n_); }

 private:
  std::uint8_t side_;
  std::uint32_t n_;
};

// (bid depth - ask depth) / (bid depth + ask depth) over the best N levels of each side.
class DepthImbalance final : public FeatureBase {
 public:
  explicit DepthImbalance(std::int64_t levels) : n_(static_cast<std::uint32_t>(levels)) { warm_ = true; }
  void update(const TickContext& c) noexcept {
    const double b = depth::sum_sizes(depth::side(*c.book, 0), n_);
    const double a = depth::sum_sizes(depth::side(*c.book, 1), n_);
    value_ = b + a > 0 ? (b - a) / (b + a) : 0.0;
  }

 private:
  std::uint32_t n_;
};

// (bid size - ask size) / (bid size + ask size) at level k; 0 when both levels are absent.
// At k = 1 this is Gould and Bonart's queue imbalance.
class QueueImbalance final : public FeatureBase {
 public:
  explicit QueueImbalance(std::int64_t level) : i_(static_cast<std::uint32_t>(level - 1)) { warm_ = true; }
  void update(const TickContext& c) noexcept {
    const BookLevels& b = *c.book;
    const double qb = i_ < b.bid_count ? b.bid_size[i_] : 0.0;
    const double qa = i_ < b.ask_count ? b.ask_size[i_] : 0.0;
    value_ = qb + qa > 0 ? (qb - qa) / (qb + qa) : 0.0;
  }

 private:
  std::uint32_t i_;
};

// Multi-level order-flow imbalance (Cont, Kukanov and Stoikov's OFI at each of the best N levels,
// summed over the levels), accumulated over the last n events. Per event and level m, with the
// book before the event marked ':
//   e_m = q_b * [p_b >= p_b'] - q_b' * [p_b <= p_b'] - q_a * [p_a <= p_a'] + q_a' * [p_a >= p_a']
// An absent bid level is an empty level at price 0, an absent ask level one at +infinity. The
// instrument's first accepted event contributes 0. Sums of whole share counts are exact in
// double, so the window sum needs no compensation.
class OrderFlowImbalance final : public FeatureBase {
 public:
  OrderFlowImbalance(std::int64_t levels, std::int64_t n)
      : n_(static_cast<std::uint32_t>(levels)), prev_(4 * static_cast<std::size_t>(levels), 0.0),
        events_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept {
    const BookLevels& b = *c.book;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double* pbp = prev_.data();
    double* pbq = pbp + n_;
    double* pap = pbq + n_;
    double* paq = pap + n_;
    double e = 0;
    for (std::uint32_t m = 0; m < n_; ++m) {
      const bool hb = m < b.bid_count, ha = m < b.ask_count;
      const double bp = hb ? b.bid_price[m] : 0.0, bq = hb ? b.bid_size[m] : 0.0;
      const double ap = ha ? b.ask_price[m] : kInf, aq = ha ? b.ask_size[m] : 0.0;
      if (have_prev_) {
        e += (bp >= pbp[m] ? bq : 0.0) - (bp <= pbp[m] ? pbq[m] : 0.0);
        e += (ap >= pap[m] ? paq[m] : 0.0) - (ap <= pap[m] ? aq : 0.0);
      }
      pbp[m] = bp;
      pbq[m] = bq;
      pap[m] = ap;
      paq[m] = aq;
    }
    have_prev_ = true;
    if (events_.full()) sum_ -= events_.front();
    events_.push(e);
    sum_ += e;
    value_ = sum_;
    warm_ = events_.full();
  }

 private:
  std::uint32_t n_;
  std::vector<double> prev_;  // bid prices, bid sizes, ask prices, ask sizes of the last event
  bool have_prev_ = false;
  Ring<double> events_;
  double sum_ = 0;
};

enum class OrderFlowKind : std::uint8_t { Add = 0, Cancel = 1, Execute = 2 };

// Orders of one flow kind (BookTick: arrivals, cancels or executions) in accepted events with
// timestamp in (t - window, t], per second. Warm once the instrument's events span the window.
class OrderRate final : public FeatureBase {
 public:
  OrderRate(OrderFlowKind kind, std::int64_t window_ns, std::int64_t capacity)
      : kind_(kind), window_ns_(window_ns), per_second_(1e9 / static_cast<double>(window_ns)),
        events_(static_cast<std::size_t>(capacity)) {}
  void update(const TickContext& c) noexcept {
    const std::uint32_t k = kind_ == OrderFlowKind::Add ? c.adds : kind_ == OrderFlowKind::Cancel ? c.cancels
                                                                                                  : c.executions;
    if (k > 0) {
      if (events_.full()) count_ -= events_.front().count;
      events_.push({c.ts_ns, k});
      count_ += k;
    }
    while (!events_.empty() && events_.front().ts <= c.ts_ns - window_ns_) {
      count_ -= events_.front().count;
      events_.pop_front();
    }
    value_ = static_cast<double>(count_) * per_second_;
    warm_ = c.ts_ns - c.first_ts_ns >= window_ns_;
  }

 private:
  struct Sample {
    std::int64_t ts;
    std::uint32_t count;
  };
  OrderFlowKind kind_;
  std::int64_t window_ns_;
  double per_second_;
  Ring<Sample> events_;
  std::uint64_t count_ = 0;
};

}  // namespace tickinfer::features
