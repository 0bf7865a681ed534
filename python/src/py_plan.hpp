#pragma once
// The Python face of tickinfer::Plan: checks shapes, finds the float pointers, calls Plan::run.
//
// Per call (run): no C++ heap allocation on the single-input/single-output path; the only
// allocation is the numpy output array, and none at all when the caller passes `out=`.
// Concurrency: a Plan has one arena, so one call at a time. Calls that release the GIL (all of
// run_batch, and run on plans costlier than kReleaseGilFlops) could otherwise overlap on the
// same plan from two threads; an atomic busy flag turns that into tickinfer.Error instead of a
// silent data race. Threads should each clone() their own plan.
#include <nanobind/nanobind.h>

#include <atomic>
#include <string>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::python {

namespace nb = nanobind;

// Above this many FLOPs per run, run() releases the GIL while the plan computes (a few us of
// work); below it, releasing and re-taking the GIL (~0.1-0.2 us) would cost more than it frees.
// A GPU plan (isa "cuda-...") releases it whatever its size: its run waits on the device.
constexpr int64_t kReleaseGilFlops = 100'000;

class PyPlan {
 public:
  PyPlan(Plan plan, std::vector<std::string> input_names, std::vector<std::string> output_names);
  // Moved only while being handed to Python (never while a call runs), so the flag starts clear.
  PyPlan(PyPlan&& other) noexcept
      : plan_(std::move(other.plan_)),
        input_names_(std::move(other.input_names_)),
        output_names_(std::move(other.output_names_)),
        input_labels_(std::move(other.input_labels_)),
        output_labels_(std::move(other.output_labels_)),
        by_rows_(other.by_rows_) {}
  PyPlan(const PyPlan&) = delete;
  PyPlan& operator=(const PyPlan&) = delete;
  PyPlan& operator=(PyPlan&&) = delete;

  // One run: each input shaped like input_shape(i), optionally with a leading axis of 1.
  nb::object run(nb::handle x, nb::handle out, bool check_finite);
  // N runs back to back in C++ with the GIL released: each input shaped [N, *input_shape(i)].
  // Window mode: N independent rows. Stream mode: N consecutive ticks of one sequence (the
  // recurrent state carries across rows and past the call, as N run() calls would).
  nb::object run_batch(nb::handle x, nb::handle out, bool check_finite);
  void reset_state();
  PyPlan clone() const;

  const Plan& plan() const { return plan_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  std::string repr() const;

 private:
  // "input 0 ('features')": made once here, so a call never builds strings unless it fails.
  const std::string& input_label(size_t i) const { return input_labels_[i]; }
  const std::string& output_label(size_t i) const { return output_labels_[i]; }

  Plan plan_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<std::string> input_labels_, output_labels_;
  // run_batch goes through Plan::run_rows (false: not a row-wise plan, one Plan::run per row).
  // Same results either way: run_rows is bit-identical per row.
  bool by_rows_ = false;
  std::atomic<bool> busy_{false};
};

void bind_plan(nb::module_& m);

}  // namespace tickinfer::python
