#pragma once
// Autovacuum's passes over one table as PostgreSQL logs them (log_autovacuum_min_duration=0):
// each of its indexes' pages after the pass.

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace exactly::bench {

// One index after one pass, as the log's "index ...: pages: ..." line gives it.
struct index_after_pass {
  std::int64_t pages = 0;              // in total
  std::int64_t newly_deleted = 0;      // deleted by this pass
  std::int64_t currently_deleted = 0;  // deleted, by this pass or an earlier one
  std::int64_t reusable = 0;           // of those, in the free space map at the pass's end
};

struct vacuum_pass {
  std::string time;                                 // the log line's date, time and zone
  std::map<std::string, index_after_pass> indexes;  // by index name
};

// The automatic vacuums of `table` in `schema`, in the order `log` holds them; lines of other
// tables, of other kinds, or that do not parse are skipped.
std::vector<vacuum_pass> read_vacuum_passes(std::istream& log, const std::string& schema,
                                            const std::string& table);

}  // namespace exactly::bench
