#pragma once
// Helpers for the pipeline's process-level tests: start `tickinfer` subcommands as real child
// processes with their output in a file, wait with a timeout, and write run configurations that
// point at the bundled default model with ports unique to this test process.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include "support/source_paths.hpp"

namespace pipeline_test {

inline const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";
inline const std::string kDefault = std::string(::tickinfer::test::source_dir()) + "/examples/default";

// This test process's files (configs, outputs, logs) live in one directory of the build tree,
// removed when the process ends with every test passed and kept for diagnosis when one failed:
// written beside the binaries, they piled up by the thousand across runs.
inline std::string temp_dir_of(pid_t pid) {
  return std::string(::tickinfer::test::binary_dir()) + "/test_tmp/pipeline_" + std::to_string(pid);
}
inline const std::string& temp_dir() {
  static const std::string dir = [] {
    std::filesystem::create_directories(temp_dir_of(getpid()));
    return temp_dir_of(getpid());
  }();
  return dir;
}

struct TempDirRemoval {
  pid_t owner = getpid();  // a forked child that exits must not remove its parent's files
  // Constructed first, googletest's registry is destroyed after this object, which reads it.
  TempDirRemoval() { ::testing::UnitTest::GetInstance(); }
  ~TempDirRemoval() {
    const ::testing::UnitTest* run = ::testing::UnitTest::GetInstance();
    if (getpid() != owner || !run->Passed() || run->test_to_run_count() == 0) return;
    std::error_code ignored;
    std::filesystem::remove_all(temp_dir_of(owner), ignored);
  }
};
inline TempDirRemoval temp_dir_removal;

inline std::string temp(const std::string& name) { return temp_dir() + "/" + name; }

// A block of 10 ports per test process (the feed tests use offsets 0-4 of the same block scheme).
inline int base_port() { return 20000 + static_cast<int>(getpid() % 4000) * 10 + 5; }

struct Process {
  pid_t pid = -1;
  std::string out_path;
};

inline Process start(const std::vector<std::string>& args, const std::string& out_path) {
  Process p;
  p.out_path = out_path;
  p.pid = fork();
  if (p.pid == 0) {
    const int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kBinary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(kBinary.c_str(), argv.data());
    _exit(127);
  }
  return p;
}

// Exit code; -1 if it had to be killed after timeout_s; -2 if it died of a signal.
inline int wait_for(const Process& p, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    if (waitpid(p.pid, &status, WNOHANG) == p.pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool wait_file(const std::string& path, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline int run_cli(const std::vector<std::string>& args, std::string& out, double timeout_s = 60) {
  const std::string path = temp("cli.out");
  Process p = start(args, path);
  const int rc = wait_for(p, timeout_s);
  out = slurp(path);
  return rc;
}

struct RunConfig {
  std::string threading = "inline";
  std::string log;                 // "" = no decision log
  std::string flush = "interval";
  bool full_vectors = true;
  std::string shm;                 // "" = none
  bool udp = true;
  std::string ready;
  std::string report;
  double seconds = 0;
  std::string extra;               // appended verbatim
  std::string model_extra;         // appended to the first [[model]] table
  std::string spec;                // feature spec ("" = the default model's)
  std::string udp_batch;           // [signals] udp_batch ("" = the default, packet)
  std::string features_shm;        // [features] shm ("" = no feature store)
  std::string features_ring;       // [features] ring ("" = no feature ring)
  std::string features_udp;        // [features] udp HOST:PORT ("" = none)
  std::string threading_extra;     // appended to [threading] (agents, agent_cpus, ...)
};

// Ports: line A = base, B = base+1, re-requests = base+2, signals = base+3.
inline std::string write_config(const RunConfig& c, const std::string& name) {
  const int b = base_port();
  std::ostringstream o;
  o << "[feed]\nline_a = \"127.0.0.1:" << b << "\"\nline_b = \"127.0.0.1:" << b + 1 << "\"\nrecovery = \"127.0.0.1:"
    << b + 2 << "\"\nidle = \"backoff\"\nrecovery_timeout_us = 100000\nrecovery_attempts = 10\n\n"
    << "[features]\nspec = \"" << (c.spec.empty() ? kDefault + "/features.toml" : c.spec) << "\"\n"
    << (c.features_shm.empty() ? std::string() : "shm = \"" + c.features_shm + "\"\nshm_ttl_ms = 60000\n")
    << (c.features_ring.empty() ? std::string() : "ring = \"" + c.features_ring + "\"\nring_capacity = 65536\n")
    << (c.features_udp.empty() ? std::string() : "udp = \"" + c.features_udp + "\"\n") << "\n"
    << "[[model]]\nname = \"default\"\npath = \"" << kDefault << "/model.keras\"\nversion = 1\nmode = \"tick\"\n"
    << "center = 0.5\nthreshold = 0.1\n" << c.model_extra << "\n"
    << "[threading]\nmode = \"" << c.threading << "\"\ncompute_idle = \"backoff\"\n" << c.threading_extra
    << "\n[signals]\n";
  if (c.udp) o << "udp = \"127.0.0.1:" << b + 3 << "\"\n";
  if (!c.udp_batch.empty()) o << "udp_batch = \"" << c.udp_batch << "\"\n";
  if (!c.shm.empty()) o << "shm = \"" << c.shm << "\"\n";
  if (!c.log.empty())
    o << "\n[decision_log]\npath = \"" << c.log << "\"\nflush = \"" << c.flush << "\"\nflush_interval_ms = 5\nfull_vectors = "
      << (c.full_vectors ? "true" : "false") << "\n";
  o << "\n[warmup]\nmin_iterations = 500\nmax_iterations = 20000\n\n[run]\nseconds = " << c.seconds
    << "\nfeed_silence_s = 3\nstatus_interval_ms = 500\n";
  if (!c.ready.empty()) o << "ready_file = \"" << c.ready << "\"\n";
  if (!c.report.empty()) o << "report = \"" << c.report << "\"\n";
  o << c.extra;
  const std::string path = temp(name);
  std::ofstream(path) << o.str();
  return path;
}

inline std::vector<std::string> serve_args(long messages, double rate, bool faults) {
  const int b = base_port();
  std::vector<std::string> a = {"feed", "serve", "--instruments", "20", "--messages", std::to_string(messages), "--rate",
                                std::to_string(static_cast<long>(rate)), "--seed", "5", "--wall-clock-ts",
                                "--line-a", "127.0.0.1:" + std::to_string(b), "--line-b", "127.0.0.1:" + std::to_string(b + 1),
                                "--rerequest", "127.0.0.1:" + std::to_string(b + 2), "--linger", "3"};
  if (faults) {
    a.insert(a.end(), {"--faults-a", "loss=0.02,reorder=0.03,dup=0.01", "--faults-b", "loss=0.02,reorder=0.03,dup=0.01"});
  }
  return a;
}

// The number after `key` in text (first occurrence), or -1.
inline long long number_after(const std::string& text, const std::string& key) {
  const auto p = text.find(key);
  if (p == std::string::npos) return -1;
  return std::atoll(text.c_str() + p + key.size());
}

}  // namespace pipeline_test
