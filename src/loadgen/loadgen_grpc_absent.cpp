// tickinfer loadgen's gRPC side in a build without the model server (TICKINFER_SERVING=OFF, as
// `make demo` builds): REST works, gRPC says which build has it.
#include "loadgen/loadgen.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::loadgen {

namespace {
[[noreturn]] void absent() {
  throw Error("loadgen: gRPC targets need the model server's build (this one is TICKINFER_SERVING=OFF, as `make demo` "
              "builds); `make build` builds build/tickinfer with it");
}
}  // namespace

std::unique_ptr<Transport> grpc_transport(const std::string&, int, const std::string&) { absent(); }
std::string grpc_predict_message(const std::string&, int, const std::string&, const std::string&, const std::string&) {
  absent();
}

}  // namespace tickinfer::loadgen
