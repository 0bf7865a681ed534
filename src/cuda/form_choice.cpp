#include "cuda/form_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "cuda/half_bits.hpp"

namespace tickinfer::cuda {
namespace {

// A heavy model (DeepLOB on the graph form: about a millisecond) is timed over fewer requests.
constexpr double kTimingBudgetS = 0.25;

void fill_probe(ProgramIo& io) {
  size_t n = 0;
  for (std::vector<float>& v : io.in)
    for (float& x : v) x = probe_input(n++);
}

// "" when every output of `got` is within the margin of `want`, else the first that is not.
std::string disagreement(const ProgramIo& got, const ProgramIo& want, const std::string& reference,
                         const AgreeMargins& margins) {
  for (size_t o = 0; o < want.out.size(); ++o)
    for (size_t i = 0; i < want.out[o].size(); ++i) {
      const double g = got.out[o][i], w = want.out[o][i];
      if (!margins(g, w)) {
        char b[128];
        std::snprintf(b, sizeof b, "output %zu element %zu is %.9g where the ", o, i, g);
        char c[64];
        std::snprintf(c, sizeof c, " gives %.9g", w);
        return b + reference + c;
      }
    }
  return {};
}

}  // namespace

AgreeMargins agree_margins(const DeviceProgram& program) {
  int32_t widest = kWeightsFp32;  // the coarsest 16-bit format any step stores: bf16 over fp16
  const auto widen = [&](int32_t f) {
    if (f == kWeightsBf16 || (f == kWeightsFp16 && widest == kWeightsFp32)) widest = f;
  };
  for (const DeviceStep& s : program.steps) {
    for (int32_t f : {s.in_format, s.rhs_format, s.out_format}) widen(f);
    for (int e = 0; e < s.n_extra && e < kDevMaxInputs; ++e) widen(s.extra_format[e]);
  }
  if (widest == kWeightsFp32) return {};
  return {1e-3, widest == kWeightsBf16 ? 8.0 / 128 : 8.0 / 1024};
}

ProgramIo host_probe_reply(const std::shared_ptr<const DeviceProgram>& program) {
  ProgramIo want(*program, 0.0f);
  fill_probe(want);
  if (!host_program_runner(program, false)->run(want.in_ptrs.data(), want.out_ptrs.data(), true))
    throw std::runtime_error("the host's run of the probe request failed");
  return want;
}

std::string probe_error(ProgramRunner& runner, const DeviceProgram& program, const ProgramIo& want,
                        const std::string& reference) {
  ProgramIo got(program, 0.0f);
  fill_probe(got);
  if (!runner.run(got.in_ptrs.data(), got.out_ptrs.data(), true)) return "no reply to the probe request";
  return disagreement(got, want, reference, agree_margins(program));
}

double median_request_us(ProgramRunner& r, ProgramIo& io, int requests, double budget_s) {
  const int warm = std::max(1, requests / 10);
  std::vector<double> us;
  us.reserve(size_t(requests));
  double spent_us = 0;
  for (int k = 0; k < warm + requests; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!r.run(io.in_ptrs.data(), io.out_ptrs.data(), k == 0)) return -1;
    const auto t1 = std::chrono::steady_clock::now();
    if (k < warm) continue;
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    spent_us += us.back();
    if (us.size() >= 11 && spent_us > budget_s * 1e6) break;
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

ChosenForm choose_form(const DeviceProgram& program, std::vector<FormContender> contenders, int requests) {
  if (contenders.empty()) throw std::invalid_argument("choose_form: no contender");
  requests = std::max(requests, 1);
  ChosenForm c;
  ProgramIo want(program, 0.0f);
  fill_probe(want);
  std::unique_ptr<ProgramRunner> reference = contenders[0].start();
  if (!reference->run(want.in_ptrs.data(), want.out_ptrs.data(), true))
    throw std::runtime_error(contenders[0].form + " form: no reply to the probe request");
  const std::string reference_name = contenders[0].form + " form";
  ProgramIo io(program, 0.0f);
  fill_probe(io);
  c.timings.push_back({contenders[0].form, median_request_us(*reference, io, requests, kTimingBudgetS), {}});
  if (c.timings[0].median_us < 0) throw std::runtime_error(contenders[0].form + " form: a timed request failed");
  double best = c.timings[0].median_us;
  std::unique_ptr<ProgramRunner> challenger;  // the fastest other form so far
  for (size_t k = 1; k < contenders.size(); ++k) {
    FormTiming t{contenders[k].form, -1, {}};
    std::unique_ptr<ProgramRunner> r;
    try {
      r = contenders[k].start();
      t.refused = probe_error(*r, program, want, reference_name);
      if (t.refused.empty()) {
        t.median_us = median_request_us(*r, io, requests, kTimingBudgetS);
        if (t.median_us < 0) t.refused = "a timed request failed";
      }
    } catch (const std::exception& e) {
      t.refused = e.what();
    }
    if (t.refused.empty() && t.median_us < best) {
      best = t.median_us;
      challenger = std::move(r);
      c.chosen = k;
    }
    c.timings.push_back(std::move(t));
  }
  c.runner = c.chosen == 0 ? std::move(reference) : std::move(challenger);
  if (std::string e = probe_error(*c.runner, program, want, reference_name + "'s first reply"); !e.empty())
    throw std::runtime_error(contenders[c.chosen].form + " form, kept, no longer answers the probe as it did (" + e +
                             "): a refused form may have faulted the device");
  return c;
}

std::string choice_text(const ChosenForm& c) {
  std::string s = "form chosen by timing on this card:";
  std::string refusals;
  for (size_t k = 0; k < c.timings.size(); ++k) {
    const FormTiming& t = c.timings[k];
    if (!t.refused.empty()) {
      refusals += "; " + t.form + " refused: " + t.refused;
      continue;
    }
    char b[64];
    std::snprintf(b, sizeof b, " %.2f us", t.median_us);
    s += (k ? ", " : " ") + t.form + b + (k == c.chosen ? " (kept)" : "");
  }
  return s + refusals;
}

}  // namespace tickinfer::cuda
