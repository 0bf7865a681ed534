// The main job on NASDAQ TotalView-ITCH 5.0 as real processes on loopback: a synthetic ITCH day
// (tools/itch/make_itch_day.py) published by `tickinfer feed serve --itch` over two lossy
// MoldUDP64 lines with re-requests -> `tickinfer run` with [feed] protocol = "itch50" (the feed
// forwards the symbols' order messages, the compute side keeps their books and reads the features
// from them) -> the ITCH demo model (examples/itch). In every threading form (inline, rings, two
// compute agents) the books must see exactly what the batch path sees from the file
// (`tickinfer features --symbols`: the same book ticks, the same live orders at the end), with
// the book stage in the latency table, integrity counters 0 and no allocation after ready.
// A late joiner rebuilds its books by re-requesting from sequence 1; `run --source` replays a day
// file or a capture with one command. Without re-requests, what is lost reaches the books as a loss notice, every book is marked
// unsynced and its features are invalid from then on (no signals on them).
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "pipeline_test_support.hpp"
#include "support/source_paths.hpp"

using namespace pipeline_test;

namespace {

const std::string kItch = std::string(::tickinfer::test::source_dir()) + "/examples/itch";
constexpr long kMessages = 120'000;

std::string symbols() {
  std::ifstream in(kItch + "/symbols.txt");
  std::string s;
  std::getline(in, s);
  return s;
}

// The demo's day, shortened (the directory and so the symbols are the same at any length).
const std::string& day() {
  static const std::string path = [] {
    const std::string p = temp("itch_day.itch");
    const std::string cmd = "python3 " + std::string(::tickinfer::test::source_dir()) +
                            "/tools/itch/make_itch_day.py --out " + p + " --messages " + std::to_string(kMessages) +
                            " --symbols 40 --seed 2026 >/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return p;
  }();
  return path;
}

std::string config(const std::string& threading, bool recovery, const std::string& ready) {
  const int b = base_port();
  std::ostringstream o;
  std::string list = "\"" + symbols() + "\"";
  for (std::size_t p = 0; (p = list.find(',', p)) != std::string::npos; p += 3) list.replace(p, 1, "\", \"");
  o << "[feed]\nline_a = \"127.0.0.1:" << b << "\"\nline_b = \"127.0.0.1:" << b + 1 << "\"\n";
  if (recovery) o << "recovery = \"127.0.0.1:" << b + 2 << "\"\nrecovery_timeout_us = 100000\nrecovery_attempts = 10\n";
  o << "idle = \"backoff\"\nprotocol = \"itch50\"\nsymbols = [" << list << "]\ndate = \"2019-12-30\"\n"
    << "max_orders = 65536\n\n[features]\nspec = \"" << kItch << "/features.toml\"\n\n"
    << "[[model]]\nname = \"itch\"\npath = \"" << kItch << "/model.keras\"\nversion = 1\nmode = \"tick\"\n"
    << "center = 0.5\nthreshold = 0.1\n\n[threading]\nmode = \"" << (threading == "agents" ? "rings" : threading == "late" || threading == "file" ? "inline" : threading)
    << "\"\ncompute_idle = \"backoff\"\n" << (threading == "agents" ? "agents = 2\n" : "")
    << "\n[signals]\nudp = \"127.0.0.1:" << b + 3 << "\"\n\n[warmup]\nmin_iterations = 200\nmax_iterations = 2000\n"
    << "\n[run]\nseconds = 0\nfeed_silence_s = 3\nstatus_interval_ms = 500\nready_file = \"" << ready << "\"\n";
  const std::string path = temp("itch_" + threading + ".toml");
  std::ofstream(path) << o.str();
  return path;
}

// Runs the day through `tickinfer run`; returns its output.
std::string run_day(const std::string& threading, bool recovery) {
  const std::string ready = temp("itch_ready_" + threading);
  std::remove(ready.c_str());
  const std::string out = temp("itch_run_" + threading + ".out");
  Process run = start({"run", config(threading, recovery, ready), "--quiet", "--report", temp("itch_report_" + threading + ".json")},
                      out);
  EXPECT_TRUE(wait_file(ready, 60)) << slurp(out);
  const int b = base_port();
  std::string served;
  EXPECT_EQ(run_cli({"feed", "serve", "--itch", day(), "--messages", std::to_string(kMessages), "--rate",
                     "60000", "--line-a", "127.0.0.1:" + std::to_string(b), "--line-b",
                     "127.0.0.1:" + std::to_string(b + 1), "--rerequest", "127.0.0.1:" + std::to_string(b + 2),
                     "--linger", "2", "--faults-a", "loss=0.02,reorder=0.03,dup=0.01", "--faults-b",
                     "loss=0.02,reorder=0.03,dup=0.01", "--seed", "4"},
                    served, 120),
            0)
      << served;
  EXPECT_EQ(wait_for(run, 60), 0) << slurp(out);
  return slurp(out);
}

// What the batch path gives from the file: book ticks of the symbols.
long long batch_ticks() {
  std::string out;
  EXPECT_EQ(run_cli({"features", kItch + "/features.toml", "--input", day(), "--symbols", symbols(),
                     "--date", "2019-12-30", "--output", temp("itch_batch.npy")},
                    out),
            0)
      << out;
  return number_after(out, "0 undecodable; ");
}

// The symbols' live orders at the end of the file: the `orders` column of `tickinfer book`'s
// per-symbol table (symbol locate book_msgs bids asks best_bid best_ask orders ...).
long long live_orders_in_file() {
  std::string out;
  EXPECT_EQ(run_cli({"book", day(), "--symbols", symbols()}, out), 0) << out;
  const std::string list = "," + symbols() + ",";
  long long orders = 0;
  int rows = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string x; cells >> x;) c.push_back(x);
    if (c.size() < 8 || list.find("," + c[0] + ",") == std::string::npos) continue;
    orders += std::atoll(c[7].c_str());
    ++rows;
  }
  EXPECT_EQ(rows, 8) << out;
  return orders;
}

class ItchRun : public ::testing::TestWithParam<std::string> {};

TEST_P(ItchRun, TheBooksSeeWhatTheFileHolds) {
  const long long ticks = batch_ticks(), orders = live_orders_in_file();
  ASSERT_GT(ticks, 10'000);
  ASSERT_GT(orders, 10);
  const std::string out = run_day(GetParam(), true);
  EXPECT_NE(out.find("state: ok (End of Session, everything delivered)"), std::string::npos) << out;
  // "books: N messages applied (0 undecodable), T book ticks to the features, L live orders at the end, 0 loss notices"
  EXPECT_EQ(number_after(out, "(0 undecodable), "), ticks) << out;
  EXPECT_EQ(number_after(out, "book ticks to the features, "), orders) << out;
  EXPECT_EQ(number_after(out, "live orders at the end, "), 0) << out;
  EXPECT_NE(out.find("integrity: unknown_ref 0, duplicate_ref 0, overfill 0, bad_side 0, zero_shares 0, "
                     "locate_mismatch 0, crossed 0, locked 0, capacity_rejects 0, while_unsynced 0"),
            std::string::npos)
      << out;
  EXPECT_GT(number_after(out, "\nbook          compute "), ticks) << out;  // every message applied is timed
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;
  EXPECT_GT(number_after(out, "signals: model 'itch' v1: "), ticks / 2) << out;
  // The run report has each symbol's book: seen, in sync, integrity 0, its live orders adding up
  // to the file's.
  std::ifstream rf(temp("itch_report_" + GetParam() + ".json"));
  const auto j = nlohmann::json::parse(rf);
  ASSERT_EQ(j["books"].size(), 8u);
  long long live = 0;
  for (const auto& b : j["books"]) {
    EXPECT_TRUE(b["seen"].get<bool>()) << b.dump();
    EXPECT_TRUE(b["synced"].get<bool>()) << b.dump();
    for (const auto& [name, v] : b["integrity"].items()) EXPECT_EQ(v.get<long long>(), 0) << b["symbol"] << " " << name;
    EXPECT_GT(b["bid_levels"].get<long long>() + b["ask_levels"].get<long long>(), 0) << b.dump();
    live += b["orders"].get<long long>();
  }
  EXPECT_EQ(live, orders);
}

INSTANTIATE_TEST_SUITE_P(Threading, ItchRun, ::testing::Values("inline", "rings", "agents"));

// A late joiner: the exchange has been publishing for a while when the run starts. Everything
// before its first packet is re-requested from sequence 1, so its books are rebuilt from the
// day's start and end exactly as the file's; it says when it is in sync.
TEST(ItchRunLateJoin, RebuildsFromSequenceOneAndSaysWhenInSync) {
  const long long ticks = batch_ticks(), orders = live_orders_in_file();
  const int b = base_port();
  Process serve = start({"feed", "serve", "--itch", day(), "--messages", std::to_string(kMessages), "--rate", "40000",
                         "--line-a", "127.0.0.1:" + std::to_string(b), "--line-b", "127.0.0.1:" + std::to_string(b + 1),
                         "--rerequest", "127.0.0.1:" + std::to_string(b + 2), "--linger", "8", "--seed", "4"},
                        temp("itch_late_serve.out"));
  Process listener = start({"signals", "udp:127.0.0.1:" + std::to_string(b + 3), "--summary", "--idle-exit", "3",
                            "--seconds", "90"},
                           temp("itch_late_signals.out"));
  usleep(800'000);  // about 30,000 messages are out before the run starts
  std::string out;
  EXPECT_EQ(run_cli({"run", config("late", true, temp("itch_ready_late"))}, out, 120), 0) << out;
  EXPECT_EQ(wait_for(serve, 60), 0);
  EXPECT_EQ(wait_for(listener, 60), 0);
  // The catch-up's signals came from re-requested ticks: flagged recovered; the live ones not.
  const std::string heard = slurp(temp("itch_late_signals.out"));
  const long long signals = number_after(out, "signals: model 'itch' v1: ");
  EXPECT_EQ(number_after(heard, "signals: "), signals) << heard;
  EXPECT_GT(number_after(heard, "flagged: "), 100) << heard;
  EXPECT_LT(number_after(heard, "flagged: "), signals) << heard;
  const long long joined = number_after(out, "joined at sequence ");
  EXPECT_GT(joined, 1000) << out;
  EXPECT_GT(number_after(out, "re-requested; in sync at sequence "), joined) << out;
  EXPECT_EQ(number_after(out, "(0 undecodable), "), ticks) << out;
  EXPECT_EQ(number_after(out, "book ticks to the features, "), orders) << out;
  EXPECT_NE(out.find("while_unsynced 0"), std::string::npos) << out;
  EXPECT_NE(out.find("state: ok (End of Session, everything delivered)"), std::string::npos) << out;
}

// One command: `tickinfer run --source FILE` publishes a day file or a capture on the run's own
// lines from an exchange in the same process; the books see what the batch path sees.
TEST(ItchRunFromAFile, DayFilesAndCapturesAreSources) {
  const long long ticks = batch_ticks(), orders = live_orders_in_file();
  const std::string pcap = temp("itch_day.pcap");
  const std::string cmd = "python3 " + std::string(::tickinfer::test::source_dir()) + "/tools/itch/make_mold_pcap.py " +
                          day() + " --out " + pcap + " --dup-rate 0.05 --reorder-rate 0.05 --ab --seed 3 >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  for (const std::string& source : {day(), pcap}) {
    std::string out;
    EXPECT_EQ(run_cli({"run", config("file", true, temp("itch_ready_file")), "--quiet", "--source", source,
                       "--source-rate", "200000"},
                      out, 120),
              0)
        << out;
    EXPECT_EQ(number_after(out, "(0 undecodable), "), ticks) << source << "\n" << out;
    EXPECT_EQ(number_after(out, "book ticks to the features, "), orders) << out;
    EXPECT_NE(out.find("state: ok (End of Session, everything delivered)"), std::string::npos) << out;
  }
  std::string out;
  EXPECT_NE(run_cli({"run", temp("itch_file.toml"), "--source", temp("missing.itch")}, out), 0);
  EXPECT_NE(out.find("missing.itch"), std::string::npos) << out;
}

// A book model on the live books: DeepLOB (bench/book_models/deeplob_small, input [100, 40, 1])
// over the 40-column LOB snapshot, one window of the last 100 bars per closed bar and symbol.
TEST(ItchRunBookModel, DeepLobRunsOnTheLobSnapshotWindow) {
  const int b = base_port();
  std::string list = "\"" + symbols() + "\"";
  for (std::size_t p = 0; (p = list.find(',', p)) != std::string::npos; p += 3) list.replace(p, 1, "\", \"");
  const std::string spec = temp("itch_lob.toml");
  std::ofstream(spec) << "[feature_set]\ninstruments = [1, 2, 3, 4, 5, 6, 7, 8]\nbar_ns = 120000000000\n"
                         "gap_limit = 1000\nwindow = 100\n[[feature]]\nkind = \"lob_snapshot\"\nlevels = 10\n";
  const std::string cfg = temp("itch_lob_run.toml");
  std::ofstream(cfg) << "[feed]\nline_a = \"127.0.0.1:" << b << "\"\nline_b = \"127.0.0.1:" << b + 1
                     << "\"\nrecovery = \"127.0.0.1:" << b + 2 << "\"\nidle = \"backoff\"\nprotocol = \"itch50\"\n"
                     << "symbols = [" << list << "]\ndate = \"2019-12-30\"\nmax_orders = 65536\n\n"
                     << "[features]\nspec = \"" << spec << "\"\n\n[[model]]\nname = \"deeplob\"\npath = \""
                     << ::tickinfer::test::source_dir() << "/bench/book_models/deeplob_small/model.keras\"\n"
                     << "mode = \"window\"\ncheck_signature = false\noutputs = [2]\ncenter = 0.34\nthreshold = 0.05\n\n"
                     << "[threading]\nmode = \"rings\"\ncompute_idle = \"backoff\"\n\n[warmup]\nmin_iterations = 20\n"
                     << "max_iterations = 200\n\n[run]\nseconds = 0\nfeed_silence_s = 3\n";
  std::string out;
  // A millisecond per window on this VM: rings, so the feed thread never waits for the model.
  ASSERT_EQ(run_cli({"run", cfg, "--quiet", "--source", day(), "--source-rate", "40000"}, out, 180), 0) << out;
  EXPECT_NE(out.find("state: ok (End of Session, everything delivered)"), std::string::npos) << out;
  // 16 h of exchange time in 120 s bars: once a symbol's window holds 100 bars, one run per bar.
  EXPECT_GT(number_after(out, "signals: model 'deeplob' v1: "), 1000) << out;
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;
}

TEST(ItchRunWithoutRecovery, LossesMarkTheBooksUnsynced) {
  const std::string out = run_day("inline", false);
  EXPECT_NE(out.find("state: DEGRADED"), std::string::npos) << out;
  EXPECT_GT(number_after(out, "live orders at the end, "), 0) << out;  // loss notices
  EXPECT_GT(number_after(out, "while_unsynced "), 0) << out;
  // From the first loss on, no book can be trusted: its ticks are invalid and no model runs on them.
  const long long ticks = number_after(out, "(0 undecodable), ");
  EXPECT_GT(ticks, 10'000) << out;
  EXPECT_LT(number_after(out, "signals: model 'itch' v1: "), ticks / 2) << out;
}

}  // namespace
