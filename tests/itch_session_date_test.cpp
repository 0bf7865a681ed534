// Trading dates from Nasdaq's file names, and ITCH timestamps (US Eastern local time) to Unix
// time. Expected instants come from the IANA America/New_York zone, worked out independently.
#include <gtest/gtest.h>

#include "itch/session_date.hpp"

namespace tickinfer::itch {
namespace {

constexpr std::uint64_t kNsPerS = 1'000'000'000;

std::uint64_t hms(unsigned h, unsigned m, unsigned s) { return (h * 3600ull + m * 60ull + s) * kNsPerS; }

std::int64_t epoch_s(const char* iso, std::uint64_t ns) {
  const auto d = parse_iso_date(iso);
  EXPECT_TRUE(d.has_value()) << iso;
  return epoch_ns(*d, ns) / static_cast<std::int64_t>(kNsPerS);
}

TEST(ItchSessionDate, NasdaqFileNames) {
  EXPECT_EQ(date_from_file_name("12302019.NASDAQ_ITCH50"), (Date{2019, 12, 30}));
  EXPECT_EQ(date_from_file_name("data/01302019.NASDAQ_ITCH50.gz"), (Date{2019, 1, 30}));
  EXPECT_EQ(date_from_file_name("/x/y/07302019.BX_ITCH_50"), (Date{2019, 7, 30}));
  EXPECT_EQ(date_from_file_name("03272019.PSX_ITCH_50.gz"), (Date{2019, 3, 27}));
  EXPECT_EQ(date_from_file_name("S013020-v50.txt.gz"), (Date{2020, 1, 30}));
  EXPECT_EQ(date_from_file_name("S022920-v50.txt"), (Date{2020, 2, 29}));
  EXPECT_EQ(date_from_file_name("20191230.itch.gz"), (Date{2019, 12, 30}));
  EXPECT_EQ(date_from_file_name("20230428.TotalView-ITCH"), (Date{2023, 4, 28}));
  EXPECT_EQ(date_from_file_name("C:\\days\\12302019.NASDAQ_ITCH50"), (Date{2019, 12, 30}));
}

TEST(ItchSessionDate, RejectsNamesWithoutAValidDate) {
  EXPECT_FALSE(date_from_file_name("13302019.NASDAQ_ITCH50"));   // month 13
  EXPECT_FALSE(date_from_file_name("02302019.NASDAQ_ITCH50"));   // 30 February
  EXPECT_FALSE(date_from_file_name("02292019.NASDAQ_ITCH50"));   // not a leap year
  EXPECT_FALSE(date_from_file_name("12002019.NASDAQ_ITCH50"));   // day 0
  EXPECT_FALSE(date_from_file_name("S023020-v50.txt.gz"));       // 30 February
  EXPECT_FALSE(date_from_file_name("S13012-v50.txt"));           // too few digits
  EXPECT_FALSE(date_from_file_name("S013020-v41.txt"));          // not the 5.0 name
  EXPECT_FALSE(date_from_file_name("12302019.csv"));             // no ITCH in the name
  EXPECT_FALSE(date_from_file_name("1230201.NASDAQ_ITCH50"));
  EXPECT_FALSE(date_from_file_name("12302019.NASDAQ_ITCH50/capture.bin"));  // the date is in a folder
  EXPECT_FALSE(date_from_file_name(""));
  EXPECT_EQ(date_from_file_name("02292020.NASDAQ_ITCH50"), (Date{2020, 2, 29}));
}

TEST(ItchSessionDate, IsoDates) {
  EXPECT_EQ(parse_iso_date("2019-12-30"), (Date{2019, 12, 30}));
  EXPECT_EQ(parse_iso_date("2000-02-29"), (Date{2000, 2, 29}));  // divisible by 400: leap
  EXPECT_FALSE(parse_iso_date("1900-02-29"));                    // divisible by 100: not leap
  EXPECT_FALSE(parse_iso_date("2019-12-32"));
  EXPECT_FALSE(parse_iso_date("2019-00-10"));
  EXPECT_FALSE(parse_iso_date("2019-4-10"));
  EXPECT_FALSE(parse_iso_date("2019-04-10 "));
  EXPECT_FALSE(parse_iso_date("2019/04/10"));
  EXPECT_EQ(to_iso(Date{2019, 3, 7}), "2019-03-07");
}

TEST(ItchSessionDate, DaysAndWeekdays) {
  EXPECT_EQ(days_since_epoch(Date{1970, 1, 1}), 0);
  EXPECT_EQ(days_since_epoch(Date{1969, 12, 31}), -1);
  EXPECT_EQ(days_since_epoch(Date{2000, 3, 1}), 11017);
  EXPECT_EQ(days_since_epoch(Date{2019, 12, 30}), 18260);  // 1577664000 / 86400
  EXPECT_EQ(weekday(Date{1970, 1, 1}), 4u);                // Thursday
  EXPECT_EQ(weekday(Date{2019, 12, 30}), 1u);              // Monday
  EXPECT_EQ(weekday(Date{2019, 3, 10}), 0u);               // Sunday
}

TEST(ItchSessionDate, WinterAndSummerOpens) {
  EXPECT_EQ(epoch_s("2019-12-30", hms(9, 30, 0)), 1577716200);  // EST, UTC-5
  EXPECT_EQ(epoch_s("2019-07-30", hms(9, 30, 0)), 1564493400);  // EDT, UTC-4
  EXPECT_EQ(epoch_s("2020-02-29", hms(12, 0, 0)), 1582995600);
  EXPECT_EQ(epoch_s("2019-12-30", hms(23, 59, 59)), 1577768399);
  // The first message of the 2019-01-30 file, 03:03:59.687760787 ET.
  const auto d = parse_iso_date("2019-01-30");
  EXPECT_EQ(epoch_ns(*d, 11'039'687'760'787ull), 1548835439'687'760'787ll);
}

TEST(ItchSessionDate, SpringForwardSecondSundayOfMarch) {
  EXPECT_EQ(epoch_s("2019-03-08", hms(9, 30, 0)), 1552055400);  // the Friday before: EST
  EXPECT_EQ(epoch_s("2019-03-10", hms(1, 59, 59)), 1552201199);  // still EST
  EXPECT_EQ(epoch_s("2019-03-10", hms(3, 0, 0)), 1552201200);    // EDT from 02:00 (clocks read 03:00)
  EXPECT_EQ(epoch_s("2019-03-11", hms(9, 30, 0)), 1552311000);
  EXPECT_EQ(epoch_s("2007-03-10", hms(12, 0, 0)), 1173546000);  // first year of the rule
  EXPECT_EQ(epoch_s("2007-03-11", hms(3, 0, 0)), 1173596400);
  // The skipped hour is read as EDT (documented): 02:30 -> 06:30 UTC.
  EXPECT_EQ(epoch_s("2019-03-10", hms(2, 30, 0)), 1552201200 - 1800);
}

TEST(ItchSessionDate, FallBackFirstSundayOfNovember) {
  EXPECT_EQ(epoch_s("2019-11-01", hms(9, 30, 0)), 1572615000);  // EDT
  EXPECT_EQ(epoch_s("2019-11-03", hms(1, 30, 0)), 1572759000);  // the repeated hour: its EDT reading
  EXPECT_EQ(epoch_s("2019-11-03", hms(2, 0, 0)), 1572764400);   // EST from 02:00
  EXPECT_EQ(epoch_s("2019-11-04", hms(9, 30, 0)), 1572877800);  // EST
  EXPECT_EQ(epoch_s("2023-11-05", hms(1, 0, 0)), 1699160400);
  EXPECT_EQ(epoch_s("2023-11-05", hms(2, 30, 0)), 1699169400);
}

TEST(ItchSessionDate, OffsetsAroundTheSwitches) {
  const std::int64_t est = -5 * 3600, edt = -4 * 3600;
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 3, 9}, hms(23, 0, 0)), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 3, 10}, hms(2, 0, 0) - 1), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 3, 10}, hms(2, 0, 0)), edt);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 11, 3}, hms(2, 0, 0) - 1), edt);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 11, 3}, hms(2, 0, 0)), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 11, 2}, 0), edt);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 4, 1}, 0), edt);
  EXPECT_EQ(eastern_utc_offset_s(Date{2019, 12, 1}, 0), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2026, 3, 8}, hms(12, 0, 0)), edt);  // 2026: 8 March
  EXPECT_EQ(eastern_utc_offset_s(Date{2026, 3, 7}, hms(12, 0, 0)), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2026, 11, 1}, hms(12, 0, 0)), est);
  EXPECT_EQ(eastern_utc_offset_s(Date{2026, 10, 31}, hms(12, 0, 0)), edt);
}

}  // namespace
}  // namespace tickinfer::itch
