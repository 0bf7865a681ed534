// Compiled instead of the SavedModel and ONNX readers when the build leaves them out
// (TICKINFER_PROTOBUF_FORMATS=OFF: `make demo` builds only what it runs, and these need protobuf).
// Every entry point the rest of the program calls is here, and each refuses the format by name,
// saying which build reads it, so a user of that binary gets the reason, not a parse error.
#include <string>

#include "formats/onnx/onnx_file.hpp"
#include "formats/savedmodel/saved_model.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {
std::string not_in_this_build(const std::string& label, const char* format) {
  return label + ": " + format +
         " are not read by this build of tickinfer (configured with TICKINFER_PROTOBUF_FORMATS=OFF, as "
         "`make demo` does); `make build` builds build/tickinfer with the SavedModel and ONNX readers";
}
}  // namespace

SavedModel load_saved_model(const std::string& dir, const SavedModelOptions&) {
  throw Error(not_in_this_build(dir, "SavedModel directories"));
}

SavedModel import_saved_model(const std::string&, const std::string&, const VariableReader&, const std::string& label,
                              const SavedModelOptions&) {
  throw Error(not_in_this_build(label, "SavedModel directories"));
}

// Without the reader nothing can tell ONNX bytes from other bytes, so none are taken for ONNX; a
// file named *.onnx still reaches load_onnx and its refusal.
bool looks_like_onnx(const void*, size_t) { return false; }

Graph load_onnx(const void*, size_t, const std::string& label, const std::string&) {
  throw Error(not_in_this_build(label, "ONNX files"));
}

}  // namespace tickinfer::formats
