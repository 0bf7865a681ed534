// `tickinfer`: inspect, predict and benchmark Keras models with the tickinfer engine.
// Exit codes: 0 success, 1 error (bad file, model, data), 2 usage error.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "tickinfer/error.hpp"

#ifndef TICKINFER_VERSION
#define TICKINFER_VERSION "unknown"
#endif

namespace tickinfer::cli {

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {"inspect", inspect_parser, run_inspect},
      {"predict", predict_parser, run_predict},
      {"bench", bench_parser, run_bench},
      {"quantize", quantize_parser, run_quantize, run_quantize_args},
      {"cuda-precision", cuda_precision_parser, run_cuda_precision},
      {"feed", feed_parser, run_feed, run_feed_main},
      {"features", features_parser, run_features, run_features_main},
      {"book", book_parser, run_book},
      {"serve", serve_parser, run_serve, run_serve_args},
      {"run", run_parser, run_run},
      {"replay", decision_replay_parser, run_decision_replay},
      {"report", report_parser, run_report},
      {"signals", signals_parser, run_signals},
      {"loadgen", loadgen_parser, run_loadgen},
      {"study", study_parser, run_study},
      {"pipeline", pipeline_parser, run_pipeline, run_pipeline_main},
  };
  return commands;
}

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

const Command* find_command(const std::string& name) {
  for (const auto& c : all_commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void print_overview(std::FILE* out) {
  std::fprintf(out,
               "usage: tickinfer <command> [arguments] [options]\n"
               "       tickinfer help [command]\n"
               "       tickinfer --version\n\ncommands:\n");
  for (const auto& c : all_commands()) {
    std::fprintf(out, "  %-15s%s\n", c.name, c.make_parser().summary().c_str());
  }
  std::fprintf(out, "  %-15s%s\n", "help", "show this overview, or a command's options");
}

int report_usage_error(const std::string& message, const char* command) {
  std::fprintf(stderr, "tickinfer: error: %s\n", message.c_str());
  if (command) {
    std::fprintf(stderr, "run 'tickinfer help %s' for its options\n", command);
  } else {
    std::fprintf(stderr, "run 'tickinfer help' for the list of commands\n");
  }
  return kExitUsage;
}

int run_help(const std::vector<std::string>& args) {
  if (args.empty()) {
    print_overview(stdout);
    return 0;
  }
  if (args.size() > 1) return report_usage_error("help takes at most one command name", nullptr);
  const Command* c = find_command(args[0]);
  if (!c) return report_usage_error("help: unknown command '" + args[0] + "'", nullptr);
  std::fputs(c->make_parser().help().c_str(), stdout);
  return 0;
}

int run_main(int argc, char** argv) {
  if (argc < 2) {
    print_overview(stderr);
    return kExitUsage;
  }
  const std::string first = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (first == "--version" || first == "version") {
    std::printf("tickinfer %s\n", TICKINFER_VERSION);
    return 0;
  }
  if (first == "help" || first == "--help" || first == "-h") return run_help(rest);

  const Command* command = find_command(first);
  if (!command) return report_usage_error("unknown command '" + first + "'", nullptr);
  try {
    if (first == "report")  // `tickinfer report RUN.json -o report.html`: -o is --output
      for (auto& a : rest)
        if (a == "-o") a = "--output";
    if (command->run_args) return command->run_args(rest);
    ArgParser parser = command->make_parser();
    parser.parse(rest);
    if (parser.help_requested()) {
      std::fputs(parser.help().c_str(), stdout);
      return 0;
    }
    return command->run(parser);
  } catch (const UsageError& e) {
    return report_usage_error(e.what(), command->name);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tickinfer: error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace
}  // namespace tickinfer::cli

int main(int argc, char** argv) {
  try {
    return tickinfer::cli::run_main(argc, argv);
  } catch (const std::exception& e) {  // e.g. bad_alloc while reporting
    std::fprintf(stderr, "tickinfer: error: %s\n", e.what());
    return 1;
  }
}
