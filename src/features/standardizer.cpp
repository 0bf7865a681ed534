#include "features/standardizer.hpp"

#include <cfloat>
#include <cmath>
#include <limits>

namespace tickinfer::features {

Standardizer::Standardizer(const StandardizeSpec& spec, std::size_t width, std::size_t queue_rows)
    : mode_(spec.mode), width_(width), mean_(width, 0.0), inv_scale_(width, 1.0),
      scratch_mean_(width), scratch_scale_(width), params_(width), queue_rows_(queue_rows),
      window_(static_cast<std::size_t>(spec.window)), refit_every_(static_cast<std::size_t>(spec.refit_every)),
      drift_threshold_(spec.drift_threshold) {
  if (mode_ == StandardizeMode::Fixed) {
    params_.publish(spec.mean.data(), spec.scale.data());
  } else if (mode_ == StandardizeMode::Rolling) {
    queue_.assign(queue_rows_ * width_, 0.0);
    win_.assign(window_ * width_, 0.0);
    run_mean_.assign(width_, 0.0);
    run_m2_.assign(width_, 0.0);
    pub_mean_.assign(width_, 0.0);
    pub_scale_.assign(width_, 1.0);
  }
}

bool Standardizer::apply(const double* x, double* z) noexcept {
  if (mode_ == StandardizeMode::None) {
    for (std::size_t i = 0; i < width_; ++i) z[i] = x[i];
    return true;
  }
  const std::uint64_t g = params_.generation();
  if (g != seen_gen_) {
    seen_gen_ = params_.read(scratch_mean_.data(), scratch_scale_.data());
    for (std::size_t i = 0; i < width_; ++i) {
      mean_[i] = scratch_mean_[i];
      inv_scale_[i] = scratch_scale_[i];  // kept as scale: division matches the reference
    }
  }
  if (seen_gen_ == 0) {
    for (std::size_t i = 0; i < width_; ++i) z[i] = std::numeric_limits<double>::quiet_NaN();
    return false;
  }
  for (std::size_t i = 0; i < width_; ++i) z[i] = (x[i] - mean_[i]) / inv_scale_[i];
  return true;
}

void Standardizer::submit_row(const double* x) noexcept {
  if (mode_ != StandardizeMode::Rolling) return;
  const std::uint64_t t = tail_.load(std::memory_order_relaxed);
  if (t - cached_head_ >= queue_rows_) {
    cached_head_ = head_.load(std::memory_order_acquire);
    if (t - cached_head_ >= queue_rows_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  double* dst = &queue_[(t % queue_rows_) * width_];
  for (std::size_t i = 0; i < width_; ++i) dst[i] = x[i];
  tail_.store(t + 1, std::memory_order_release);
}

int Standardizer::refit_step() noexcept {
  if (mode_ != StandardizeMode::Rolling) return 0;
  const std::uint64_t t = tail_.load(std::memory_order_acquire);
  std::uint64_t h = head_.load(std::memory_order_relaxed);
  int consumed = 0;
  for (; h != t; ++h, ++consumed) {
    const double* x = &queue_[(h % queue_rows_) * width_];
    double* slot = &win_[win_pos_ * width_];
    if (win_count_ == window_) {
      // Welford removal of the row leaving the window.
      const double n = static_cast<double>(win_count_);
      for (std::size_t i = 0; i < width_; ++i) {
        const double old = slot[i];
        const double mean_without = (n * run_mean_[i] - old) / (n - 1);
        run_m2_[i] -= (old - run_mean_[i]) * (old - mean_without);
        run_mean_[i] = mean_without;
      }
      --win_count_;
    }
    for (std::size_t i = 0; i < width_; ++i) slot[i] = x[i];
    win_pos_ = (win_pos_ + 1) % window_;
    ++win_count_;
    const double n = static_cast<double>(win_count_);
    for (std::size_t i = 0; i < width_; ++i) {
      const double d = x[i] - run_mean_[i];
      run_mean_[i] += d / n;
      run_m2_[i] += d * (x[i] - run_mean_[i]);
    }
    ++since_publish_;
    bool publish = since_publish_ >= refit_every_;
    if (!publish && drift_threshold_ > 0 && params_.generation() > 0) {
      for (std::size_t i = 0; i < width_; ++i) {
        if (std::fabs(run_mean_[i] - pub_mean_[i]) > drift_threshold_ * pub_scale_[i]) {
          publish = true;
          ++drift_pubs_;
          break;
        }
      }
    }
    if (publish) publish_fit();
  }
  head_.store(h, std::memory_order_release);
  return consumed;
}

void Standardizer::publish_fit() noexcept {
  // Exact two-pass fit over the window (order does not matter for mean/variance up to rounding).
  const double n = static_cast<double>(win_count_);
  for (std::size_t i = 0; i < width_; ++i) {
    double s = 0;
    for (std::size_t r = 0; r < win_count_; ++r) s += win_[r * width_ + i];
    const double m = s / n;
    double ss = 0;
    for (std::size_t r = 0; r < win_count_; ++r) {
      const double d = win_[r * width_ + i] - m;
      ss += d * d;
    }
    const double sd = std::sqrt(ss / n);
    pub_mean_[i] = m;
    pub_scale_[i] = sd < 10 * DBL_EPSILON ? 1.0 : sd;
    // Re-anchor the running statistics on the exact values, so incremental drift stays small.
    run_mean_[i] = m;
    run_m2_[i] = ss;
  }
  params_.publish(pub_mean_.data(), pub_scale_.data());
  since_publish_ = 0;
}

}  // namespace tickinfer::features
