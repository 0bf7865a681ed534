#include "support/source_paths.hpp"

#include <cstdlib>

namespace tickinfer::test {
// $TICKINFER_SOURCE_DIR first: test binaries carried to another machine (tools/gpu_check.sh) read
// the fixtures of the checkout they run from.
const char* source_dir() {
  const char* env = std::getenv("TICKINFER_SOURCE_DIR");
  return env && *env ? env : TICKINFER_SOURCE_DIR;
}
const char* binary_dir() { return TICKINFER_BINARY_DIR; }
}  // namespace tickinfer::test
