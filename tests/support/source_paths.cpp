#include "support/source_paths.hpp"

namespace tickinfer::test {
const char* source_dir() { return TICKINFER_SOURCE_DIR; }
const char* binary_dir() { return TICKINFER_BINARY_DIR; }
}  // namespace tickinfer::test
