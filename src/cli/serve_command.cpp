// `tickinfer serve`: a drop-in for tensorflow_model_server (REST and gRPC APIs, versioned model
// repository with hot reload, warmup, Prometheus metrics). Flags are tensorflow_model_server's
// (docs/serving.md has the table); it runs until SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <pthread.h>

#include "cli/commands.hpp"
#include "formats/isolated_load.hpp"
#include "serving/model_server.hpp"
#include "serving/server_flags.hpp"

#ifndef TICKINFER_VERSION
#define TICKINFER_VERSION "unknown"
#endif

namespace tickinfer::cli {

ArgParser serve_parser() {
  return ArgParser("serve",
                   "serve models over TF Serving's REST and gRPC APIs ('tickinfer serve --help' lists the flags)");
}

int run_serve_args(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h" || a == "--helpfull") {
      std::printf("usage: tickinfer serve --flag=value ...\n\n%s\n\nflags of tensorflow_model_server "
                  "(--flag=value or --flag value; booleans --flag or --flag=true|false):\n%s",
                  serve_parser().summary().c_str(), serving::server_flags_help().c_str());
      return 0;
    }
  }
  serving::ServerFlags flags;
  try {
    flags = serving::parse_server_flags(args);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (flags.print_version) {
    std::printf("TensorFlow ModelServer: tickinfer %s\n", TICKINFER_VERSION);
    return 0;
  }
  // Keras files are parsed in child processes; reloads happen on the server's threads, so the
  // children come from a loader process started now, while this process has one thread.
  formats::start_loader_process();
  // Block the stop signals in every thread (the server's threads inherit the mask) and wait for
  // them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  serving::ModelServer server(flags, stderr);
  server.start();
  std::fprintf(stderr, "tickinfer serve: gRPC on %s:%d, REST on %s:%d (0 = off), ready=%s\n",
               flags.rest_api_bind_address.c_str(), server.grpc_port(), flags.rest_api_bind_address.c_str(),
               server.rest_port(), server.repository().ready() ? "yes" : "no");
  for (const auto& m : server.repository().snapshot()->models) {
    for (const auto& v : m.statuses) {
      std::fprintf(stderr, "tickinfer serve: model '%s' version %lld: %s%s%s\n", m.name.c_str(),
                   static_cast<long long>(v.version), serving::version_state_name(v.state),
                   v.error_message.empty() ? "" : ": ", v.error_message.c_str());
    }
  }
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "tickinfer serve: signal %d, stopping\n", sig);
  server.stop();
  return 0;
}

int run_serve(const ArgParser&) { return 0; }  // unused: serve parses its own flags

}  // namespace tickinfer::cli
