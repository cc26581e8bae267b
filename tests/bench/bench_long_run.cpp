// exactly-bench --long-run (bench_long_run.hpp): N wire cycles against one bench-server, sampling
// memory and disk as they go.
#include "bench_long_run.hpp"

#include "bench_http_load.hpp"
#include "bench_server_process.hpp"
#include "interrupt.hpp"
#include "process_stats.hpp"
#include "vacuum_log.hpp"

#include <echo_server.hpp>

#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace exactly::bench {

using nlohmann::json;

namespace {

std::int64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

// The server's storage as a sample sees it: its bytes on disk and its rows.
struct storage_sample {
  std::int64_t file_bytes = 0;  // SQLite: the database file; PostgreSQL: the schema's tables
  std::int64_t wal_bytes = 0;   // SQLite: the WAL file; PostgreSQL: 0 (one WAL per cluster)
  std::int64_t rows = 0;        // rows of exactly_interactions
  // PostgreSQL: the private memory (RssAnon) of the server's backends, every client backend of
  // the database but the sampler's; 0 on SQLite.
  std::int64_t backends_kib = 0;
  // PostgreSQL: the main fork (pg_relation_size) of exactly_interactions and of each of its
  // indexes, in the order of storage_sampler::relations(), -1 for one this sample did not find;
  // empty on SQLite.
  std::vector<std::int64_t> relation_bytes{};
  // PostgreSQL: autovacuum's passes over exactly_interactions so far (pg_stat_user_tables), -1
  // unread; 0 on SQLite.
  std::int64_t vacuum_passes = 0;
  // PostgreSQL, for each of relation_bytes: an index's pages, those its free space map offers for
  // reuse (pg_freespacemap), and its deleted pages, reusable or not yet (pgstattuple's
  // pgstatindex), read in one statement; -1 for the table and for one not read.
  std::vector<std::int64_t> index_pages{}, free_pages{}, deleted_pages{};
};

// Reads the server's storage: the SQLite file in `dir` through a reader of its own (WAL: it
// never blocks a write), or the PostgreSQL schema of `conninfo` ("" for SQLite). On PostgreSQL
// the bytes are every table's of the schema with its indexes and TOAST
// (pg_total_relation_size), what dead rows that autovacuum has not reclaimed yet take included;
// exactly_interactions and each of its indexes are read apart as well, to tell which one grows.
class storage_sampler {
  // The FROM and WHERE of a query over exactly_interactions and its indexes (pg_class c).
  static constexpr const char* interactions_relations =
      " FROM pg_class c WHERE c.oid = 'exactly_interactions'::regclass OR c.oid IN"
      " (SELECT indexrelid FROM pg_index WHERE indrelid = 'exactly_interactions'::regclass)"
      " ORDER BY c.relname";

 public:
  storage_sampler(const fs::path& dir, const std::string& conninfo) : db_(dir / "server.db") {
    if (conninfo.empty()) {
      sqlite_.emplace(db_.string(),
                      sqlite::options{.busy_timeout = std::chrono::milliseconds(1000)});
      return;
    }
    pg_.emplace(pg::options{.conninfo = conninfo});
    // Contrib modules of the postgresql package, in the run's schema (their functions call one
    // another unqualified; the cluster is the run's own, so they are nowhere else).
    pg_->execute("CREATE EXTENSION IF NOT EXISTS pg_freespacemap");
    pg_->execute("CREATE EXTENSION IF NOT EXISTS pgstattuple");
    schema_ = pg_->query("SELECT current_schema()").text(0, 0);
    const pg::result names = pg_->query(std::string("SELECT c.relname") + interactions_relations);
    for (int i = 0; i < names.rows(); ++i)
      relations_.push_back(names.text(i, 0));
  }
  // exactly_interactions and its indexes, by name (the server has made them before it listens);
  // empty on SQLite.
  const std::vector<std::string>& relations() const { return relations_; }
  const std::string& schema() const { return schema_; }  // PostgreSQL: the server's schema
  storage_sample operator()() {
    if (sqlite_) {
      return {
          .file_bytes = file_bytes(db_),
          .wal_bytes = file_bytes(db_.string() + "-wal"),
          .rows = sqlite_->query_int64("SELECT count(*) FROM exactly_interactions").value_or(-1)};
    }
    const std::int64_t bytes =
        pg_->query_int64(
               "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c"
               " JOIN pg_namespace n ON n.oid = c.relnamespace"
               " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')")
            .value_or(-1);
    const pg::result backends = pg_->query(
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'"
        " AND datname = current_database() AND pid <> pg_backend_pid()");
    std::int64_t backends_kib = 0;
    for (int i = 0; i < backends.rows(); ++i)
      backends_kib += bench::anon_kib(static_cast<pid_t>(backends.int64(i, 0)));
    const pg::result each = pg_->query(
        std::string("SELECT c.relname, pg_relation_size(c.oid),"
                    " CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid)"
                    " / current_setting('block_size')::bigint ELSE -1 END,"
                    " CASE WHEN c.relkind = 'i' THEN (SELECT count(*) FROM pg_freespace(c.oid)"
                    " f WHERE f.avail > 0) ELSE -1 END,"
                    " CASE WHEN c.relkind = 'i' THEN (pgstatindex(c.oid::regclass))"
                    ".deleted_pages ELSE -1 END") +
        interactions_relations);
    std::vector<std::int64_t> relation_bytes(relations_.size(), -1),
        index_pages(relations_.size(), -1), free_pages(relations_.size(), -1),
        deleted_pages(relations_.size(), -1);
    for (int i = 0; i < each.rows(); ++i) {
      const auto at = std::find(relations_.begin(), relations_.end(), each.text(i, 0));
      if (at == relations_.end())
        continue;
      const auto k = static_cast<std::size_t>(at - relations_.begin());
      relation_bytes[k] = each.int64(i, 1);
      index_pages[k] = each.int64(i, 2);
      free_pages[k] = each.int64(i, 3);
      deleted_pages[k] = each.int64(i, 4);
    }
    return {.file_bytes = bytes,
            .rows = pg_->query_int64("SELECT count(*) FROM exactly_interactions").value_or(-1),
            .backends_kib = backends_kib,
            .relation_bytes = std::move(relation_bytes),
            .vacuum_passes = pg_->query_int64("SELECT autovacuum_count FROM pg_stat_user_tables"
                                              " WHERE relid = 'exactly_interactions'::regclass")
                                 .value_or(-1),
            .index_pages = std::move(index_pages),
            .free_pages = std::move(free_pages),
            .deleted_pages = std::move(deleted_pages)};
  }

 private:
  fs::path db_;
  std::optional<sqlite::connection> sqlite_;
  std::optional<pg::connection> pg_;
  std::vector<std::string> relations_;
  std::string schema_;
};

// The autovacuum passes over exactly_interactions that `samples` saw (a pass is dated by the
// first sample that counted it; passes between the same two samples count as one), the gaps
// between them, and when each of `relations` grew from the sample `tenth` on, each growth with
// the time since the last pass dated before its sample and whether its sample dated one too:
// whether an index's steps come after late passes.
json vacuum_report(const json& samples, const std::vector<std::string>& relations,
                   std::size_t tenth) {
  std::vector<double> passes;
  std::int64_t seen = -1;
  for (const json& sample : samples) {
    const std::int64_t n = sample["postgres_vacuum_passes"].get<std::int64_t>();
    if (n < 0)
      continue;
    if (seen >= 0 && n > seen)
      passes.push_back(sample["seconds"].get<double>());
    seen = std::max(seen, n);
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < passes.size(); ++i)
    gaps.push_back(passes[i] - passes[i - 1]);
  json out = {{"pass_seconds", passes}, {"gap_seconds", gaps}};
  std::vector<double> sorted = gaps;
  std::sort(sorted.begin(), sorted.end());
  const double median = percentile(sorted, 0.5);
  if (sorted.empty()) {
    std::printf("autovacuum of exactly_interactions: %zu passes dated, no gap between two\n",
                passes.size());
  } else {
    std::printf(
        "autovacuum of exactly_interactions: %zu passes, gaps median %.0f s, longest %.0f s",
        passes.size(), median, sorted.back());
    const char* lead = "; gaps over 1.5 times the median end at";
    for (std::size_t i = 0; i < gaps.size(); ++i) {
      if (gaps[i] > 1.5 * median) {
        std::printf("%s %.0f s (%.0f s)", lead, passes[i + 1], gaps[i]);
        lead = ",";
      }
    }
    std::printf("\n");
  }
  for (const std::string& relation : relations) {
    json grew = json::array();
    std::int64_t high = -1;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const std::int64_t bytes =
          samples[i]["postgres_relation_bytes"][relation].get<std::int64_t>();
      const double at = samples[i]["seconds"].get<double>();
      if (i >= tenth && high >= 0 && bytes > high) {
        const auto dated = std::lower_bound(passes.begin(), passes.end(), at);
        json g = {{"seconds", at},
                  {"bytes", bytes},
                  {"with_pass", dated != passes.end() && *dated == at}};
        if (dated != passes.begin())
          g["since_pass_seconds"] = at - *(dated - 1);
        grew.push_back(std::move(g));
      }
      high = std::max(high, bytes);
    }
    std::printf("relation %s grew after the first tenth %zu times", relation.c_str(), grew.size());
    const char* lead = ":";
    for (const json& g : grew) {
      std::printf("%s at %.0f s to %lld B (", lead, g["seconds"].get<double>(),
                  static_cast<long long>(g["bytes"].get<std::int64_t>()));
      if (g.contains("since_pass_seconds"))
        std::printf("%.0f s after a pass", g["since_pass_seconds"].get<double>());
      else
        std::printf("before the first pass");
      std::printf("%s)", g["with_pass"].get<bool>() ? ", and in the sample of the next" : "");
      lead = ",";
    }
    std::printf("\n");
    out["growth_after_first_tenth"][relation] = grew;
  }
  return out;
}

// One index's pages as a sample read them (its "postgres_index_pages"), when it read all three.
struct index_reading {
  std::int64_t pages, free, deleted;
  // Its deleted pages out of the map, at least 0: the two counts are read one after the other.
  std::int64_t waiting() const { return std::max<std::int64_t>(0, deleted - free); }
};
std::optional<index_reading> read_index(const json& sample, const std::string& index) {
  const auto all = sample.find("postgres_index_pages");
  if (all == sample.end() || !all->contains(index))
    return std::nullopt;
  const json& read = (*all)[index];
  const index_reading r{read["pages"].get<std::int64_t>(), read["free"].get<std::int64_t>(),
                        read["deleted"].get<std::int64_t>()};
  if (r.pages < 0 || r.free < 0 || r.deleted < 0)
    return std::nullopt;
  return r;
}

// Each index of `relations` whose pages `samples` read, by tenth of the samples (the samples
// spread evenly over ten, or one tenth a sample if fewer): its pages at the tenth's end, and the
// most in one sample of what it took (its pages less those its free space map offered), of its
// live pages (less the metapage and its deleted pages) and of its deleted pages not in the map;
// -1 for a tenth with no reading. And
// the pages the map offered in the reading before each growth after the first tenth: PostgreSQL
// extends an index only when its map offers no page, so those read 0 unless the map's pages went
// within the sampling period.
json index_pages_report(const json& samples, const std::vector<std::string>& relations,
                        std::size_t tenth) {
  json out = json::object();
  const std::size_t tenths = std::min<std::size_t>(10, samples.size());
  for (const std::string& relation : relations) {
    std::vector<std::int64_t> pages_at(tenths, -1), taken_max(tenths, -1), live_max(tenths, -1),
        waiting_max(tenths, -1), free_before;
    std::int64_t high = -1, free_last = -1;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto read = read_index(samples[i], relation);
      if (!read)
        continue;
      const auto [pages, free, deleted] = *read;
      const std::size_t k = i * tenths / samples.size();
      pages_at[k] = pages;
      taken_max[k] = std::max(taken_max[k], pages - free);
      live_max[k] = std::max(live_max[k], pages - 1 - deleted);  // 1: the metapage
      waiting_max[k] = std::max(waiting_max[k], read->waiting());
      if (i >= tenth && high >= 0 && pages > high)
        free_before.push_back(free_last);
      high = std::max(high, pages);
      free_last = free;
    }
    if (high < 0)
      continue;
    const auto print = [](const char* what, const std::vector<std::int64_t>& v) {
      std::printf("%s", what);
      for (const std::int64_t x : v)
        std::printf(" %lld", static_cast<long long>(x));
    };
    std::printf("index %s", relation.c_str());
    print(", pages at each tenth's end:", pages_at);
    print("; most taken in a sample of each tenth:", taken_max);
    print("; most live:", live_max);
    print("; most deleted and not yet in its map:", waiting_max);
    std::printf("; its map's free pages before each of its %zu growths after the first tenth:",
                free_before.size());
    print("", free_before);
    std::printf("\n");
    out[relation] = {{"pages_by_tenth", pages_at},
                     {"taken_max_by_tenth", taken_max},
                     {"live_max_by_tenth", live_max},
                     {"waiting_max_by_tenth", waiting_max},
                     {"free_before_growths", free_before}};
  }
  return out;
}

// One index over autovacuum's logged passes (vacuum_log_report).
struct index_passes {
  int passes = 0;
  int left_all_waiting = 0;      // every page it deleted waits for the next pass
  int left_some_waiting = 0;     // some of them do
  int left_earlier_waiting = 0;  // pages an earlier pass deleted wait still
  std::int64_t most_newly_deleted = 0;
  // The most deleted pages out of the map at once, over a pass: those the pass before left
  // waiting and those the pass deleted, before its end puts them in the map.
  std::int64_t most_waiting_in_pass = 0;
  // Readings between two passes, and those with more deleted pages out of the map than the last
  // pass left there (what the log does not count), by at most `most_over`.
  int readings = 0, readings_over = 0;
  std::int64_t most_over = 0;
};

// For each index in `passes` (autovacuum's over exactly_interactions, from the cluster's log): how
// many passes left every page they deleted, or some, waiting for the next pass, or left waiting
// pages an earlier pass deleted, and the most one pass deleted. With `index_pages`
// (index_pages_report), an estimate of the most the index can take: its most live pages, the
// metapage, and the most deleted pages out of the map at once over a pass. It holds while the
// pages out of the map are only the ones the log counts: PostgreSQL also takes a page out of the
// map when a split finds it locked (the sampler's pgstatindex locks each page in turn), and a
// transaction open from one pass to the next, anywhere in the cluster, keeps pages out of it.
// `samples` tell whether that held: each reading between two passes (autovacuum's count the same
// as at the reading before) is set against what the log says the last pass left out of the map.
json vacuum_log_report(const std::vector<vacuum_pass>& passes, const json& index_pages,
                       const json& samples) {
  std::map<std::string, index_passes> by_index;
  std::map<std::string, std::int64_t> waiting_before;
  // After each pass, each index's deleted pages out of the map (a pass that scanned no index
  // leaves them as they were).
  std::vector<std::map<std::string, std::int64_t>> waiting_after;
  for (const vacuum_pass& pass : passes) {
    for (const auto& [name, p] : pass.indexes) {
      index_passes& i = by_index[name];
      const std::int64_t waiting = std::max<std::int64_t>(0, p.currently_deleted - p.reusable);
      ++i.passes;
      if (p.newly_deleted > 0 && waiting >= p.newly_deleted)
        ++i.left_all_waiting;
      else if (p.newly_deleted > 0 && waiting > 0)
        ++i.left_some_waiting;
      if (waiting > p.newly_deleted)
        ++i.left_earlier_waiting;
      i.most_newly_deleted = std::max(i.most_newly_deleted, p.newly_deleted);
      i.most_waiting_in_pass =
          std::max(i.most_waiting_in_pass, waiting_before[name] + p.newly_deleted);
      waiting_before[name] = waiting;
    }
    waiting_after.push_back(waiting_before);
  }
  std::int64_t count_before = -1;
  for (const json& sample : samples) {
    const std::int64_t count = sample["postgres_vacuum_passes"].get<std::int64_t>();
    const bool between = count >= 1 && count == count_before &&
                         count <= static_cast<std::int64_t>(waiting_after.size());
    count_before = count;
    if (!between)
      continue;
    for (const auto& [name, logged] : waiting_after[static_cast<std::size_t>(count - 1)]) {
      const auto read = read_index(sample, name);
      if (!read)
        continue;
      index_passes& i = by_index[name];
      ++i.readings;
      if (const std::int64_t over = read->waiting() - logged; over > 0) {
        ++i.readings_over;
        i.most_over = std::max(i.most_over, over);
      }
    }
  }
  json out = json::object();
  std::printf("autovacuum's passes over exactly_interactions in the cluster's log: %zu\n",
              passes.size());
  for (const auto& [name, i] : by_index) {
    json o = {{"passes", i.passes},
              {"left_all_waiting", i.left_all_waiting},
              {"left_some_waiting", i.left_some_waiting},
              {"left_earlier_waiting", i.left_earlier_waiting},
              {"most_newly_deleted", i.most_newly_deleted},
              {"most_waiting_in_pass", i.most_waiting_in_pass},
              {"readings_between_passes", i.readings},
              {"readings_over_the_log", i.readings_over},
              {"most_over_the_log", i.most_over}};
    std::printf(
        "index %s: %d passes; %d left every page they deleted waiting for the next, %d "
        "some, %d pages of an earlier pass; at most %lld deleted by one pass, %lld out "
        "of the map over one",
        name.c_str(), i.passes, i.left_all_waiting, i.left_some_waiting, i.left_earlier_waiting,
        static_cast<long long>(i.most_newly_deleted),
        static_cast<long long>(i.most_waiting_in_pass));
    std::printf(
        "; %d of %d readings between passes had more out of the map than the last pass "
        "left (at most %lld more)",
        i.readings_over, i.readings, static_cast<long long>(i.most_over));
    if (index_pages.contains(name)) {
      std::int64_t live = -1, pages = -1;
      for (const json& l : index_pages[name]["live_max_by_tenth"])
        live = std::max(live, l.get<std::int64_t>());
      for (const json& p : index_pages[name]["pages_by_tenth"])
        pages = p.get<std::int64_t>() >= 0 ? p.get<std::int64_t>() : pages;
      const std::int64_t most = live + 1 + i.most_waiting_in_pass;
      o["most_live"] = live;
      o["most_pages_estimate"] = most;
      o["pages_at_end"] = pages;
      std::printf("; most live %lld: at most about %lld pages, %lld at the end",
                  static_cast<long long>(live), static_cast<long long>(most),
                  static_cast<long long>(pages));
    }
    std::printf("\n");
    out[name] = std::move(o);
  }
  return out;
}

}  // namespace

json long_run(long n, int concurrency, double every, double rate, int owners, const settings& s,
              const std::string& postgres_log) {
  test::temp_dir dir;
  server_process server(dir.path(), s,
                        {"--acceptance-window-seconds", "2", "--sweep-seconds", "1",
                         "--bounded-writes", "--principals", std::to_string(owners)});
  // Made before the load starts, so that a failure to read the storage stops the run cleanly.
  storage_sampler storage(dir.path(), s.postgres);
  http_op op{{server.port()}, 2};
  op.owners = owners;
  std::atomic<long> started{0}, finished{0}, errors{0};
  std::vector<std::thread> threads;
  const auto t0 = clock_type::now();
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&, i] {
      auto c = op.make_slot(i);
      for (long k; (k = started.fetch_add(1)) < n;) {
        if (rate > 0) {
          std::this_thread::sleep_until(
              t0 + std::chrono::duration_cast<clock_type::duration>(
                       std::chrono::duration<double>(static_cast<double>(k) / rate)));
        }
        if (!op(c))
          ++errors;
        ++finished;
      }
    });
  }
  // Kept as plain rows, a few dozen bytes each, and made JSON at the end: the load generator's
  // RSS, sampled beside them, would otherwise grow by nearly 1 KiB per sample (a JSON object).
  struct sample_row {
    double seconds;
    long cycles;
    std::int64_t server_rss_kib, client_rss_kib;
    storage_sample stored;
  };
  std::vector<sample_row> rows;
  rows.reserve(rate > 0 ? static_cast<std::size_t>(static_cast<double>(n) / rate / every) + 64
                        : 4096);
  std::printf("the server (pid %d) on %s\n", static_cast<int>(server.pid()),
              s.postgres.empty() ? "SQLite (server db B: the file; WAL B: its WAL)"
                                 : "PostgreSQL (server db B: its schema's tables)");
  std::printf("%8s %10s %12s %12s %14s %14s %12s %12s\n", "seconds", "cycles", "server KiB",
              "client KiB", "server db B", "server WAL B", "server rows", "backends KiB");
  for (bool last = false; !last;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(every));
    const bool stopping = interrupted();
    if (stopping)
      started = n;  // the clients stop after their cycle in flight; this sample is the last
    last = finished.load() >= n || stopping;
    storage_sample stored;
    try {
      stored = storage();
    } catch (...) {
      started = n;  // the clients stop after their cycle in flight
      for (auto& t : threads)
        t.join();
      throw;
    }
    const sample_row& r = rows.emplace_back(
        sample_row{std::chrono::duration<double>(clock_type::now() - t0).count(), finished.load(),
                   bench::rss_kib(server.pid()), bench::rss_kib(getpid()), stored});
    std::printf("%8.0f %10ld %12lld %12lld %14lld %14lld %12lld %12lld\n", r.seconds, r.cycles,
                static_cast<long long>(r.server_rss_kib), static_cast<long long>(r.client_rss_kib),
                static_cast<long long>(stored.file_bytes), static_cast<long long>(stored.wal_bytes),
                static_cast<long long>(stored.rows), static_cast<long long>(stored.backends_kib));
    std::fflush(stdout);
  }
  for (auto& t : threads)
    t.join();
  if (interrupted())
    throw std::runtime_error("stopped by a signal after " + std::to_string(finished.load()) +
                             " cycles; no report");
  json samples = json::array();
  for (const sample_row& r : rows) {
    samples.push_back({{"seconds", r.seconds},
                       {"cycles", r.cycles},
                       {"server_rss_kib", r.server_rss_kib},
                       {"client_rss_kib", r.client_rss_kib},
                       {"server_db_file_bytes", r.stored.file_bytes},
                       {"server_wal_bytes", r.stored.wal_bytes},
                       {"server_db_bytes", r.stored.file_bytes + r.stored.wal_bytes},
                       {"server_rows", r.stored.rows},
                       {"postgres_backends_kib", r.stored.backends_kib}});
    for (std::size_t i = 0; i < storage.relations().size(); ++i)
      samples.back()["postgres_relation_bytes"][storage.relations()[i]] =
          r.stored.relation_bytes.at(i);
    if (!s.postgres.empty())
      samples.back()["postgres_vacuum_passes"] = r.stored.vacuum_passes;
    for (std::size_t i = 0; i < storage.relations().size(); ++i) {
      if (r.stored.free_pages.at(i) >= 0) {
        samples.back()["postgres_index_pages"][storage.relations()[i]] = {
            {"pages", r.stored.index_pages.at(i)},
            {"free", r.stored.free_pages[i]},
            {"deleted", r.stored.deleted_pages.at(i)}};
      }
    }
  }
  json out = {{"cycles", n}, {"rate", rate}, {"errors", errors.load()}, {"samples", samples}};
  std::printf("%ld cycles, %ld errors\n", n, errors.load());
  // The mean of what `value` reads from a sample over the tenth of the samples that starts at
  // sample `from`, leaving out the readings that failed (below 0); 0 if all of them did.
  const std::size_t tenth = std::max<std::size_t>(1, samples.size() / 10);
  const auto mean = [&](const auto& value, std::size_t from) {
    double sum = 0;
    std::size_t read = 0;
    for (std::size_t i = from; i < from + tenth && i < samples.size(); ++i) {
      if (const double v = value(samples[i]); v >= 0) {
        sum += v;
        ++read;
      }
    }
    return read > 0 ? sum / static_cast<double>(read) : 0.0;
  };
  // Prints and records the growth of `name`, as `value` reads it, under `at`; `relation`: one of
  // the relations read apart, which the target is not about.
  const auto report = [&](const std::string& name, const auto& value, json& at, bool relation) {
    const double first = mean(value, 0), second = mean(value, tenth);
    const double last = mean(value, samples.size() - tenth);
    const double growth = first > 0 ? last / first - 1 : 0;
    at["growth"][name] = growth;
    // PostgreSQL's tables grow to their size between two autovacuum runs in the first minutes.
    at["growth_from_second_tenth"][name] = second > 0 ? last / second - 1 : 0;
    std::printf(
        "%s%s: first tenth %.0f, last tenth %.0f, growth %+.1f %%%s; from the second tenth "
        "(%.0f) %+.1f %%\n",
        relation ? "relation " : "", name.c_str(), first, last, 100 * growth,
        relation ? "" : " (target within 10 %)", second,
        second > 0 ? 100 * (last / second - 1) : 0.0);
  };
  std::vector<std::string> keys = {"server_rss_kib", "client_rss_kib", "server_db_bytes",
                                   "server_rows"};
  if (!s.postgres.empty())
    keys.push_back("postgres_backends_kib");
  else  // SQLite's WAL keeps its one size under a steady stream: the file alone shows a growth
    keys.push_back("server_db_file_bytes");
  for (const std::string& key : keys)
    report(
        key, [&](const json& sample) { return sample[key].get<double>(); }, out, false);
  for (const std::string& relation : storage.relations()) {
    report(
        relation,
        [&](const json& sample) {
          return sample["postgres_relation_bytes"][relation].get<double>();
        },
        out["postgres_relations"], true);
  }
  if (!s.postgres.empty()) {
    out["postgres_vacuum"] = vacuum_report(samples, storage.relations(), tenth);
    out["postgres_index_pages"] = index_pages_report(samples, storage.relations(), tenth);
    // The figures above are kept if the log cannot be read; only its report is missing then.
    if (std::ifstream log(postgres_log); log) {
      out["postgres_vacuum_log"] =
          vacuum_log_report(read_vacuum_passes(log, storage.schema(), "exactly_interactions"),
                            out["postgres_index_pages"], samples);
    } else {
      std::fprintf(stderr, "warning: cannot read the cluster's log %s: no report of its passes\n",
                   postgres_log.c_str());
    }
  }
  return out;
}

}  // namespace exactly::bench
