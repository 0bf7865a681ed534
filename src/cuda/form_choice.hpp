// Which execution form a plan runs, chosen by timing on the card (CompileOptions::cuda_form =
// "auto" for a model the resident LSTM kernel does not run): the CUDA graph form and the resident
// program form are each started in turn, held to agree on one probe request, timed host to host,
// and the faster kept. Off the hot path (compile time); host C++, so the rule is tested on
// machines without a GPU with host runners in the forms' places.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/device_runner.hpp"

namespace tickinfer::cuda {

struct FormContender {
  std::string form;                                       // its name in the timings ("graph", "program")
  std::function<std::unique_ptr<ProgramRunner>()> start;  // throws std::exception when the form cannot run
};

struct FormTiming {
  std::string form;
  double median_us = -1;  // host to host, one request at a time; -1 when not timed
  std::string refused;    // why it is not a candidate ("" when timed)
};

struct ChosenForm {
  std::unique_ptr<ProgramRunner> runner;  // started, state zeroed on its next reset
  size_t chosen = 0;                      // index into the contenders
  std::vector<FormTiming> timings;        // one per contender, in order
};

// Contender 0 is the reference: its start's exception propagates, and it must answer the probe.
// Every other is a candidate only when it starts, answers, and gives every output of the probe
// (inputs a fixed pattern in [-1, 1], state zeroed) within agree_margins(program) of the
// reference's: the forms run the same step bodies, so they agree to the bit unless a kernel is
// wrong (the margins allow the compiler contracting a*b+c differently in another kernel). Each candidate is
// timed over `requests` after requests / 10 warm-ups (the median; fewer, at least 11, where they
// would take more than a quarter of a second), the previous best kept alive
// beside it and every loser stopped at once, so at most two forms are ever started. The kept form
// answers the probe once more at the end, so a refused form that faulted the device (which spoils
// every form's context) fails the compile instead of leaving a plan that answers NaN.
ChosenForm choose_form(const DeviceProgram& program, std::vector<FormContender> contenders, int requests = 200);

inline constexpr double kAgreeAbs = 1e-5, kAgreeRel = 1e-4;

// Whether an output agrees with the reference's: within abs + rel |want| (NaN never does).
struct AgreeMargins {
  double abs = kAgreeAbs, rel = kAgreeRel;
  bool operator()(double got, double want) const { return std::fabs(got - want) <= abs + rel * std::fabs(want); }
};
// The fp32 margins: also how the resident LSTM's timed shapes are held to the host's reference
// (resident_tuning.hpp).
inline bool agrees(double got, double want) { return AgreeMargins{}(got, want); }

// How closely two runs of `program` must agree: agrees()'s margins for fp32 tensors. Where a step
// stores 16-bit tensors, a last-bit difference before a rounding to 16 bits (a contraction the
// other kernel did not make) moves the stored value by a whole 16-bit step, and such steps
// compound through the layers after: the margins are then 8 of the format's steps (fp16: 8 x
// 2^-10 relative; bf16: 8 x 2^-7) and 1e-3 absolute. A wrong kernel still differs by far more.
AgreeMargins agree_margins(const DeviceProgram& program);

// The probe request's input i: a fixed pattern in [-1, 1] (zeros would hide a step that ignores
// its input).
inline float probe_input(size_t i) { return float(int((i * 7919) % 2001) - 1000) / 1000.0f; }

// The probe request's outputs as the host runs the program's step bodies (host_program_runner,
// items forwards): what a form that no other form checks is held to (the resident program's
// cluster sizes).
ProgramIo host_probe_reply(const std::shared_ptr<const DeviceProgram>& program);
// Runs the probe request on `runner` (state zeroed) and holds every output to `want`
// (agree_margins(program));
// "" when all agree, else what did not ("no reply to the probe request", or the first output that
// differs, naming `reference`).
std::string probe_error(ProgramRunner& runner, const DeviceProgram& program, const ProgramIo& want,
                        const std::string& reference);

// Median microseconds host to host over `requests` after requests / 10 warm-ups, or over fewer
// (at least 11) once the timed ones have taken budget_s; -1 when a request went unanswered. The
// state is zeroed by the first request only (a stream program's ticks run on).
double median_request_us(ProgramRunner& runner, ProgramIo& io, int requests, double budget_s);

// One line: "form chosen by timing on this card: program 12.3 us (kept), graph 45.6 us", then
// each refusal with its reason.
std::string choice_text(const ChosenForm& c);

}  // namespace tickinfer::cuda
