#pragma once
// The `tickinfer` subcommands. Each takes the arguments after its name, writes its report to
// stdout and returns the process exit code (0 on success). Usage mistakes throw UsageError
// (exit 2); every other failure throws tickinfer::Error or another std::exception (exit 1).
// main() prints either as "tickinfer: error: <message>" on stderr.
#include <string>
#include <vector>

#include "cli/arg_parser.hpp"

namespace tickinfer::cli {

struct Command {
  const char* name;
  // Declares the command's arguments on a parser (also used by `tickinfer help`).
  ArgParser (*make_parser)();
  int (*run)(const ArgParser& args);
  // Set for commands that parse their own flags (serve takes tensorflow_model_server's flags):
  // called with the raw arguments instead of make_parser().parse() + run().
  int (*run_args)(const std::vector<std::string>& args) = nullptr;
};

ArgParser inspect_parser();
int run_inspect(const ArgParser& args);

// fp16/bf16 weights on the GPU, layer by layer (cuda_precision_command.cpp).
ArgParser cuda_precision_parser();
int run_cuda_precision(const ArgParser& args);

ArgParser predict_parser();
int run_predict(const ArgParser& args);

ArgParser bench_parser();
int run_bench(const ArgParser& args);

ArgParser feed_parser();
int run_feed(const ArgParser& args);
// `feed` has actions with their own options: main() hands it the raw arguments.
int run_feed_main(const std::vector<std::string>& args);

// Full-depth order books from NASDAQ TotalView-ITCH 5.0 (book_command.cpp).
ArgParser book_parser();
int run_book(const ArgParser& args);

ArgParser features_parser();
int run_features(const ArgParser& args);
// `features --watch shm:NAME` parses with its own options (features_watch_command.cpp).
int run_features_main(const std::vector<std::string>& args);
ArgParser features_watch_parser();
int run_features_watch(const ArgParser& args);

ArgParser serve_parser();
int run_serve(const ArgParser& args);
int run_serve_args(const std::vector<std::string>& args);

// The tick-to-signal pipeline (src/pipeline/).
ArgParser run_parser();
int run_run(const ArgParser& args);
ArgParser study_parser();  // study_command.cpp
int run_study(const ArgParser& args);
ArgParser decision_replay_parser();
int run_decision_replay(const ArgParser& args);
// A `tickinfer serve` request log (serve_replay_command.cpp; builds without the server say so).
int run_serve_replay(const ArgParser& args, const std::string& log_path);
ArgParser report_parser();
int run_report(const ArgParser& args);
ArgParser signals_parser();
int run_signals(const ArgParser& args);
ArgParser loadgen_parser();
int run_loadgen(const ArgParser& args);
ArgParser pipeline_parser();
ArgParser pipeline_agents_parser();
int run_pipeline_agents(const ArgParser& args);
int run_pipeline(const ArgParser& args);
int run_pipeline_main(const std::vector<std::string>& args);

// `tickinfer quantize`: float model -> .tkq with a precision per layer (main() hands it the raw
// arguments so `-o OUT` works beside --output).
ArgParser quantize_parser();
int run_quantize(const ArgParser& args);
int run_quantize_args(const std::vector<std::string>& args);

// Every subcommand, in the order `tickinfer help` lists them.
const std::vector<Command>& all_commands();

}  // namespace tickinfer::cli
