#pragma once
// The checkout the tests read fixtures from and the build tree they run binaries from. The two
// paths are compiled into one object (source_paths.cpp) rather than into every test's flags, so
// a clone in another directory finds every other test object in the compiler cache.
namespace tickinfer::test {
const char* source_dir();  // the checkout's root
const char* binary_dir();  // the CMake build directory (the CLI is binary_dir()/tickinfer)
}  // namespace tickinfer::test
