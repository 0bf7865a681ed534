// `tickinfer signals tail|listen`: a small reader of the pipeline's signals, from the shared-memory
// ring (a co-located strategy's view) or from UDP. Prints one line per signal, or only counts.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/commands.hpp"
#include "stats/clock.hpp"
#include "feed/udp_socket.hpp"
#include "pipeline/signal_format.hpp"
#include "pipeline/signal_ring.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {
namespace {

std::atomic<bool> g_sig_stop{false};
void on_sig(int) { g_sig_stop = true; }


void print_signal(const pipeline::Signal& s) {
  std::printf("signal %llu tick %llu instrument %u model %s v%u decision %+d scores", static_cast<unsigned long long>(s.signal_seq),
              static_cast<unsigned long long>(s.tick_seq), s.instrument, s.model_name, s.model_version, s.decision);
  for (int i = 0; i < s.score_count; ++i) std::printf(" %.6g", static_cast<double>(s.scores[i]));
  std::printf(" rx->signal %.2f us%s%s\n", s.rx_to_signal_ns / 1e3, (s.flags & pipeline::kSignalDegraded) ? " DEGRADED" : "",
              (s.flags & pipeline::kSignalRecovered) ? " RECOVERED" : "");
}

}  // namespace

ArgParser signals_parser() {
  ArgParser p("signals", "read the pipeline's signals from the shm ring or UDP (a co-located reader)");
  p.positional("SOURCE", "shm:NAME (shared-memory ring) or udp:HOST:PORT");
  p.option("seconds", "S", "stop after this long (0: until Ctrl-C or --count)", "0");
  p.option("count", "N", "stop after N signals (0: no limit)", "0");
  p.option("idle-exit", "S", "stop after this long without a signal once one was seen (0: never)", "0");
  p.flag("from-start", "shm: start at the oldest signal still in the ring");
  p.flag("summary", "print only the final counts");
  p.option("ready-file", "FILE", "write this file once the reader is attached");
  return p;
}

int run_signals(const ArgParser& a) {
  const std::string src = a.positional_value("SOURCE");
  const double seconds = a.number("seconds", 0, 1e7);
  const long count = a.integer("count", 0, 1L << 62);
  const double idle_exit = a.number("idle-exit", 0, 1e7);
  const bool summary = a.flag_set("summary");
  std::signal(SIGINT, on_sig);
  std::signal(SIGTERM, on_sig);
  std::unique_ptr<pipeline::SignalRingReader> ring;
  feed::UdpSocket udp;
  if (src.rfind("shm:", 0) == 0) {
    ring = std::make_unique<pipeline::SignalRingReader>(src.substr(4), a.flag_set("from-start"));
  } else if (src.rfind("udp:", 0) == 0) {
    const std::string hp = src.substr(4);
    const auto c = hp.rfind(':');
    if (c == std::string::npos) throw UsageError("udp source must be udp:HOST:PORT");
    feed::ReceiverConfig rc;
    rc.bind_address = hp.substr(0, c);
    rc.port = static_cast<std::uint16_t>(std::stoi(hp.substr(c + 1)));
    rc.kernel_timestamps = false;
    rc.rcvbuf_bytes = 64 << 20;  // a reader descheduled for a while must not lose signals
    udp = feed::UdpSocket::receiver(rc);
  } else {
    throw UsageError("SOURCE must be shm:NAME or udp:HOST:PORT");
  }
  if (a.given("ready-file")) {
    std::FILE* f = std::fopen(a.value("ready-file").c_str(), "w");
    if (!f) throw Error("ready file '" + a.value("ready-file") + "': cannot create");
    std::fputs("attached\n", f);
    std::fclose(f);
  }
  const std::int64_t start = stats::monotonic_ns();
  std::int64_t last = 0;
  std::uint64_t n = 0, bad = 0, last_seq = 0, datagrams = 0;
  // Several compute agents draw their numbers from one counter and send on their own: numbers
  // arrive slightly out of order, so a gap is a number never seen, not a jump.
  std::uint64_t min_seq = 0, max_seq = 0, out_of_order = 0;
  std::uint64_t recovered = 0, degraded = 0;  // signals with those flags
  std::uint8_t buf[2048];
  while (!g_sig_stop) {
    bool got = false;
    std::size_t len = 0;
    if (ring) {
      got = ring->poll(buf);
      len = pipeline::kSignalBytes;
    } else {
      const ssize_t r = ::recv(udp.fd(), buf, sizeof buf, MSG_DONTWAIT);
      got = r > 0;
      len = got ? static_cast<std::size_t>(r) : 0;
    }
    const std::int64_t now = stats::monotonic_ns();
    if (got) {
      // A UDP datagram carries one or more messages back to back (docs/signal-format.md).
      ++datagrams;
      if (len == 0 || len % pipeline::kSignalBytes != 0) {
        ++bad;
        if (!summary) std::printf("bad datagram (%zu bytes: not a multiple of %zu)\n", len, pipeline::kSignalBytes);
        len -= len % pipeline::kSignalBytes;
      }
      for (std::size_t off = 0; off < len; off += pipeline::kSignalBytes) {
        pipeline::Signal s;
        const auto st = pipeline::decode_signal(buf + off, pipeline::kSignalBytes, s);
        if (st != pipeline::SignalStatus::Ok) {
          ++bad;
          if (!summary) std::printf("bad message (%s)\n", pipeline::to_string(st));
        } else {
          if (last_seq && s.signal_seq < last_seq) ++out_of_order;
          last_seq = s.signal_seq;
          min_seq = n == 0 ? s.signal_seq : std::min(min_seq, s.signal_seq);
          max_seq = std::max(max_seq, s.signal_seq);
          ++n;
          recovered += (s.flags & pipeline::kSignalRecovered) != 0;
          degraded += (s.flags & pipeline::kSignalDegraded) != 0;
          if (!summary) print_signal(s);
        }
      }
      last = now;
      if (count > 0 && n >= static_cast<std::uint64_t>(count)) break;
      continue;
    }
    if (seconds > 0 && static_cast<double>(now - start) >= seconds * 1e9) break;
    if (idle_exit > 0 && last > 0 && static_cast<double>(now - last) >= idle_exit * 1e9) break;
    usleep(100);
  }
  const std::uint64_t span = n ? max_seq - min_seq + 1 : 0;
  std::printf("signals: %llu received, %llu malformed, %llu sequence gaps, %llu out of order",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(bad),
              static_cast<unsigned long long>(span > n ? span - n : 0), static_cast<unsigned long long>(out_of_order));
  if (ring)
    std::printf(", %llu overwritten before read, %llu behind at exit", static_cast<unsigned long long>(ring->missed()),
                static_cast<unsigned long long>(ring->lag()));
  else std::printf(", in %llu datagrams", static_cast<unsigned long long>(datagrams));
  std::printf("; flagged: %llu recovered, %llu degraded\n", static_cast<unsigned long long>(recovered),
              static_cast<unsigned long long>(degraded));
  return 0;
}

}  // namespace tickinfer::cli
