#include <exactly/common/clock.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

namespace exactly {
namespace {

TEST(request_id, mint_parse_round_trip_keeps_the_timestamp) {
  const request_id id = request_id::mint(0x0190c6c17f2a);
  const std::string text = id.to_string();
  ASSERT_EQ(text.size(), 36u);
  EXPECT_EQ(text.substr(0, 13), "0190c6c1-7f2a");
  EXPECT_EQ(text[14], '7');                                          // version
  EXPECT_NE(std::string("89ab").find(text[19]), std::string::npos);  // variant 10xx
  const auto parsed = request_id::parse(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, id);
  EXPECT_EQ(parsed->timestamp_ms(), 0x0190c6c17f2a);
}

TEST(request_id, parses_a_known_canonical_id) {
  const auto id = request_id::parse("0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8c");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->timestamp_ms(), 1721321488170);  // 0x0190c6c17f2a, 2024-07-18
  EXPECT_EQ(id->to_string(), "0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8c");
}

TEST(request_id, refuses_everything_not_canonical_v7) {
  for (const char* bad : {
           "",
           "0190C6C1-7F2A-7C3E-9B1A-2F4D5E6A7B8C",   // uppercase
           "0190c6c1-7f2a-4c3e-9b1a-2f4d5e6a7b8c",   // version 4
           "0190c6c1-7f2a-7c3e-cb1a-2f4d5e6a7b8c",   // variant 110x
           "0190c6c1-7f2a-7c3e-7b1a-2f4d5e6a7b8c",   // variant 0xxx
           "0190c6c17f2a7c3e9b1a2f4d5e6a7b8c",       // no dashes
           "0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8",    // short
           "0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8c0",  // long
           "0190c6c-17f2a-7c3e-9b1a-2f4d5e6a7b8c",   // dash misplaced
           "0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8g",   // not hex
           "{0190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8}",
       }) {
    EXPECT_FALSE(request_id::parse(bad).has_value()) << bad;
  }
}

TEST(request_id, mints_are_distinct_and_sort_by_time) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i)
    seen.insert(request_id::mint(1000 + i / 10).to_string());
  EXPECT_EQ(seen.size(), 10000u);
  std::vector<std::string> by_time;
  for (std::int64_t ms : {1000, 2000, 3000, 4000})
    by_time.push_back(request_id::mint(ms).to_string());
  EXPECT_TRUE(std::is_sorted(by_time.begin(), by_time.end()));
}

// Ids minted for invocations only rise in one process, even when the clock is set back. The
// times used are today's: the minter is process-wide, and other tests mint with the real clock.
TEST(request_id, monotonic_mints_rise_across_a_clock_set_back) {
  const std::int64_t now = system_now_ms();
  const request_id first = request_id::mint_monotonic(now);
  const request_id back = request_id::mint_monotonic(now - 5000);
  EXPECT_GE(first.timestamp_ms(), now);
  EXPECT_GE(back.timestamp_ms(), first.timestamp_ms());
  EXPECT_LT(first.to_string(), back.to_string());
  ASSERT_TRUE(request_id::parse(back.to_string()).has_value());  // still a canonical UUIDv7

  // Many in one millisecond: strictly rising, all distinct, borrowing the next milliseconds.
  std::vector<std::string> ids;
  for (int i = 0; i < 10000; ++i)
    ids.push_back(request_id::mint_monotonic(now).to_string());
  EXPECT_TRUE(std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end());
  EXPECT_LE(request_id::parse(ids.back())->timestamp_ms(), now + 10);
}

TEST(request_id, system_mint_is_close_to_now) {
  const auto id = request_id::mint();
  EXPECT_GT(id.timestamp_ms(), 1'700'000'000'000);  // after 2023
}

}  // namespace
}  // namespace exactly
