// `tickinfer serve` in a build without the model server (TICKINFER_SERVING=OFF: `make demo` builds
// only what it runs, and the server needs gRPC): the command is listed, and running it says which
// build has it instead of "unknown command".
#include <cstdio>

#include "cli/commands.hpp"

namespace tickinfer::cli {

ArgParser serve_parser() {
  return ArgParser("serve", "serve models over TF Serving's REST and gRPC APIs (not in this build: `make build`)");
}

int run_serve_args(const std::vector<std::string>&) {
  std::fprintf(stderr,
               "tickinfer serve: this build of tickinfer has no model server (configured with TICKINFER_SERVING=OFF, "
               "as `make demo` does); `make build` builds build/tickinfer with it\n");
  return 2;
}

int run_serve(const ArgParser&) { return run_serve_args({}); }

int run_serve_replay(const ArgParser&, const std::string& log_path) {
  std::fprintf(stderr,
               "tickinfer replay: '%s' is a tickinfer serve request log; this build has no model server to replay it "
               "with (TICKINFER_SERVING=OFF); `make build` builds build/tickinfer with it\n",
               log_path.c_str());
  return 2;
}

}  // namespace tickinfer::cli
