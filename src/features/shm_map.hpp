#pragma once
// Opening the shared-memory objects of the feature store and the feature ring: errors name the
// kind of object ("feature store"), its name and the system's reason.
#include <cstddef>
#include <string>

#include "tickinfer/feature_store.hpp"

namespace tickinfer::features {

// Throws tickinfer::Error "<kind> '<name>': <what>: <strerror(errno)>".
[[noreturn]] void shm_fail(const char* kind, const std::string& name, const std::string& what);

// Maps all of an existing object read-only. `absent_hint` goes into the error when it cannot be
// opened ("is the writer running?"); an object smaller than `min_bytes` is refused.
ShmMapping map_shm_readonly(const char* kind, const std::string& name, const std::string& absent_hint,
                            std::size_t min_bytes);

}  // namespace tickinfer::features
