// `tickinfer feed` as real processes on loopback: serve with faults on both lines + listen
// --check against the sent log; record a session, replay the capture into listen, and check
// again; and usage errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include "support/source_paths.hpp"

namespace {

const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";

std::string temp(const std::string& name) {
  return std::string(::tickinfer::test::binary_dir()) + "/feed_cli_" + std::to_string(getpid()) + "_" + name;
}

// Removes this process's scratch files when a test passed (kept for inspection when it failed).
struct ScratchCleanup {
  ~ScratchCleanup() {
    if (::testing::Test::HasFailure()) return;
    const std::string prefix = "feed_cli_" + std::to_string(getpid()) + "_";
    for (const auto& e : std::filesystem::directory_iterator(::tickinfer::test::binary_dir())) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) std::filesystem::remove(e.path());
    }
  }
};

// Ports unique to this process, so parallel test runs do not collide.
int base_port() { return 20000 + static_cast<int>(getpid() % 4000) * 10; }
std::string addr(int offset) { return "127.0.0.1:" + std::to_string(base_port() + offset); }

struct Process {
  pid_t pid = -1;
  std::string out_path;
};

Process start(const std::vector<std::string>& args, const std::string& out_path) {
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

// Exit code, or -1 if it had to be killed after timeout_s.
int wait_for(const Process& p, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    if (waitpid(p.pid, &status, WNOHANG) == p.pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits until the process printed `ready` (its sockets are bound), at most 30 s.
void wait_ready(const Process& p, const std::string& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(p.out_path).find(ready) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(FeedCli, ServeAndListenCheckAgreeUnderFaultsOnBothLines) {
  ScratchCleanup cleanup;
  const std::string log = temp("sent.log");
  Process listen = start({"feed", "listen", "--line-a", addr(1), "--line-b", addr(2), "--recovery", addr(0),
                          "--check", log, "--recovery-timeout-us", "25000", "--recovery-attempts", "12"},
                         temp("listen.out"));
  wait_ready(listen, "listening on");
  Process serve = start({"feed", "serve", "--messages", "30000", "--rate", "100000", "--seed", "9",
                         "--line-a", addr(1), "--line-b", addr(2), "--rerequest", addr(0), "--linger", "3",
                         "--faults-a", "loss=0.02,reorder=0.05,dup=0.01,burst=0.001",
                         "--faults-b", "loss=0.02,reorder=0.05,dup=0.01", "--sent-log", log},
                        temp("serve.out"));
  const int serve_rc = wait_for(serve, 60);
  const int listen_rc = wait_for(listen, 60);
  const std::string out = slurp(listen.out_path);
  EXPECT_EQ(serve_rc, 0) << slurp(serve.out_path);
  EXPECT_EQ(listen_rc, 0) << out;
  EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
  EXPECT_NE(out.find("check content hash equals the exchange's"), std::string::npos) << out;
}

TEST(FeedCli, ARecordedSessionReplaysIntoTheSameDelivery) {
  ScratchCleanup cleanup;
  const std::string log = temp("sent2.log"), cap = temp("session.cap");
  Process record = start({"feed", "record", "--line-a", addr(3), "--line-b", addr(4), "--out", cap},
                         temp("record.out"));
  wait_ready(record, "recording");
  Process serve = start({"feed", "serve", "--messages", "20000", "--rate", "100000", "--seed", "10",
                         "--line-a", addr(3), "--line-b", addr(4), "--rerequest", addr(5), "--linger", "0.3",
                         "--faults-a", "loss=0.03,reorder=0.05,dup=0.02", "--sent-log", log},
                        temp("serve2.out"));
  ASSERT_EQ(wait_for(serve, 60), 0) << slurp(serve.out_path);
  ASSERT_EQ(wait_for(record, 30), 0) << slurp(record.out_path);
  // Line B was clean, so the capture alone holds every message; no recovery during replay.
  // Without recovery a hole is skipped after the gap timeout; the replaying process can be
  // descheduled between a packet and its copy on the other line, so give holes plenty of time.
  Process listen = start({"feed", "listen", "--line-a", addr(6), "--line-b", addr(7), "--recovery", "none",
                          "--gap-timeout-us", "500000", "--gap-packets", "1000000", "--check", log},
                         temp("listen2.out"));
  wait_ready(listen, "listening on");
  Process replay = start({"feed", "replay", cap, "--line-a", addr(6), "--line-b", addr(7), "--speed", "1"},
                         temp("replay.out"));
  EXPECT_EQ(wait_for(replay, 60), 0) << slurp(replay.out_path);
  EXPECT_EQ(wait_for(listen, 60), 0) << slurp(listen.out_path);
  const std::string out = slurp(listen.out_path);
  EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
}

TEST(FeedCli, BadInputIsAClearError) {
  ScratchCleanup cleanup;
  const std::string junk = temp("junk.cap");
  std::ofstream(junk) << "not a capture";
  Process p = start({"feed", "replay", junk}, temp("bad1.out"));
  EXPECT_EQ(wait_for(p, 10), 1);
  EXPECT_NE(slurp(p.out_path).find("not a tickinfer capture file"), std::string::npos);
  Process q = start({"feed", "serve", "--faults-a", "loss=1.5"}, temp("bad2.out"));
  EXPECT_EQ(wait_for(q, 10), 1);
  EXPECT_NE(slurp(q.out_path).find("loss"), std::string::npos);
  Process r = start({"feed", "listen", "--line-a", "nowhere"}, temp("bad3.out"));
  EXPECT_EQ(wait_for(r, 10), 2);
  Process s = start({"feed"}, temp("bad4.out"));
  EXPECT_EQ(wait_for(s, 10), 2);
}

}  // namespace
