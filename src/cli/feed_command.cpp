// `tickinfer feed <action>`: serve (synthetic exchange), listen (receive, arbitrate, recover,
// report; --check against a sent log), record (capture to a file), replay (resend a capture with
// its pacing), bench (loopback latency: bare recvfrom loop vs the feed's receive path, one run).
#include <pthread.h>
#include <sched.h>
#include <csignal>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/itch_options.hpp"
#include "stats/clock.hpp"
#include "feed/batch_receiver.hpp"
#include "feed/capture_file.hpp"
#include "feed/exchange.hpp"
#include "feed/feed_report.hpp"
#include "feed/idle_strategy.hpp"
#include "feed/messages.hpp"
#include "itch/itch_source.hpp"
#include "stats/latency_summary.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::cli {

using namespace tickinfer::feed;

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }
void install_signals() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}


// "host:port" -> (host, port); UsageError naming the option otherwise.
std::pair<std::string, std::uint16_t> host_port(const std::string& opt, const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos) throw UsageError("--" + opt + " '" + v + "': expected HOST:PORT");
  long port = 0;
  try {
    port = std::stol(v.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (port < 0 || port > 65535) throw UsageError("--" + opt + " '" + v + "': port must be 0..65535");
  return {v.substr(0, colon), static_cast<std::uint16_t>(port)};
}

// "loss=0.02,burst=0.001,burst_len=8,reorder=0.05,depth=3,dup=0.01,delay=0.001,delay_us=200"
LineFaults parse_faults(const std::string& opt, const std::string& spec) {
  LineFaults f;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--" + opt + ": '" + item + "' is not NAME=VALUE");
    const std::string k = item.substr(0, eq);
    double v = 0;
    try {
      v = std::stod(item.substr(eq + 1));
    } catch (...) {
      throw UsageError("--" + opt + ": '" + item + "' value is not a number");
    }
    if (k == "loss") f.loss = v;
    else if (k == "burst") f.burst_start = v;
    else if (k == "burst_len") f.burst_mean = static_cast<std::uint32_t>(v);
    else if (k == "reorder") f.reorder = v;
    else if (k == "depth") f.reorder_depth = static_cast<std::uint32_t>(v);
    else if (k == "dup") f.duplicate = v;
    else if (k == "delay") f.delay = v;
    else if (k == "delay_us") f.delay_ns = static_cast<std::int64_t>(v * 1000);
    else throw UsageError("--" + opt + ": unknown fault '" + k + "' (loss, burst, burst_len, reorder, depth, dup, delay, delay_us)");
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
ArgParser feed_serve_parser() {
  ArgParser p("feed serve", "synthetic exchange: publish a seeded market on lines A and B");
  p.option("seed", "N", "market and fault seed", "1");
  p.option("messages", "N", "messages to publish", "100000");
  p.option("rate", "MSG/S", "messages per second", "50000");
  p.option("instruments", "N", "instruments", "4");
  p.option("regimes", "LIST", "regime cycle: calm,rally,crash,flat,burst", "calm,rally,burst,crash,flat");
  p.option("events-per-regime", "N", "events before the next regime", "50000");
  p.option("session", "NAME", "MoldUDP64 session (<= 10 alphanumerics)", "TICKINF001");
  p.option("line-a", "HOST:PORT", "line A destination (unicast or multicast group)", "127.0.0.1:31001");
  p.option("line-b", "HOST:PORT", "line B destination, or 'none'", "127.0.0.1:31002");
  p.option("faults-a", "SPEC", "line A faults, e.g. loss=0.02,reorder=0.05,dup=0.01,burst=0.001", "");
  p.option("faults-b", "SPEC", "line B faults (same syntax)", "");
  p.option("rerequest", "HOST:PORT", "re-request server address", "127.0.0.1:31000");
  p.flag("silent-rerequests", "fault: never answer re-requests");
  p.option("answer-fraction", "F", "fault: answer only this share of each re-request", "1");
  p.option("linger", "SECONDS", "keep answering re-requests after the end", "2");
  p.option("sent-log", "FILE", "write the exact sent sequence and injected statistics", "");
  p.option("interface", "ADDR", "multicast interface address", "");
  p.flag("wall-clock-ts", "stamp messages with the send time (CLOCK_REALTIME), not the synthetic clock");
  p.flag("sleep-pacing", "wait for each packet asleep, not spinning (leaves the core to the threads beside it)");
  p.option("itch", "DAYFILE", "publish this NASDAQ ITCH 5.0 day file (raw or gzip) instead of the synthetic market", "");
  return p;
}

int run_feed_serve(const ArgParser& a) {
  ExchangeConfig c;
  c.market.seed = static_cast<std::uint64_t>(a.integer("seed", 0, 1L << 62));
  c.messages = static_cast<std::uint64_t>(a.integer("messages", 1, 1L << 26));
  c.rate = a.number("rate", 1, 1e8);
  c.market.instruments = static_cast<std::uint32_t>(a.integer("instruments", 1, 100000));
  c.market.events_per_regime = static_cast<std::uint64_t>(a.integer("events-per-regime", 1, 1L << 40));
  c.market.regimes.clear();
  std::stringstream rs(a.value("regimes"));
  for (std::string r; std::getline(rs, r, ',');) c.market.regimes.push_back(parse_regime(r));
  c.session = Session::from(a.value("session"));
  auto [ha, pa] = host_port("line-a", a.value("line-a"));
  c.line_a = make_address(ha, pa);
  c.line_b_enabled = a.value("line-b") != "none";
  if (c.line_b_enabled) {
    auto [hb, pb] = host_port("line-b", a.value("line-b"));
    c.line_b = make_address(hb, pb);
  }
  c.faults[0] = parse_faults("faults-a", a.value("faults-a"));
  c.faults[1] = parse_faults("faults-b", a.value("faults-b"));
  auto [hr, pr] = host_port("rerequest", a.value("rerequest"));
  c.rerequest_bind = hr;
  c.rerequest_port = pr;
  c.rerequest_silent = a.flag_set("silent-rerequests");
  c.rerequest_answer_fraction = a.number("answer-fraction", 0, 1);
  c.linger_ns = static_cast<std::int64_t>(a.number("linger", 0, 86400) * 1e9);
  c.multicast_interface = a.value("interface");
  c.wall_clock_timestamps = a.flag_set("wall-clock-ts");
  if (!a.value("itch").empty()) {
    c.framed_messages = std::make_shared<const std::vector<std::uint8_t>>(
        itch::load_day_records(a.value("itch"), c.messages));
  }
  c.sleep_pacing = a.flag_set("sleep-pacing");
  install_signals();
  Exchange ex(c);
  std::printf("serving %llu messages at %.0f msg/s, session %s, re-requests on %s:%u\n",
              static_cast<unsigned long long>(c.messages), c.rate, c.session.str().c_str(), hr.c_str(),
              ex.rerequest_port());
  std::fflush(stdout);
  ex.run(&g_stop);
  const ExchangeStats& s = ex.stats();
  std::printf("published %llu messages in %llu packets; content hash %016llx\n",
              static_cast<unsigned long long>(s.messages), static_cast<unsigned long long>(s.packets),
              static_cast<unsigned long long>(s.content_hash));
  for (int l = 0; l < (c.line_b_enabled ? 2 : 1); ++l) {
    std::printf("line %c: %llu packets sent, %llu messages lost, %llu duplicate packets, %llu reordered packets\n",
                "AB"[l], static_cast<unsigned long long>(s.line[l].packets_sent),
                static_cast<unsigned long long>(s.line[l].lost_messages),
                static_cast<unsigned long long>(s.line[l].duplicate_packets),
                static_cast<unsigned long long>(s.line[l].reordered_packets));
  }
  std::printf("lost on every line: %llu; re-requests %llu (rejected %llu, ignored %llu), messages resent %llu\n",
              static_cast<unsigned long long>(s.both_lost_messages), static_cast<unsigned long long>(s.rerequests),
              static_cast<unsigned long long>(s.rerequests_rejected),
              static_cast<unsigned long long>(s.rerequests_ignored),
              static_cast<unsigned long long>(s.messages_retransmitted));
  if (!a.value("sent-log").empty()) ex.write_sent_log(a.value("sent-log"));
  return 0;
}

// ---------------------------------------------------------------------------------------------
ArgParser listen_parser() {
  ArgParser p("feed listen", "receive lines A/B, sequence, recover gaps, print statistics");
  p.option("line-a", "HOST:PORT", "line A (bind address or multicast group)", "127.0.0.1:31001");
  p.option("line-b", "HOST:PORT", "line B, or 'none'", "127.0.0.1:31002");
  p.option("recovery", "HOST:PORT", "re-request server, or 'none' (gaps are then skipped)", "127.0.0.1:31000");
  p.option("session", "NAME", "accept only this session", "");
  p.option("interface", "ADDR", "local interface address for multicast groups", "0.0.0.0");
  p.option("idle", "KIND", "spin, yield, backoff or block", "backoff");
  p.option("window", "N", "reorder window, messages (power of two)", "4096");
  p.option("gap-timeout-us", "US", "a hole open this long is requested/skipped", "1000");
  p.option("gap-packets", "N", "... or after this many packets (all lines)", "256");
  p.option("recovery-timeout-us", "US", "per re-request attempt", "5000");
  p.option("recovery-attempts", "N", "attempts before a range is declared lost", "4");
  p.option("seconds", "S", "stop after this long (0: at End of Session)", "0");
  p.option("check", "SENT_LOG", "compare delivery and statistics with `feed serve --sent-log`", "");
  p.flag("print", "print every event");
  p.option("protocol", "NAME", "payload: tickinfer (its Q/T messages) or itch50 (NASDAQ ITCH 5.0 through full-depth books)", "tickinfer");
  p.option("symbols", "A,B,...", "itch50: the symbols to deliver (instrument i is the i-th), default all (instrument = locate)", "");
  p.option("date", "YYYY-MM-DD", "itch50: the trading date, for epoch timestamps", "");
  return p;
}

struct SentLog {
  std::uint64_t messages = 0, hash = 0, both_lost = 0;
  std::uint64_t lost[2] = {}, dup[2] = {}, reordered[2] = {}, packets[2] = {};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> both_lost_runs;
};

SentLog read_sent_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("sent log '" + path + "': cannot open");
  SentLog s;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("messages ", 0) == 0) s.messages = std::stoull(line.substr(9));
    else if (line.rfind("content_hash ", 0) == 0) s.hash = std::stoull(line.substr(13), nullptr, 16);
    else if (line.rfind("both_lost_messages ", 0) == 0) s.both_lost = std::stoull(line.substr(19));
    else if (line.rfind("both_lost ", 0) == 0) {
      unsigned long long f = 0, c = 0;
      std::sscanf(line.c_str(), "both_lost %llu %llu", &f, &c);
      s.both_lost_runs.emplace_back(f, c);
    } else if (line.rfind("line ", 0) == 0) {
      char name = 0;
      unsigned long long ps, l, d, r;
      if (std::sscanf(line.c_str(), "line %c packets_sent=%llu lost_messages=%llu duplicate_packets=%llu reordered_packets=%llu",
                      &name, &ps, &l, &d, &r) == 5) {
        const int i = name == 'B' ? 1 : 0;
        s.packets[i] = ps;
        s.lost[i] = l;
        s.dup[i] = d;
        s.reordered[i] = r;
      }
    }
  }
  if (s.messages == 0) throw Error("sent log '" + path + "': no 'messages' line; not a sent log");
  return s;
}

int run_listen(const ArgParser& a) {
  FeedConfig c;
  auto [ha, pa] = host_port("line-a", a.value("line-a"));
  c.line_a.address = ha;
  c.line_a.port = pa;
  c.has_line_b = a.value("line-b") != "none";
  if (c.has_line_b) {
    auto [hb, pb] = host_port("line-b", a.value("line-b"));
    c.line_b.address = hb;
    c.line_b.port = pb;
  }
  if (a.value("recovery") != "none") {
    auto [hr, pr] = host_port("recovery", a.value("recovery"));
    c.recovery_host = hr;
    c.recovery_port = pr;
  }
  c.session = a.value("session");
  c.line_a.interface = c.line_b.interface = a.value("interface");
  c.idle = a.value("idle");
  c.window = static_cast<std::uint32_t>(a.integer("window", 2, 1 << 24));
  c.gap_timeout_ns = a.integer("gap-timeout-us", 0, 60'000'000) * 1000;
  c.gap_packet_threshold = static_cast<std::uint32_t>(a.integer("gap-packets", 0, 1 << 30));
  c.recovery_timeout_ns = a.integer("recovery-timeout-us", 1, 60'000'000) * 1000;
  c.recovery_attempts = static_cast<int>(a.integer("recovery-attempts", 1, 1000));
  std::shared_ptr<book::ItchEventDecoder> itch;
  if (a.value("protocol") == "itch50") {
    itch = make_itch_decoder(a.value("symbols"), a.value("date"));
    c.decoder = itch;
  } else if (a.value("protocol") != "tickinfer") {
    throw UsageError("--protocol: '" + a.value("protocol") + "' (tickinfer or itch50)");
  }
  const double seconds = a.number("seconds", 0, 1e7);
  const bool print = a.flag_set("print");
  std::uint64_t delivered = 0, misordered = 0, last = 0, lost = 0, by_recovery = 0;
  std::uint64_t hash = kFnvOffset;
  std::vector<std::uint8_t> line_of;  // for --check: which line delivered each seq
  const bool check = !a.value("check").empty();
  std::uint8_t buf[64];
  FeedHandler feed(c, [&](const FeedEvent& e) {
    if (delivered && e.seq <= last) ++misordered;
    last = e.seq;
    ++delivered;
    if (e.line == kLineRecovery) ++by_recovery;
    const auto len = static_cast<std::uint16_t>(encode_event(e.event, buf));
    hash = fnv1a_message(hash, e.seq, buf, len);
    if (check) {
      if (line_of.size() <= e.seq) line_of.resize(e.seq + 1, 255);
      line_of[e.seq] = e.line;
    }
    if (print) {
      if (e.event.kind == md::Event::Kind::Quote) {
        const auto& q = e.event.quote;
        std::printf("%llu Q %u %s x %u / %s x %u\n", static_cast<unsigned long long>(e.seq), q.instrument,
                    format_price(q.bid_price).c_str(), q.bid_size, format_price(q.ask_price).c_str(), q.ask_size);
      } else {
        const auto& t = e.event.trade;
        std::printf("%llu T %u %s x %u %c\n", static_cast<unsigned long long>(e.seq), t.instrument,
                    format_price(t.price).c_str(), t.size, t.aggressor == md::Side::Unknown ? '?' : static_cast<char>(t.aggressor));
      }
    }
  });
  feed.on_loss([&](std::uint64_t, std::uint64_t count, LossReason) { lost += count; });
  for (const auto& w : feed.warnings()) std::fprintf(stderr, "tickinfer: warning: %s\n", w.c_str());
  std::printf("listening on line A %s:%u%s%s\n", c.line_a.address.c_str(), feed.port(kLineA),
              c.has_line_b ? (", line B " + c.line_b.address + ":" + std::to_string(feed.port(kLineB))).c_str() : "",
              c.recovery_host.empty() ? ", no recovery" : (", recovery via " + c.recovery_host + ":" + std::to_string(c.recovery_port)).c_str());
  std::fflush(stdout);
  install_signals();
  const std::int64_t t_end = seconds > 0 ? stats::realtime_ns() + static_cast<std::int64_t>(seconds * 1e9) : INT64_MAX;
  IdleStrategy idle(parse_idle_kind(c.idle), c.max_park_ns);
  std::int64_t quiet_since = 0;
  while (!g_stop && stats::realtime_ns() < t_end) {
    const int work = feed.poll();
    if (seconds == 0 && work == 0) {
      const FeedStats s = feed.stats();
      // Done at End of Session, or once the next session started: the one listened to is over.
      const bool done = session_over(s);
      if (done) {
        if (!quiet_since) quiet_since = stats::realtime_ns();
        if (stats::realtime_ns() - quiet_since > 200'000'000) break;  // let late copies arrive and count
      }
    } else if (work) {
      quiet_since = 0;
    }
    idle.idle(work);
  }
  feed.finish();
  const FeedStats s = feed.stats();
  std::printf("delivered %llu messages (%llu via re-request), lost %llu, misordered %llu; content hash %016llx\n",
              static_cast<unsigned long long>(delivered), static_cast<unsigned long long>(by_recovery),
              static_cast<unsigned long long>(lost), static_cast<unsigned long long>(misordered),
              static_cast<unsigned long long>(hash));
  std::printf("sequencer: %llu packets, %llu duplicates, %llu stale, %llu far-future, %llu overruns, max buffered %llu, "
              "gap triggers time/count/overrun %llu/%llu/%llu\n",
              (unsigned long long)s.sequencer.packets, (unsigned long long)s.sequencer.duplicates,
              (unsigned long long)s.sequencer.stale, (unsigned long long)s.sequencer.far_future,
              (unsigned long long)s.sequencer.window_overruns, (unsigned long long)s.sequencer.max_buffered,
              (unsigned long long)s.sequencer.gap_triggers_time, (unsigned long long)s.sequencer.gap_triggers_count,
              (unsigned long long)s.sequencer.gap_triggers_overrun);
  for (int l = 0; l < (c.has_line_b ? 2 : 1); ++l) {
    const auto& ls = s.lines[l];
    std::printf("line %c: %s, kernel drops %llu\n", "AB"[l], report_line(ls).c_str(),
                (unsigned long long)s.kernel_drops[l]);
  }
  std::printf("sessions: %llu adopted, %llu other-session packets, %llu unconfirmed candidates dropped\n",
              (unsigned long long)s.sequencer.sessions, (unsigned long long)s.sequencer.wrong_session_packets,
              (unsigned long long)s.sequencer.candidates_dropped);
  std::printf("%s\n", report_lost_ranges(s).c_str());
  std::printf("recovery: %llu ranges, %llu requests (%llu retries), %llu completed, %llu failed, %llu cancelled\n",
              (unsigned long long)s.recovery.ranges, (unsigned long long)s.recovery.requests_sent,
              (unsigned long long)s.recovery.retries, (unsigned long long)s.recovery.completed,
              (unsigned long long)s.recovery.failed, (unsigned long long)s.recovery.cancelled);
  std::printf("%s, truncated %llu, undecodable %llu\n", report_malformed(s).c_str(),
              (unsigned long long)s.truncated, (unsigned long long)s.undecodable);
  std::vector<stats::LatencyRow> table{
      {"kernel receive -> delivered", stats::LatencySummary::from(feed.rx_to_delivered_ns())}};
  if (c.has_line_b) {  // by the kernel receive stamps of the two copies
    table.push_back({"lead of line A over B", stats::LatencySummary::from(feed.lead_ns(kLineA))});
    table.push_back({"lead of line B over A", stats::LatencySummary::from(feed.lead_ns(kLineB))});
  }
  std::printf("%s", stats::latency_table("(ns)", table).c_str());
  if (itch) print_itch_summary(*itch);
  if (!check) return 0;
  const SentLog log = read_sent_log(a.value("check"));
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    std::printf("check %-60s %s\n", what.c_str(), ok ? "ok" : "FAILED");
    if (!ok) ++failures;
  };
  expect(delivered == log.messages && lost == 0, "every message delivered (" + std::to_string(delivered) + "/" + std::to_string(log.messages) + ")");
  expect(misordered == 0, "no misordered or duplicated delivery");
  expect(hash == log.hash, "content hash equals the exchange's");
  bool all_recovered = true;
  for (auto [f, n] : log.both_lost_runs)
    for (std::uint64_t q = f; q < f + n; ++q)
      if (q >= line_of.size() || line_of[q] != kLineRecovery) all_recovered = false;
  expect(all_recovered, "messages lost on every line came by re-request (" + std::to_string(log.both_lost) + ")");
  for (int l = 0; l < (c.has_line_b ? 2 : 1); ++l) {
    const std::string n(1, "AB"[l]);
    expect(s.lines[l].lost_messages == log.lost[l], "line " + n + " lost messages = injected");
    expect(s.lines[l].duplicate_packets == log.dup[l], "line " + n + " duplicate packets = injected");
    expect(s.lines[l].reordered_packets == log.reordered[l], "line " + n + " reordered packets = injected");
  }
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
ArgParser record_parser() {
  ArgParser p("feed record", "capture received datagrams with kernel receive times to a file");
  p.option("line-a", "HOST:PORT", "line A", "127.0.0.1:31001");
  p.option("line-b", "HOST:PORT", "line B, or 'none'", "127.0.0.1:31002");
  p.option("out", "FILE", "capture file to write", "feed.cap");
  p.option("seconds", "S", "stop after this long (0: at End of Session or Ctrl-C)", "0");
  return p;
}

int run_record(const ArgParser& a) {
  std::vector<UdpSocket> socks;
  for (const char* opt : {"line-a", "line-b"}) {
    if (std::string(opt) == "line-b" && a.value(opt) == "none") break;
    auto [h, p] = host_port(opt, a.value(opt));
    ReceiverConfig rc;
    const bool mc = IN_MULTICAST(ntohl(make_address(h, 0).sin_addr.s_addr));
    if (mc) rc.group = h;
    else rc.bind_address = h;
    rc.port = p;
    socks.push_back(UdpSocket::receiver(rc));
    if (!socks.back().warning().empty()) std::fprintf(stderr, "tickinfer: warning: %s\n", socks.back().warning().c_str());
  }
  CaptureWriter w(a.value("out"));
  BatchReceiver rx(32, 2048);
  std::uint32_t drops[2] = {0, 0};
  std::printf("recording %zu line(s) to %s\n", socks.size(), a.value("out").c_str());
  std::fflush(stdout);
  install_signals();
  const double seconds = a.number("seconds", 0, 1e7);
  const std::int64_t t_end = seconds > 0 ? stats::realtime_ns() + static_cast<std::int64_t>(seconds * 1e9) : INT64_MAX;
  IdleStrategy idle(IdleKind::BackOff);
  // End of Session on one line can be read before the other line's last packets: after it, keep
  // draining every socket until they stay quiet for 200 ms.
  bool eos = false;
  std::int64_t quiet_until = 0;
  while (!g_stop && stats::realtime_ns() < t_end) {
    if (eos && stats::realtime_ns() >= quiet_until) break;
    int work = 0;
    for (std::size_t s = 0; s < socks.size(); ++s) {
      const int n = rx.receive(socks[s].fd());
      for (int i = 0; i < n; ++i) {
        if (rx.truncated(i)) continue;
        w.write(rx.kernel_rx_ns(i), static_cast<std::uint8_t>(s), rx.data(i), rx.length(i));
        PacketView v;
        if (seconds == 0 && parse_packet(rx.data(i), rx.length(i), v) == ParseStatus::Ok &&
            v.kind == PacketKind::EndOfSession) {
          eos = true;
        }
      }
      work += n;
      drops[s] = rx.kernel_drops();
    }
    if (work) quiet_until = stats::realtime_ns() + 200'000'000;
    idle.idle(work);
  }
  w.flush();
  std::printf("recorded %llu datagrams to %s (kernel drops: line A %u, line B %u)\n",
              static_cast<unsigned long long>(w.records()), a.value("out").c_str(), drops[0], drops[1]);
  return 0;
}

// ---------------------------------------------------------------------------------------------
ArgParser replay_parser() {
  ArgParser p("feed replay", "resend a capture file with its recorded pacing (or faster)");
  p.positional("FILE", "capture file from `feed record`");
  p.option("line-a", "HOST:PORT", "where line A records go", "127.0.0.1:31001");
  p.option("line-b", "HOST:PORT", "where line B records go", "127.0.0.1:31002");
  p.option("speed", "X", "pacing multiplier (2 = twice as fast; 0 = as fast as possible)", "1");
  return p;
}

int run_replay(const ArgParser& a) {
  CaptureContents cap = read_capture(a.positional_value("FILE"));
  // The recorder writes in read order (a batch per socket); resend in kernel-receive order.
  std::stable_sort(cap.records.begin(), cap.records.end(),
                   [](const CaptureRecord& x, const CaptureRecord& y) { return x.rx_ns < y.rx_ns; });
  if (cap.corrupt_records) std::fprintf(stderr, "tickinfer: warning: %llu corrupt records skipped\n", (unsigned long long)cap.corrupt_records);
  if (cap.truncated_tail) std::fprintf(stderr, "tickinfer: warning: capture ends in a truncated record (ignored)\n");
  auto [ha, pa] = host_port("line-a", a.value("line-a"));
  auto [hb, pb] = host_port("line-b", a.value("line-b"));
  const sockaddr_in to[2] = {make_address(ha, pa), make_address(hb, pb)};
  const double speed = a.number("speed", 0, 1e6);
  UdpSocket out = UdpSocket::sender();
  install_signals();
  std::uint64_t sent = 0, failed = 0;
  const std::int64_t start = stats::monotonic_ns();
  for (const auto& r : cap.records) {
    if (g_stop) break;
    if (speed > 0 && !cap.records.empty()) {
      const auto due = start + static_cast<std::int64_t>(static_cast<double>(r.rx_ns - cap.records[0].rx_ns) / speed);
      for (;;) {
        const std::int64_t t = stats::monotonic_ns();
        if (t >= due) break;
        if (due - t > 200'000) {
          timespec d{0, 100'000};
          nanosleep(&d, nullptr);
        }
      }
    }
    if (out.send_to(r.payload.data(), r.payload.size(), to[r.line == 1 ? 1 : 0])) ++sent;
    else ++failed;
  }
  std::printf("replayed %llu datagrams (%llu refused by the kernel)\n", (unsigned long long)sent, (unsigned long long)failed);
  return failed ? 1 : 0;
}

}  // namespace

int run_feed_bench(const ArgParser& a);  // feed_bench_command.cpp
ArgParser feed_bench_parser();

ArgParser feed_parser() {
  ArgParser p("feed", "market-data feed: serve | listen | record | replay FILE | bench (see 'tickinfer feed ACTION --help')");
  p.positional("ACTION", "serve, listen, record, replay or bench");
  return p;
}

int run_feed(const ArgParser&) { return 0; }  // dispatch happens in run_feed_main

int run_feed_main(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("feed needs an action: serve, listen, record, replay or bench");
  const std::string action = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  struct Action {
    const char* name;
    ArgParser (*make)();
    int (*run)(const ArgParser&);
  };
  static const Action actions[] = {{"serve", feed_serve_parser, run_feed_serve},
                                   {"listen", listen_parser, run_listen},
                                   {"record", record_parser, run_record},
                                   {"replay", replay_parser, run_replay},
                                   {"bench", feed_bench_parser, run_feed_bench}};
  for (const auto& act : actions) {
    if (action != act.name) continue;
    ArgParser p = act.make();
    p.parse(rest);
    if (p.help_requested()) {
      std::fputs(p.help().c_str(), stdout);
      return 0;
    }
    return act.run(p);
  }
  if (action == "--help" || action == "-h") {
    std::fputs(feed_parser().help().c_str(), stdout);
    return 0;
  }
  throw UsageError("feed: unknown action '" + action + "' (serve, listen, record, replay, bench)");
}

}  // namespace tickinfer::cli
