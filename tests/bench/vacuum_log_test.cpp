// read_vacuum_passes: the passes of one table picked out of a PostgreSQL log as it is written.
#include "vacuum_log.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace exactly::bench {
namespace {

// Lines as PostgreSQL 15 writes them, other tables, schemas and kinds of line among them.
constexpr const char* excerpt =
    "2026-11-28 20:13:35.720 UTC [6012] LOG:  automatic analyze of table "
    "\"postgres.t4.exactly_row_counts\"\n"
    "\tsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.00 s\n"
    "2026-11-28 20:13:35.725 UTC [6012] LOG:  automatic vacuum of table "
    "\"postgres.t4.exactly_interactions\": index scans: 1\n"
    "\tpages: 0 removed, 98 remain, 98 scanned (100.00% of total)\n"
    "\tindex \"exactly_interactions_pkey\": pages: 106 in total, 47 newly deleted, 93 currently "
    "deleted, 46 reusable\n"
    "\tindex \"exactly_interactions_by_state\": pages: 91 in total, 56 newly deleted, 82 "
    "currently deleted, 26 reusable\n"
    "\tindex \"exactly_interactions_garbled\": pages: many\n"
    "2026-11-28 20:13:36.001 UTC [6013] LOG:  automatic vacuum of table "
    "\"postgres.t5.exactly_interactions\": index scans: 1\n"
    "\tindex \"exactly_interactions_pkey\": pages: 7 in total, 0 newly deleted, 0 currently "
    "deleted, 0 reusable\n"
    "2026-11-28 20:13:40.000 UTC [6020] LOG:  automatic vacuum of table "
    "\"postgres.t4.exactly_clock\": index scans: 0\n"
    "\tindex \"exactly_clock_pkey\": pages: 2 in total, 0 newly deleted, 0 currently deleted, 0 "
    "reusable\n"
    "2026-11-28 20:13:45.711 CET [6014] LOG:  automatic aggressive vacuum to prevent wraparound "
    "of table \"postgres.t4.exactly_interactions\": index scans: 1\n"
    "\tindex \"exactly_interactions_pkey\": pages: 111 in total, 47 newly deleted, 94 currently "
    "deleted, 91 reusable\n";

TEST(VacuumLog, PicksThePassesOfOneTableInOneSchema) {
  std::istringstream log(excerpt);
  const auto passes = read_vacuum_passes(log, "t4", "exactly_interactions");
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0].time, "2026-11-28 20:13:35.725 UTC");
  ASSERT_EQ(passes[0].indexes.size(), 2u);  // the garbled line is skipped
  const index_after_pass& pkey = passes[0].indexes.at("exactly_interactions_pkey");
  EXPECT_EQ(pkey.pages, 106);
  EXPECT_EQ(pkey.newly_deleted, 47);
  EXPECT_EQ(pkey.currently_deleted, 93);
  EXPECT_EQ(pkey.reusable, 46);
  EXPECT_EQ(passes[0].indexes.at("exactly_interactions_by_state").reusable, 26);
  EXPECT_EQ(passes[1].time, "2026-11-28 20:13:45.711 CET");
  ASSERT_EQ(passes[1].indexes.size(), 1u);  // exactly_clock's index is not this table's
  EXPECT_EQ(passes[1].indexes.at("exactly_interactions_pkey").pages, 111);
}

TEST(VacuumLog, NoPassesInALogWithoutThem) {
  std::istringstream empty("");
  EXPECT_TRUE(read_vacuum_passes(empty, "t4", "exactly_interactions").empty());
  std::istringstream other(excerpt);
  EXPECT_TRUE(read_vacuum_passes(other, "t6", "exactly_interactions").empty());
}

}  // namespace
}  // namespace exactly::bench
