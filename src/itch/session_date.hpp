#pragma once
// The trading date of an ITCH day and the conversion of ITCH timestamps to Unix time.
//
// ITCH timestamps are nanoseconds since midnight, exchange-local (US Eastern) time, and carry no
// date: the date comes from outside, usually the day file's name. epoch_ns() combines the two.
//
// Time zone rule (civil-date arithmetic only: no tz database, no libc time-zone calls): the US
// rule in force since 2007. Eastern Daylight Time (UTC-4) runs from the second Sunday of March at
// 02:00 local to the first Sunday of November at 02:00 local; Eastern Standard Time (UTC-5)
// otherwise. The rule is applied to every year, including years before 2007 (ITCH 5.0 did not
// exist then). On the two switch days a timestamp below 02:00:00 uses the offset in force before
// the switch and one at or after 02:00:00 the offset after it; so the skipped spring hour
// (02:00-03:00) is read as EDT and the repeated autumn hour (01:00-02:00) as its first, EDT,
// occurrence. Nasdaq does not trade on Sundays, so no real session hits either case.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tickinfer::itch {

struct Date {
  int year = 1970;
  unsigned month = 1;  // 1..12
  unsigned day = 1;    // 1..days_in_month
  friend auto operator<=>(const Date&, const Date&) = default;
};

// True for a real proleptic Gregorian date (month 1..12, day within that month, leap years).
bool is_valid(const Date& d) noexcept;

// "YYYY-MM-DD", e.g. "2019-12-30"; nothing else (no surrounding spaces, no time part).
std::optional<Date> parse_iso_date(std::string_view text);

// "YYYY-MM-DD".
std::string to_iso(const Date& d);

// The trading date encoded in a Nasdaq day-file name; only the last path component is read.
// Recognised (the date must be a valid one, years 1970..2199 for the 8-digit forms):
//   MMDDYYYY.NASDAQ_ITCH50[.gz], MMDDYYYY.BX_ITCH_50, MMDDYYYY.PSX_ITCH_50 (Nasdaq's names),
//   SMMDDYY-v50.txt[.gz] (Nasdaq's older names; year 20YY),
//   YYYYMMDD.<anything containing "itch", any case> (e.g. 20191230.itch.gz).
// An 8-digit prefix followed by a part containing "ITCH" is read as YYYYMMDD when that is a valid
// date, else as MMDDYYYY: the two cannot both be valid, since a year 1970..2199 read as MMDD
// would have month 19..21.
std::optional<Date> date_from_file_name(std::string_view path);

// Days since 1970-01-01 (negative before it).
std::int64_t days_since_epoch(const Date& d) noexcept;

// 0 = Sunday .. 6 = Saturday.
unsigned weekday(const Date& d) noexcept;

// The UTC offset, in seconds (-4 h or -5 h), of the Eastern local time `ns_since_midnight` on
// date `d`, by the rule in the header comment.
std::int64_t eastern_utc_offset_s(const Date& d, std::uint64_t ns_since_midnight) noexcept;

// Unix time in nanoseconds of the ITCH timestamp `ns_since_midnight` (Eastern local time) on `d`.
std::int64_t epoch_ns(const Date& d, std::uint64_t ns_since_midnight) noexcept;

// epoch_ns for one trading date, precomputed: the two midnights (before and from 02:00 local,
// which differ on DST switch days) so a conversion is one addition on the hot path.
class SessionClock {
 public:
  SessionClock() = default;
  explicit SessionClock(const Date& date) noexcept;
  std::int64_t operator()(std::uint64_t ns_since_midnight) const noexcept {
    return midnight_utc_ns_[ns_since_midnight >= kTwoAmNs ? 1 : 0] + static_cast<std::int64_t>(ns_since_midnight);
  }

 private:
  static constexpr std::uint64_t kTwoAmNs = 2ULL * 3600 * 1'000'000'000;
  std::int64_t midnight_utc_ns_[2] = {0, 0};
};

}  // namespace tickinfer::itch
