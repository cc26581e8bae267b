#pragma once
// exactly-bench --long-run: N wire cycles against one bench-server, sampling RSS and database size
// (the SQLite file and its WAL, or with --engine postgres the schema's tables).

#include "bench_types.hpp"

#include <nlohmann/json.hpp>

namespace exactly::bench {

// N wire cycles at `concurrency`, sampling every `every` seconds; flat means the last tenth's
// mean is within 10 % of the first tenth's. Tombstones are kept for an acceptance window of 2 s
// (swept every second) and the business write overwrites a bounded set of rows, so steady state
// comes within seconds.
// `rate` cycles per second at most (0: as fast as the clients go); a fixed rate keeps the window
// of tombstones the same size all along, so the files can only grow by what is left behind.
// `owners`: the clients make their cycles as that many principals, in turn. `postgres_log`: the
// cluster's log, where autovacuum's passes are read (log_autovacuum_min_duration=0); "" on SQLite.
nlohmann::json long_run(long n, int concurrency, double every, double rate, int owners,
                        const settings& s, const std::string& postgres_log);

}  // namespace exactly::bench
