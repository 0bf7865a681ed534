#pragma once
// Runs a function on a thread with a 1 GiB stack (reserved, touched only as used) and rethrows
// its exception here. The SavedModel lowering recurses along the graph's data path, one level
// per op, so a deep model needs more than the 8 MiB of a default thread.
#include <functional>

namespace tickinfer::formats {

void run_on_deep_stack(const std::function<void()>& fn);

}  // namespace tickinfer::formats
