// Zero allocations in the steady state: the allocation counter counts every operator new, and a
// Pipeline in this process, fed by a real exchange in a forked child (whose allocations are its
// own), leaves it flat from ready to the end of the run, interval by interval.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>

#include <memory>

#include "feed/exchange.hpp"
#include "pipeline/alloc_counter.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace tickinfer;
using namespace pipeline_test;

TEST(PipelineAlloc, CounterCountsEveryNew) {
  const auto before = pipeline::allocation_count();
  auto a = std::make_unique<int>(1);
  auto b = std::make_unique<double[]>(16);
  std::vector<int> v(100);
  EXPECT_EQ(pipeline::allocation_count() - before, 3u);
}

TEST(PipelineAlloc, SteadyStateAllocatesNothing) {
  // "agents": rings with two compute agents (the supervisor merges their intervals).
  for (const std::string threading : {"inline", "rings", "agents"}) {
    RunConfig rc;
    rc.threading = threading == "agents" ? "rings" : threading;
    if (threading == "agents") rc.threading_extra = "agents = 2\n";
    rc.log = temp(threading + "-alloc.tdl");
    rc.shm = "tickinfer-alloc-" + std::to_string(getpid());
    pipeline::PipelineConfig cfg = pipeline::load_pipeline_config(write_config(rc, "alloc.toml"));
    cfg.quiet = true;
    cfg.status_interval_ns = 200'000'000;
    pipeline::Pipeline p(cfg);
    p.warmup();
    p.mark_ready();
    const int port = base_port();  // getpid() differs in the child
    const pid_t child = fork();
    if (child == 0) {
      feed::ExchangeConfig c;
      c.market.instruments = 20;
      c.messages = 40000;
      c.rate = 40000;
      c.line_a = feed::make_address("127.0.0.1", static_cast<std::uint16_t>(port));
      c.line_b = feed::make_address("127.0.0.1", static_cast<std::uint16_t>(port + 1));
      c.rerequest_port = static_cast<std::uint16_t>(port + 2);
      c.linger_ns = 2'000'000'000;
      c.wall_clock_timestamps = true;
      c.faults[0].loss = 0.01;  // gaps and re-requests are part of the steady state
      c.faults[1].reorder = 0.02;
      try {
        feed::Exchange ex(c);
        ex.run();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "exchange: %s\n", e.what());
        _exit(1);
      }
      _exit(0);
    }
    std::atomic<bool> stop{false};
    p.run(stop);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exchange child failed";
    const auto t = p.totals();
    EXPECT_GT(t.events, 39000u) << threading;  // a range lost on both lines may be given up under load
    EXPECT_GT(t.signals, 35000u) << threading;
    EXPECT_EQ(t.allocations_at_end, t.allocations_at_ready) << threading;
    ASSERT_GE(p.intervals_published(), 1u) << threading;
    for (std::size_t i = 0; i < p.intervals_published(); ++i)
      EXPECT_EQ(p.intervals()[i].allocations, t.allocations_at_ready) << threading << " interval " << i;
    shm_unlink(("/" + rc.shm).c_str());
  }
}
