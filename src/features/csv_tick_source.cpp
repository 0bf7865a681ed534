// CSV tick reader: strict columns, exact decimal-to-fixed-point prices, flaws (NaN, negative
// sizes) passed on for the validation policy, malformed lines refused with their line number.
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "features/tick_source.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

constexpr const char* kHeader = "ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side";
constexpr int kColumns = 10;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, const char* b) {
  const std::size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

bool is_non_finite_word(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return iequals(s, "nan") || iequals(s, "inf") || iequals(s, "infinity");
}

template <class T>
T parse_int(std::string_view s, const std::string& where, const char* what) {
  T v{};
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (!s.empty() && s[0] == '+') ++b;
  const auto r = std::from_chars(b, e, v);
  if (s.empty() || r.ec != std::errc() || r.ptr != e)
    throw Error(where + ": bad " + what + " '" + std::string(s) + "'");
  return v;
}

}  // namespace

bool parse_fixed_price(std::string_view s, std::int64_t& out, bool& non_finite, const std::string& where) {
  non_finite = false;
  s = trim(s);
  if (is_non_finite_word(s)) {
    non_finite = true;
    out = 0;
    return false;
  }
  const std::string text(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  const std::size_t dot = s.find('.');
  const std::string_view ip = s.substr(0, dot);
  const std::string_view fp = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if ((ip.empty() && fp.empty()) || fp.size() > 8)
    throw Error(where + ": bad price '" + text + "'" + (fp.size() > 8 ? " (more than 8 decimals)" : ""));
  for (char c : ip)
    if (c < '0' || c > '9') throw Error(where + ": bad price '" + text + "'");
  for (char c : fp)
    if (c < '0' || c > '9') throw Error(where + ": bad price '" + text + "'");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t v = 0;
  for (char c : ip) {
    if (v > (kMax - (c - '0')) / 10) throw Error(where + ": price '" + text + "' overflows fixed point");
    v = v * 10 + (c - '0');
  }
  std::int64_t frac = 0;
  for (std::size_t i = 0; i < 8; ++i) frac = frac * 10 + (i < fp.size() ? fp[i] - '0' : 0);
  if (v > (kMax - frac) / md::kPriceScale) throw Error(where + ": price '" + text + "' overflows fixed point");
  v = v * md::kPriceScale + frac;
  out = neg ? -v : v;
  return true;
}

CsvTickSource::CsvTickSource(std::string text, std::string name) : text_(std::move(text)), name_(std::move(name)) {}

std::unique_ptr<CsvTickSource> CsvTickSource::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("ticks '" + path + "': cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error("ticks '" + path + "': read failed");
  return std::make_unique<CsvTickSource>(buf.str(), path);
}

bool CsvTickSource::next(SourceTick& out) {
  while (pos_ < text_.size()) {
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    const std::string_view line = trim(std::string_view(text_).substr(pos_, end - pos_));
    pos_ = end + 1;
    ++line_;
    const std::string where = "ticks '" + name_ + "': line " + std::to_string(line_);
    if (line.empty()) continue;
    if (line.find('\0') != std::string_view::npos) throw Error(where + ": NUL byte");
    if (!header_done_) {
      std::string h;
      for (char c : line)
        if (c != ' ' && c != '\t') h += c;
      if (h != kHeader) throw Error(where + ": expected the header '" + std::string(kHeader) + "'");
      header_done_ = true;
      continue;
    }
    std::string_view f[kColumns];
    int n = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ',') {
        if (n == kColumns) throw Error(where + ": more than " + std::to_string(kColumns) + " fields");
        f[n++] = trim(line.substr(start, i - start));
        start = i + 1;
      }
    }
    if (n != kColumns)
      throw Error(where + ": expected " + std::to_string(kColumns) + " fields, got " + std::to_string(n));
    SourceTick t;
    t.line = line_;
    const auto ts = parse_int<std::int64_t>(f[0], where, "ts_ns");
    const auto inst = parse_int<std::uint32_t>(f[1], where, "instrument");
    auto note = [&t](InvalidReason r) {
      if (t.flaw == InvalidReason::None) t.flaw = r;
    };
    // A size: integer >= 0 fits uint32; negative or nan -> flaw, event size 0.
    auto size = [&](std::string_view s, const char* what) -> std::uint32_t {
      if (is_non_finite_word(s)) {
        note(InvalidReason::NonFinite);
        return 0;
      }
      const auto v = parse_int<std::int64_t>(s, where, what);
      if (v < 0) {
        note(InvalidReason::BadSize);
        return 0;
      }
      if (v > 0xFFFFFFFFll) {
        note(InvalidReason::OutOfRange);
        return 0;
      }
      return static_cast<std::uint32_t>(v);
    };
    auto price = [&](std::string_view s) -> std::int64_t {
      std::int64_t p = 0;
      bool nf = false;
      parse_fixed_price(s, p, nf, where);
      if (nf) note(InvalidReason::NonFinite);
      return p;
    };
    auto must_be_empty = [&](int from, int to, const char* kind) {
      for (int i = from; i < to; ++i)
        if (!f[i].empty()) throw Error(where + ": a " + kind + " row must leave column " + std::to_string(i + 1) + " empty");
    };
    if (f[2] == "Q") {
      must_be_empty(7, 10, "quote");
      md::Quote q;
      q.instrument = inst;
      q.exchange_ts_ns = ts;
      q.bid_price = price(f[3]);
      q.ask_price = price(f[4]);
      q.bid_size = size(f[5], "bid_size");
      q.ask_size = size(f[6], "ask_size");
      t.event = md::Event::of(q);
    } else if (f[2] == "T") {
      must_be_empty(3, 7, "trade");
      md::Trade tr;
      tr.instrument = inst;
      tr.exchange_ts_ns = ts;
      tr.price = price(f[7]);
      tr.size = size(f[8], "size");
      if (f[9].empty() || f[9] == "U") tr.aggressor = md::Side::Unknown;
      else if (f[9] == "B") tr.aggressor = md::Side::Buy;
      else if (f[9] == "S") tr.aggressor = md::Side::Sell;
      else throw Error(where + ": bad side '" + std::string(f[9]) + "' (expected B, S, U or empty)");
      t.event = md::Event::of(tr);
    } else {
      throw Error(where + ": bad type '" + std::string(f[2]) + "' (expected Q or T)");
    }
    out = t;
    return true;
  }
  if (!header_done_) throw Error("ticks '" + name_ + "': empty file (no header)");
  return false;
}

const char* invalid_reason_name(InvalidReason r) {
  switch (r) {
    case InvalidReason::None: return "none";
    case InvalidReason::NonFinite: return "non_finite";
    case InvalidReason::NonPositivePrice: return "non_positive_price";
    case InvalidReason::CrossedBook: return "crossed_book";
    case InvalidReason::EmptySide: return "empty_side";
    case InvalidReason::BadSize: return "bad_size";
    case InvalidReason::TimeBackwards: return "time_backwards";
    case InvalidReason::OutOfRange: return "out_of_range";
    case InvalidReason::BookUnsynced: return "book_unsynced";
  }
  return "?";
}

}  // namespace tickinfer::features
