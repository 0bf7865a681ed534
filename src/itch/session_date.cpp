#include "itch/session_date.hpp"

#include <cstdio>

namespace tickinfer::itch {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;
constexpr std::uint64_t kSwitchNs = 2ull * 3600 * 1'000'000'000;  // 02:00 local

bool is_leap(int y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int y, unsigned m) noexcept {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// The value of `n` decimal digits at s[0..n), or -1 if any is not a digit.
int digits(std::string_view s, std::size_t at, std::size_t n) noexcept {
  if (at + n > s.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

std::optional<Date> checked(int y, int m, int d) {
  if (y < 0 || m < 1 || d < 1) return std::nullopt;
  Date out{y, static_cast<unsigned>(m), static_cast<unsigned>(d)};
  if (!is_valid(out)) return std::nullopt;
  return out;
}

bool contains_itch(std::string_view s) noexcept {
  for (std::size_t i = 0; i + 4 <= s.size(); ++i) {
    auto lower = [&](std::size_t k) { return static_cast<char>(s[i + k] | 0x20); };
    if (lower(0) == 'i' && lower(1) == 't' && lower(2) == 'c' && lower(3) == 'h') return true;
  }
  return false;
}

// "DDDDDDDD.<...ITCH...>": YYYYMMDD if valid, else MMDDYYYY.
std::optional<Date> eight_digit_name(std::string_view name) {
  if (name.size() < 10 || name[8] != '.' || !contains_itch(name.substr(9))) return std::nullopt;
  if (digits(name, 0, 8) < 0) return std::nullopt;
  auto in_range = [](const std::optional<Date>& d) { return d && d->year >= 1970 && d->year <= 2199; };
  auto ymd = checked(digits(name, 0, 4), digits(name, 4, 2), digits(name, 6, 2));
  if (in_range(ymd)) return ymd;
  auto mdy = checked(digits(name, 4, 4), digits(name, 0, 2), digits(name, 2, 2));
  if (in_range(mdy)) return mdy;
  return std::nullopt;
}

// "SMMDDYY-v50.txt" or "SMMDDYY-v50.txt.gz".
std::optional<Date> old_nasdaq_name(std::string_view name) {
  constexpr std::string_view kTail = "-v50.txt";
  if (name.size() < 7 + kTail.size() || name[0] != 'S') return std::nullopt;
  const std::string_view rest = name.substr(7);
  if (rest != kTail && rest != "-v50.txt.gz") return std::nullopt;
  const int mm = digits(name, 1, 2), dd = digits(name, 3, 2), yy = digits(name, 5, 2);
  if (mm < 0 || dd < 0 || yy < 0) return std::nullopt;
  return checked(2000 + yy, mm, dd);
}

// First Sunday on or after day `from` of month `m` in year `y`.
unsigned sunday_on_or_after(int y, unsigned m, unsigned from) noexcept {
  const unsigned w = weekday(Date{y, m, from});
  return from + (7 - w) % 7;
}

}  // namespace

bool is_valid(const Date& d) noexcept {
  return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= days_in_month(d.year, d.month);
}

std::optional<Date> parse_iso_date(std::string_view t) {
  if (t.size() != 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  const int y = digits(t, 0, 4), m = digits(t, 5, 2), d = digits(t, 8, 2);
  return checked(y, m, d);
}

std::string to_iso(const Date& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", d.year, d.month, d.day);
  return buf;
}

std::optional<Date> date_from_file_name(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (auto d = eight_digit_name(name)) return d;
  return old_nasdaq_name(name);
}

std::int64_t days_since_epoch(const Date& d) noexcept {
  // Count in a calendar whose year starts on 1 March, so the leap day is the year's last day;
  // eras are the 400-year cycles of the Gregorian calendar (146097 days each).
  const std::int64_t y = static_cast<std::int64_t>(d.year) - (d.month <= 2 ? 1 : 0);
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t year_of_era = y - era * 400;                       // 0..399
  const std::int64_t month_from_march = (d.month + 9) % 12;             // Mar=0 .. Feb=11
  const std::int64_t day_of_year = (153 * month_from_march + 2) / 5 + d.day - 1;  // 0..365
  const std::int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;  // 719468: days from 0000-03-01 to 1970-01-01
}

unsigned weekday(const Date& d) noexcept {
  const std::int64_t days = days_since_epoch(d);  // 1970-01-01 was a Thursday (4)
  return static_cast<unsigned>(((days % 7) + 7 + 4) % 7);
}

std::int64_t eastern_utc_offset_s(const Date& d, std::uint64_t ns_since_midnight) noexcept {
  constexpr std::int64_t kEst = -5 * 3600, kEdt = -4 * 3600;
  const unsigned dst_start = sunday_on_or_after(d.year, 3, 8);  // second Sunday of March
  const unsigned dst_end = sunday_on_or_after(d.year, 11, 1);   // first Sunday of November
  const bool after_switch = ns_since_midnight >= kSwitchNs;
  if (d.month < 3 || d.month > 11) return kEst;
  if (d.month > 3 && d.month < 11) return kEdt;
  if (d.month == 3) {
    if (d.day != dst_start) return d.day < dst_start ? kEst : kEdt;
    return after_switch ? kEdt : kEst;
  }
  if (d.day != dst_end) return d.day < dst_end ? kEdt : kEst;  // November
  return after_switch ? kEst : kEdt;
}

std::int64_t epoch_ns(const Date& d, std::uint64_t ns_since_midnight) noexcept {
  const std::int64_t local_midnight_s = days_since_epoch(d) * kSecondsPerDay;
  const std::int64_t utc_midnight_s = local_midnight_s - eastern_utc_offset_s(d, ns_since_midnight);
  return utc_midnight_s * kNsPerSecond + static_cast<std::int64_t>(ns_since_midnight);
}

SessionClock::SessionClock(const Date& date) noexcept {
  midnight_utc_ns_[0] = epoch_ns(date, 0);
  midnight_utc_ns_[1] = epoch_ns(date, kTwoAmNs) - static_cast<std::int64_t>(kTwoAmNs);
}

}  // namespace tickinfer::itch
