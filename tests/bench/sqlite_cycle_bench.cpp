// sqlite-cycle-bench: the CPU that the connector's own SQLite writes take per wire cycle (the
// staged row, its execution, its tombstone), in one thread, in commit groups of the server's
// kinds (a POST's group apart from PUTs' and DELETEs'): the work that `wire` does and
// idempotency-key-four-exchanges, whose exchanges make the same lookups but write nothing, does
// not. No fsync is waited for or counted (the server syncs on a thread of its own), nor a
// checkpoint's copy. Three ways, each on a fresh database, in turn for --rounds:
//   shipped      the server's statements (sqlite_store) with the counters' triggers
//   no-triggers  the same statements with those triggers dropped: what a connector that kept its
//                counters at no cost would pay
//   savepoints   the groups and savepoints alone, no statement: subtracted from the two above
// Prints microseconds of thread CPU per cycle, each round and the median. Figures only; exits 1
// if a way's counters do not show it (the triggers counted, or were dropped).
#include "bench_routes.hpp"
#include "bench_types.hpp"
#include "server/src/sqlite_store.hpp"

#include <exactly/common/request_id.hpp>

#include <echo_server.hpp>

#include <CLI/CLI.hpp>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

using namespace exactly;

namespace {

constexpr std::string_view route = "/bench/write/{id}";

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

enum class way { shipped, no_triggers, savepoints };

// `cycles` wire cycles' writes, `group` requests a commit group: round g commits a group staging
// the cycles of g and making tombstones of those of g - 2, then a group executing those of
// g - 1, each request in a savepoint of its group's transaction. Returns microseconds of this
// thread's CPU per cycle; throws if the tombstones' counter does not match the way.
double run(way w, long cycles, int group) {
  test::temp_dir dir;
  server::sqlite_store store((dir.path() / "server.db").string(), sqlite::options{});
  sqlite::connection& db = store.connection();
  if (w == way::no_triggers && bench::drop_counter_triggers(db) == 0)
    throw std::runtime_error("no counter trigger to drop");
  std::vector<std::string> ids(static_cast<std::size_t>(cycles));
  for (auto& id : ids)
    id = request_id::mint().to_string();
  const std::string digest(32, 'd');
  const server::stored_response response{200, "application/json", R"({"ok":true})"};
  const long groups = (cycles + group - 1) / group;
  // Each request of step `step` for the cycles of group `of`, in a savepoint of its own.
  const auto each = [&](long of, auto&& step) {
    if (of < 0 || of >= groups)
      return;
    for (long i = of * group; i < std::min(cycles, (of + 1) * group); ++i) {
      sqlite::transaction request(db);
      if (w != way::savepoints)
        step(ids[static_cast<std::size_t>(i)]);
      request.commit();
    }
  };
  const double cpu0 = thread_cpu_seconds();
  for (long g = 0; g < groups + 2; ++g) {
    // The time of the group; also the rows' id_ms, which no statement here reads.
    const std::int64_t now = request_id::parse(ids[0])->timestamp_ms() + g;
    {
      sqlite::transaction tx(db, sqlite::transaction::mode::immediate, durability::unflushed);
      each(g, [&](const std::string& id) {
        store.insert_staged(route, id, "bench", now, now, "application/json", bench::body, digest);
      });
      each(g - 2, [&](const std::string& id) {
        store.put_tombstone(route, id, "bench", now, server::tombstone_reason::deleted, now,
                            server::id_state::executed);
      });
      tx.commit();
    }
    sqlite::transaction tx(db, sqlite::transaction::mode::immediate, durability::unflushed);
    each(g - 1, [&](const std::string& id) { store.mark_executed(route, id, response, now); });
    tx.commit();
  }
  const double us = (thread_cpu_seconds() - cpu0) * 1e6 / static_cast<double>(cycles);
  const std::int64_t counted =
      *db.query_int64("SELECT n FROM exactly_row_counts WHERE kind = 3");  // tombstones
  if (counted != (w == way::shipped ? cycles : 0))
    throw std::runtime_error("the tombstones' counter is " + std::to_string(counted));
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The CPU of the connector's SQLite writes per wire cycle"};
  long cycles = 40000;  // about what a 5 s `wire` round at 64 clients makes
  int group = 32;
  int rounds = 5;
  app.add_option("--cycles", cycles, "cycles a round")->check(CLI::PositiveNumber);
  app.add_option("--group", group, "requests of each step in a commit group")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "rounds of the three ways")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const char* names[] = {"shipped", "no-triggers", "savepoints"};
  std::vector<double> per[3];
  std::printf("%-8s %12s %12s %12s   (us of CPU per cycle)\n", "round", names[0], names[1],
              names[2]);
  try {
    for (int r = 1; r <= rounds; ++r) {
      for (int k = 0; k < 3; ++k)
        per[k].push_back(run(static_cast<way>(k), cycles, group));
      std::printf("%-8d %12.2f %12.2f %12.2f\n", r, per[0].back(), per[1].back(), per[2].back());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sqlite-cycle-bench: %s\n", e.what());
    return 1;
  }
  double median[3];
  for (int k = 0; k < 3; ++k) {
    std::sort(per[k].begin(), per[k].end());
    median[k] = bench::percentile(per[k], 0.5);
  }
  std::printf("%-8s %12.2f %12.2f %12.2f\n", "median", median[0], median[1], median[2]);
  std::printf("the writes: shipped %.2f us a cycle, without the triggers %.2f us\n",
              median[0] - median[2], median[1] - median[2]);
  return 0;
}
