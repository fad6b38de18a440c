#include <gtest/gtest.h>

#include <limits>

#include "core/table.hpp"
#include "core/units.hpp"

using namespace vramdoc;

TEST(Units, FormatBytesPicksBinaryUnit) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(3 * GiB / 2), "1.50 GiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::uint64_t>::max()), "16.00 EiB");
}

TEST(Units, FormatRateIsDecimal) {
  EXPECT_EQ(format_rate(4.8137e12, 2), "4.81 TB/s");
  EXPECT_EQ(format_rate(63.0e9), "63.0 GB/s");
}

TEST(Units, ParseSizeUnits) {
  EXPECT_EQ(*parse_size("24GiB"), 24 * GiB);
  EXPECT_EQ(*parse_size("24 g"), 24 * GiB);
  EXPECT_EQ(*parse_size("80GB"), 80'000'000'000ULL);
  EXPECT_EQ(*parse_size("1.5MiB"), 3 * MiB / 2);
  EXPECT_EQ(*parse_size("4096"), 4096U);
}

TEST(Units, ParseSizeRejectsGarbage) {
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("GiB").ok());
  EXPECT_FALSE(parse_size("12 parsecs").ok());
  EXPECT_FALSE(parse_size("1.2.3G").ok());
  EXPECT_FALSE(parse_size("-5G").ok());
  EXPECT_FALSE(parse_size("99999999999999999999TiB").ok());
}

TEST(Units, ParseDuration) {
  EXPECT_DOUBLE_EQ(*parse_duration("20ms"), 0.02);
  EXPECT_DOUBLE_EQ(*parse_duration("10m"), 600.0);
  EXPECT_FALSE(parse_duration("soon").ok());
}

TEST(Units, CheckedArithmeticNeverWraps) {
  const auto max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(checked_mul(max / 2, 3).has_value());
  EXPECT_FALSE(checked_add(max, 1).has_value());
  EXPECT_EQ(saturating_mul(1ULL << 40, 1ULL << 40), max);
  EXPECT_EQ(*checked_mul(1ULL << 20, 1ULL << 20), 1ULL << 40);
}

TEST(Table, AlignsColumns) {
  TextTable t({"term", "GiB"});
  t.add_row({"weights", "1.00"});
  t.add_row({"optimizer state", "12.50"});
  t.add_rule();
  t.add_row({"total", "13.50"});
  EXPECT_EQ(t.render(),
            "term               GiB\n"
            "----------------------\n"
            "weights           1.00\n"
            "optimizer state  12.50\n"
            "----------------------\n"
            "total            13.50\n");
}

TEST(Table, WideCharactersCountTwice) { EXPECT_EQ(display_width("显存"), 4U); }
TEST(Table, ColourCodesHaveNoWidth) { EXPECT_EQ(display_width("\x1b[7m> \x1b[32m#\x1b[0m显\x1b[27m"), 5U); }
