// `plan_ir MODEL window|stream|slide|incremental N`: compiles MODEL and runs Plan::run N times on
// fixed pseudo-random inputs, for instruction counts per run under callgrind (tools/ir_ab.sh
// collects only inside Plan::run). slide: window mode over windows that move one row per run
// (one sequence); incremental: the same windows through an incremental plan
// (CompileOptions::incremental; tools/ir_incremental.sh). Counts repeat to the instruction where times on a shared VM do not, so
// two builds (before and after a change) compare exactly. Uses the public API only, so the same
// file builds against any revision's libraries.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "tickinfer/tickinfer.hpp"
int main(int argc, char** argv) {
  if (argc < 4) { std::fprintf(stderr, "usage: plan_ir MODEL window|stream|slide|incremental N\n"); return 2; }
  tickinfer::Model model = tickinfer::Model::load(argv[1]);
  tickinfer::CompileOptions opt;
  if (std::strcmp(argv[2], "stream") == 0) opt.mode = tickinfer::RecurrentMode::Stream;
  const bool slide = std::strcmp(argv[2], "slide") == 0 || std::strcmp(argv[2], "incremental") == 0;
  opt.incremental = std::strcmp(argv[2], "incremental") == 0;
  tickinfer::Plan plan = tickinfer::compile(model, opt);
  const int n = std::atoi(argv[3]);
  std::vector<std::vector<float>> in(plan.num_inputs()), out(plan.num_outputs());
  std::vector<const float*> ip; std::vector<float*> op;
  std::vector<size_t> row(plan.num_inputs());
  unsigned s = 12345;
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t T = slide ? static_cast<size_t>(plan.input_shape(i)[0]) : 1;
    row[i] = plan.input_size(i) / T;
    in[i].resize(plan.input_size(i) + (slide ? static_cast<size_t>(n) * row[i] : 0));
    for (auto& v : in[i]) { s = s * 1103515245u + 12345u; v = static_cast<float>((s >> 8) & 0xFFFF) / 65536.0f - 0.5f; }
    ip.push_back(in[i].data());
  }
  for (size_t i = 0; i < out.size(); ++i) { out[i].resize(plan.output_size(i)); op.push_back(out[i].data()); }
  double sum = 0;
  for (int k = 0; k < n; ++k) {
    if (slide) {
      for (size_t i = 0; i < ip.size(); ++i) ip[i] = in[i].data() + static_cast<size_t>(k) * row[i];
    }
    plan.run(ip.data(), op.data());
    sum += op[0][0];
  }
  std::printf("%s %s isa %s checksum %.6f\n", argv[1], argv[2], plan.isa(), sum);
  return 0;
}
