#pragma once
// Test helper: the server's row counters by state, summed over their shards, against its rows.

#include <exactly/common/database.hpp>

#include <gtest/gtest.h>

namespace exactly::test {

inline void expect_counters_match_rows(const database& db) {
  for (int state = 1; state <= 3; ++state) {
    EXPECT_EQ(
        db.query_int64("SELECT coalesce(sum(n), 0) FROM exactly_row_counts WHERE kind = ?", state),
        db.query_int64("SELECT count(*) FROM exactly_interactions WHERE state = ?", state))
        << "state " << state;
  }
}

}  // namespace exactly::test
