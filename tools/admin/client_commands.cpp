// exactly-admin client ...: a client database's queues, invocations and error queues.
#include "admin_db.hpp"
#include "commands.hpp"
#include "format.hpp"

#include <exactly/client/inspect.hpp>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

namespace exactly::admin {
namespace {

namespace inspect = client::inspect;
using nlohmann::json;

struct client_args {
  target where;
  std::string audit_log;
};

std::unique_ptr<admin_db> open_client(const client_args& a, access acc) {
  auto db = std::make_unique<admin_db>(a.where, acc);
  if (!inspect::is_client_database(db->db())) {
    throw usage_error(db->label() +
                      " holds no exactly client tables (a server's database? try "
                      "`exactly-admin server`)");
  }
  return db;
}

int list_queues(const client_args& a, bool as_json) {
  const auto db = open_client(a, access::read_only);
  const auto depths = inspect::queue_depths(db->db(), now_ms());
  const auto counts = inspect::invocation_counts(db->db());
  if (as_json) {
    json queues = json::array(), invocations = json::object();
    for (const auto& q : depths) {
      queues.push_back(
          {{"endpoint", q.endpoint}, {"due", q.due}, {"delayed", q.delayed}, {"errors", q.errors}});
    }
    for (const auto& c : counts)
      invocations[c.state] = c.count;
    print_json({{"queues", queues}, {"invocations", invocations}});
    return 0;
  }
  std::cout << "unfinished invocations:";
  for (const auto& c : counts)
    std::cout << " " << c.state << " " << c.count;
  std::cout << "\n";
  if (depths.empty()) {
    std::cout << "every queue and error queue is empty\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& q : depths) {
    table.push_back(
        {q.endpoint, std::to_string(q.due), std::to_string(q.delayed), std::to_string(q.errors)});
  }
  print_table(std::cout, {"ENDPOINT", "DUE", "DELAYED", "ERRORS"}, table);
  return 0;
}

// The stored invocation states, as --state accepts them: "a, b, c or d".
std::string state_choices() {
  const auto names = inspect::stored_state_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

int list_invocations(const client_args& a, const inspect::invocation_filter& f, bool as_json) {
  const auto db = open_client(a, access::read_only);
  const auto rows = inspect::invocations(db->db(), f, now_ms());
  if (as_json) {
    json list = json::array();
    for (const auto& i : rows) {
      list.push_back({{"request_id", i.request_id},
                      {"endpoint", i.endpoint},
                      {"url", i.url},
                      {"state", i.state},
                      {"attempts", i.attempts},
                      {"last_error", i.last_error},
                      {"created_ms", i.created_ms},
                      {"created", utc_time(i.created_ms)},
                      {"due_ms", i.due_ms},
                      {"age_ms", i.age_ms}});
    }
    print_json({{"invocations", list}});
    return 0;
  }
  if (rows.empty()) {
    std::cout << "no unfinished invocations match\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& i : rows) {
    table.push_back({i.request_id, i.endpoint, i.state, short_age(i.age_ms),
                     std::to_string(i.attempts), i.url, i.last_error});
  }
  print_table(std::cout,
              {"REQUEST ID", "ENDPOINT", "STATE", "AGE", "ATTEMPTS", "URL", "LAST ERROR"}, table);
  return 0;
}

json error_json(const inspect::error_summary& e) {
  return {{"seq", e.seq},
          {"endpoint", e.endpoint},
          {"message_id", e.message_id},
          {"type", e.type},
          {"attempts", e.attempts},
          {"error", e.error},
          {"failed_ms", e.failed_ms},
          {"failed", utc_time(e.failed_ms)}};
}

int list_errors(const client_args& a, const inspect::error_filter& f, bool as_json) {
  const auto db = open_client(a, access::read_only);
  const auto rows = inspect::errors(db->db(), f);
  if (as_json) {
    json list = json::array();
    for (const auto& e : rows)
      list.push_back(error_json(e));
    print_json({{"errors", list}});
    return 0;
  }
  if (rows.empty()) {
    std::cout << "the error queues are empty\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& e : rows) {
    table.push_back({std::to_string(e.seq), e.endpoint, e.type, utc_time(e.failed_ms),
                     std::to_string(e.attempts), e.error});
  }
  print_table(std::cout, {"ID", "ENDPOINT", "TYPE", "FAILED", "ATTEMPTS", "ERROR"}, table);
  return 0;
}

int show_error(const client_args& a, std::int64_t seq, bool as_json) {
  const auto db = open_client(a, access::read_only);
  const auto e = inspect::error(db->db(), seq);
  if (!e) {
    std::cerr << "exactly-admin: no error-queue entry " << seq << " in " << db->label() << "\n";
    return 1;
  }
  const json j = {{"seq", e->seq},
                  {"endpoint", e->endpoint},
                  {"message_id", e->msg.id},
                  {"type", e->msg.type},
                  {"headers", e->msg.headers},
                  {"body", e->msg.body},
                  {"attempts", e->attempts},
                  {"error", e->error},
                  {"failed_ms", e->failed_ms},
                  {"failed", utc_time(e->failed_ms)}};
  if (as_json) {
    print_json(j);
    return 0;
  }
  // JSON escapes C0 controls inside strings but not DEL or C1: those are escaped here.
  std::cout << "id:        " << e->seq << "\nendpoint:  " << escape_controls(e->endpoint)
            << "\nmessage:   " << escape_controls(e->msg.id) << " (" << escape_controls(e->msg.type)
            << ")"
            << "\nfailed:    " << utc_time(e->failed_ms) << " after " << e->attempts
            << " attempt(s)\nerror:     " << escape_controls(e->error) << "\nheaders:   "
            << escape_controls(e->msg.headers.dump(-1, ' ', false, json::error_handler_t::replace))
            << "\nbody:      "
            << escape_controls(e->msg.body.dump(-1, ' ', false, json::error_handler_t::replace))
            << "\n";
  return 0;
}

// Logs each entry a mutation changed (with `detail` of it).
void log_done(change_log& log, const admin_db& db, const std::vector<inspect::error_summary>& done,
              const char* verb,
              const std::function<std::string(const inspect::error_summary&)>& detail) {
  for (const auto& e : done) {
    log.write(db, std::string(verb) + " error-queue entry " + std::to_string(e.seq) + " (" +
                      e.type + " for " + e.endpoint + ", message " + e.message_id + ")" +
                      detail(e));
    std::cout << verb << " " << e.seq << "\n";
  }
}

// Names on stderr the ids asked for that `done` does not hold; 1 if any, else 0.
int report_missing(const admin_db& db, const std::vector<std::int64_t>& asked,
                   const std::vector<inspect::error_summary>& done) {
  int missing = 0;
  for (std::int64_t seq : asked) {
    bool found = false;
    for (const auto& e : done)
      found = found || e.seq == seq;
    if (!found) {
      std::cerr << "exactly-admin: no error-queue entry " << seq << " in " << db.label() << "\n";
      ++missing;
    }
  }
  return missing ? 1 : 0;
}

std::string due_now(const inspect::error_summary&) {
  return " into its queue, due now";
}

int requeue(const client_args& a, const std::vector<std::int64_t>& seqs, bool all,
            const std::string& endpoint) {
  if (all == !seqs.empty())
    throw usage_error("error requeue: name ID... or --all");
  if (!endpoint.empty() && !all)
    throw usage_error("error requeue: --endpoint goes with --all");
  change_log log(a.audit_log);  // before any change: an unwritable log changes nothing
  const auto db = open_client(a, access::read_write);
  if (!all) {
    const auto done = inspect::requeue_errors(db->db(), seqs, now_ms());  // one transaction
    log_done(log, *db, done, "requeued", due_now);
    return report_missing(*db, seqs, done);
  }
  // --all: one transaction per endpoint's error queue, each logged once committed.
  bool any = false;
  for (const auto& q : inspect::queue_depths(db->db(), now_ms())) {
    if (q.errors == 0 || (!endpoint.empty() && q.endpoint != endpoint))
      continue;
    std::vector<inspect::error_summary> done;
    try {
      done = inspect::requeue_all_errors(db->db(), q.endpoint, now_ms());
    } catch (const std::exception& e) {
      std::cerr << "exactly-admin: requeue stopped at endpoint " << escape_controls(q.endpoint)
                << "'s error queue (left as it was): " << escape_controls(e.what())
                << "; the endpoints before it were requeued as printed above\n";
      throw;
    }
    log_done(log, *db, done, "requeued", due_now);
    any = any || !done.empty();
  }
  if (!any)
    std::cout << "nothing to requeue\n";
  return 0;
}

int drop(const client_args& a, const std::vector<std::int64_t>& seqs, bool yes) {
  if (seqs.empty())
    throw usage_error("error drop: name ID...");
  if (!yes) {
    throw usage_error(
        "error drop deletes messages for good: add --yes to confirm (see them first with "
        "`error show ID`)");
  }
  change_log log(a.audit_log);
  const auto db = open_client(a, access::read_write);
  std::map<std::int64_t, std::string> bodies;  // what is dropped, body included, goes to the log
  for (std::int64_t seq : seqs) {
    if (const auto e = inspect::error(db->db(), seq))
      bodies[seq] = e->msg.body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  const auto done = inspect::drop_errors(db->db(), seqs);  // one transaction
  log_done(log, *db, done, "dropped",
           [&bodies](const inspect::error_summary& e) { return ", body " + bodies[e.seq]; });
  return report_missing(*db, seqs, done);
}

}  // namespace

void add_client_commands(CLI::App& app, action_fn& action) {
  auto* c = app.add_subcommand("client", "a client's database: queues, invocations, error queues");
  auto args = std::make_shared<client_args>();
  c->add_option("--sqlite", args->where.sqlite_path, "the client's SQLite database file");
  c->add_option("--postgres", args->where.postgres,
                "the client's PostgreSQL database (a libpq connection string; "
                "options='-c search_path=SCHEMA' names a schema)");
  c->add_option("--audit-log", args->audit_log, "also append every change made to this file");
  c->require_subcommand(1);
  c->fallthrough();

  {
    auto* q = c->add_subcommand("queues", "queue depths per endpoint and unfinished invocations");
    auto as_json = std::make_shared<bool>(false);
    q->add_flag("--json", *as_json, "print JSON");
    q->callback([&action, args, as_json] {
      action = [args, as_json] { return list_queues(*args, *as_json); };
    });
  }
  {
    auto* inv = c->add_subcommand("invocations", "unfinished invoke_http calls, oldest first");
    struct opts {
      inspect::invocation_filter f;
      std::string older_than;
      bool json = false;
    };
    auto o = std::make_shared<opts>();
    inv->add_option("--state", o->f.state, state_choices());
    inv->add_option("--endpoint", o->f.endpoint, "the endpoint receiving the follow-up");
    inv->add_option("--url-prefix", o->f.url_prefix, "the POST's URL starts with this");
    inv->add_option("--older-than", o->older_than, "recorded at least this long ago: 90s, 10m");
    inv->add_option("--limit", o->f.limit, "at most this many")->check(CLI::Range(1, 1'000'000));
    inv->add_flag("--json", o->json, "print JSON");
    inv->callback([&action, args, o] {
      action = [args, o] {
        const auto& s = o->f.state;
        const auto names = inspect::stored_state_names();
        if (!s.empty() && std::find(names.begin(), names.end(), s) == names.end())
          throw usage_error("unknown state '" + s + "': use " + state_choices());
        if (!o->older_than.empty()) {
          o->f.min_age_ms = parse_duration(o->older_than);
        }
        return list_invocations(*args, o->f, o->json);
      };
    });
  }
  {
    auto* e = c->add_subcommand("errors", "error-queue entries, oldest first");
    struct opts {
      inspect::error_filter f;
      bool json = false;
    };
    auto o = std::make_shared<opts>();
    e->add_option("--endpoint", o->f.endpoint, "one endpoint's error queue");
    e->add_option("--after", o->f.after_seq, "entries after this id (paging)");
    e->add_option("--limit", o->f.limit, "at most this many")->check(CLI::Range(1, 1'000'000));
    e->add_flag("--json", o->json, "print JSON");
    e->callback(
        [&action, args, o] { action = [args, o] { return list_errors(*args, o->f, o->json); }; });
  }
  {
    auto* err = c->add_subcommand("error", "show, requeue or drop error-queue entries");
    err->require_subcommand(1);
    err->fallthrough();
    struct opts {
      std::int64_t seq = 0;
      std::vector<std::int64_t> seqs;
      std::string endpoint;
      bool all = false, yes = false, json = false;
    };
    auto o = std::make_shared<opts>();
    auto* show = err->add_subcommand("show", "one entry with its message and error");
    show->add_option("ID", o->seq, "the entry's id (errors lists them)")->required();
    show->add_flag("--json", o->json, "print JSON");
    show->callback(
        [&action, args, o] { action = [args, o] { return show_error(*args, o->seq, o->json); }; });
    auto* rq = err->add_subcommand(
        "requeue",
        "put entries back in their queues, due now: the IDs named in one transaction; --all one "
        "transaction per endpoint's error queue, each logged once committed (a failure midway "
        "leaves the endpoints before it requeued and names the one it stopped at)");
    rq->add_option("ID", o->seqs, "the entries' ids");
    rq->add_flag("--all", o->all, "every entry (of --endpoint, if given)");
    rq->add_option("--endpoint", o->endpoint, "with --all: only this endpoint's entries");
    rq->callback([&action, args, o] {
      action = [args, o] { return requeue(*args, o->seqs, o->all, o->endpoint); };
    });
    auto* dr = err->add_subcommand(
        "drop", "delete the entries named for good, in one transaction (needs --yes; no --all)");
    dr->add_option("ID", o->seqs, "the entries' ids");
    dr->add_flag("--yes", o->yes, "confirm: the messages are deleted for good");
    dr->callback(
        [&action, args, o] { action = [args, o] { return drop(*args, o->seqs, o->yes); }; });
  }
}

}  // namespace exactly::admin
