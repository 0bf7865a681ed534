#pragma once
// Process-wide count of C++ heap allocations (every operator new form), for the pipeline's
// "allocations after warmup" statistic: linking tickinfer_pipeline replaces the global
// operator new/delete with versions that count (one relaxed atomic add) and then call malloc/free.
// A steady-state hot path must leave the count flat; `tickinfer run` reports it and
// tests/pipeline_alloc_test.cpp checks it. (malloc called directly by C libraries is not counted.)
#include <cstdint>

namespace tickinfer::pipeline {

std::uint64_t allocation_count() noexcept;
// The calling thread's allocations no longer count: for a thread in the process that is not the
// run's (the exchange `tickinfer run --source` starts beside it).
void exclude_this_thread_from_allocation_count() noexcept;

}  // namespace tickinfer::pipeline
