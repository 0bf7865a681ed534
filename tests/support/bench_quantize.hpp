#pragma once
// A committed bench model quantized by the built CLI, for tests that run real .tkq files:
// `tickinfer quantize bench/models/<model>/model.keras --calibration <its in0.npy> --mode <mode>`
// into the temp directory. Tests skip where the CLI is not built (cli_built()).
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "source_paths.hpp"

namespace tickinfer::test {

inline std::string cli_path() { return std::string(::tickinfer::test::binary_dir()) + "/tickinfer"; }
inline bool cli_built() { return std::filesystem::exists(cli_path()); }

// The .tkq's path (named after `tag` and this process, so tests running in parallel, even two of
// one binary that quantize the same model, never read or remove each other's file), or "" when the
// CLI is not built or quantize failed. The caller removes the file.
// stream: `quantize --stream` (one step per call, the windows of in0.npy taken as ticks).
inline std::string quantize_bench_model(const std::string& model, const std::string& mode, const std::string& tag,
                                        bool stream = false) {
  if (!cli_built()) return "";
  const std::string src = std::string(::tickinfer::test::source_dir()) + "/bench/models/" + model;
  const std::string tkq =
      (std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(getpid()) + "_" + model + "_" + mode +
                                                 (stream ? "_stream" : "") + ".tkq"))
          .string();
  const std::string cmd = cli_path() + " quantize " + src + "/model.keras --calibration " + src + "/in0.npy --mode " +
                          mode + (stream ? " --stream" : "") + " -o " + tkq + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 ? tkq : "";
}

}  // namespace tickinfer::test
