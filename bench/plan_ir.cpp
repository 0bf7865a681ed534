// `plan_ir MODEL window|stream N`: compiles MODEL and runs Plan::run N times on fixed
// pseudo-random inputs, for instruction counts per run under callgrind (tools/ir_ab.sh collects
// only inside Plan::run). Counts repeat to the instruction where times on a shared VM do not, so
// two builds (before and after a change) compare exactly. Uses the public API only, so the same
// file builds against any revision's libraries.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "tickinfer/tickinfer.hpp"
int main(int argc, char** argv) {
  if (argc < 4) { std::fprintf(stderr, "usage: plan_ir MODEL window|stream N\n"); return 2; }
  tickinfer::Model model = tickinfer::Model::load(argv[1]);
  tickinfer::CompileOptions opt;
  if (std::strcmp(argv[2], "stream") == 0) opt.mode = tickinfer::RecurrentMode::Stream;
  tickinfer::Plan plan = tickinfer::compile(model, opt);
  const int n = std::atoi(argv[3]);
  std::vector<std::vector<float>> in(plan.num_inputs()), out(plan.num_outputs());
  std::vector<const float*> ip; std::vector<float*> op;
  unsigned s = 12345;
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].resize(plan.input_size(i));
    for (auto& v : in[i]) { s = s * 1103515245u + 12345u; v = static_cast<float>((s >> 8) & 0xFFFF) / 65536.0f - 0.5f; }
    ip.push_back(in[i].data());
  }
  for (size_t i = 0; i < out.size(); ++i) { out[i].resize(plan.output_size(i)); op.push_back(out[i].data()); }
  double sum = 0;
  for (int k = 0; k < n; ++k) { plan.run(ip.data(), op.data()); sum += op[0][0]; }
  std::printf("%s %s isa %s checksum %.6f\n", argv[1], argv[2], plan.isa(), sum);
  return 0;
}
