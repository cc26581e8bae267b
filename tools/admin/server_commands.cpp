// exactly-admin server ...: a server database's interactions, outbox and dead letters.
#include "admin_db.hpp"
#include "commands.hpp"
#include "format.hpp"

#include <exactly/common/digest.hpp>
#include <exactly/server/inspect.hpp>

#include <iostream>
#include <memory>

namespace exactly::admin {
namespace {

namespace inspect = server::inspect;
using nlohmann::json;

// What every server subcommand shares: the database and the audit log.
struct server_args {
  target where;
  std::string audit_log;
};

// Opens the database and checks it holds the server's tables.
std::unique_ptr<admin_db> open_server(const server_args& a, access acc) {
  auto db = std::make_unique<admin_db>(a.where, acc);
  if (!inspect::has_server_schema(db->db())) {
    throw usage_error(db->label() +
                      " holds no exactly server tables (a client's database? try "
                      "`exactly-admin client`)");
  }
  return db;
}

json counts_json(const inspect::row_counts& c) {
  return {{"staged", c.staged},
          {"executed", c.executed},
          {"tombstone", c.tombstone},
          {"outbox", c.outbox},
          {"dead_letters", c.dead_letters}};
}

json summary_json(const inspect::interaction_summary& s) {
  json j = {{"route", s.route},
            {"id", s.id},
            {"owner", s.owner},
            {"state", inspect::to_string(s.st)},
            {"state_since_ms", s.state_since_ms},
            {"state_since", utc_time(s.state_since_ms)},
            {"age_ms", s.age_ms},
            {"id_ms", s.id_ms},
            {"id_time", utc_time(s.id_ms)}};
  j["tombstone_reason"] = s.tombstone_reason ? json(*s.tombstone_reason) : json(nullptr);
  j["response_status"] = s.response_status ? json(*s.response_status) : json(nullptr);
  return j;
}

// What a listing shows after the state: the response status or the tombstone's reason.
std::string detail_of(const inspect::interaction_summary& s) {
  if (s.response_status)
    return std::to_string(*s.response_status);
  return s.tombstone_reason.value_or("");
}

int list_interactions(const server_args& a, const inspect::interaction_filter& f, bool as_json) {
  const auto db = open_server(a, access::read_only);
  const auto rows = inspect::list_interactions(db->db(), f);
  const auto c = inspect::counts(db->db());
  if (as_json) {
    json list = json::array();
    for (const auto& r : rows)
      list.push_back(summary_json(r));
    print_json({{"counts", counts_json(c)}, {"interactions", list}});
    return 0;
  }
  std::cout << "all rows: staged " << c.staged << ", executed " << c.executed << ", tombstone "
            << c.tombstone << "; outbox " << c.outbox << ", dead letters " << c.dead_letters
            << "\n";
  if (rows.empty()) {
    std::cout << "no interactions match\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    table.push_back({r.route, r.id, r.owner, std::string(inspect::to_string(r.st)),
                     utc_time(r.state_since_ms), short_age(r.age_ms), detail_of(r)});
  }
  print_table(std::cout, {"ROUTE", "ID", "OWNER", "STATE", "SINCE", "AGE", "STATUS/REASON"}, table);
  if (static_cast<int>(rows.size()) == f.limit)
    std::cout << "(first " << f.limit << " shown; --limit N for more)\n";
  return 0;
}

int show_interaction(const server_args& a, const std::string& route, const std::string& id,
                     bool as_json) {
  const auto db = open_server(a, access::read_only);
  const auto d = inspect::show_interaction(db->db(), route, id, now_ms());
  if (!d) {
    std::cerr << "exactly-admin: no interaction " << escape_controls(route) << " "
              << escape_controls(id) << " in " << db->label() << "\n";
    return 1;
  }
  if (as_json) {
    json j = summary_json(*d);
    j["request_content_type"] =
        d->request_content_type ? json(*d->request_content_type) : json(nullptr);
    j["request_body"] = d->request_body ? body_json(*d->request_body) : json(nullptr);
    j["request_sha256"] = d->request_sha256_hex ? json(*d->request_sha256_hex) : json(nullptr);
    j["response_content_type"] =
        d->response_content_type ? json(*d->response_content_type) : json(nullptr);
    j["response_body"] = d->response_body ? body_json(*d->response_body) : json(nullptr);
    print_json(j);
    return 0;
  }
  const auto body = [](const std::string& b) {
    if (const auto text = printable(b))
      std::cout << "  " << escape_controls(*text, true) << "\n";
    else
      std::cout << "  (not text) hex " << to_hex(b) << "\n";
  };
  std::cout << "route:     " << escape_controls(d->route)
            << "\nid:        " << escape_controls(d->id)
            << "\nowner:     " << escape_controls(d->owner)
            << "\nstate:     " << inspect::to_string(d->st);
  if (d->tombstone_reason)
    std::cout << " (" << escape_controls(*d->tombstone_reason) << ")";
  std::cout << " since " << utc_time(d->state_since_ms) << " (" << short_age(d->age_ms)
            << " ago)\nid time:   " << utc_time(d->id_ms) << "\n";
  if (d->request_sha256_hex) {
    std::cout << "request:   " << escape_controls(d->request_content_type.value_or(""))
              << ", sha256 " << *d->request_sha256_hex;
    if (d->request_body) {
      std::cout << ", " << d->request_body->size() << " bytes\n";
      body(*d->request_body);
    } else {
      std::cout << " (body dropped once executed)\n";
    }
  }
  if (d->response_status) {
    std::cout << "response:  " << *d->response_status << " "
              << escape_controls(d->response_content_type.value_or("")) << ", "
              << d->response_body.value_or("").size() << " bytes\n";
    body(d->response_body.value_or(""));
  }
  return 0;
}

int list_outbox(const server_args& a, int limit, bool as_json) {
  const auto db = open_server(a, access::read_only);
  const auto rows = inspect::list_outbox(db->db(), limit);
  const std::int64_t now = now_ms();
  if (as_json) {
    json list = json::array();
    for (const auto& m : rows) {
      list.push_back({{"seq", m.seq},
                      {"type", m.type},
                      {"source", m.source},
                      {"created_ms", m.created_ms},
                      {"created", utc_time(m.created_ms)},
                      {"attempts", m.attempts},
                      {"next_attempt_ms", m.next_attempt_ms},
                      {"last_error", m.last_error ? json(*m.last_error) : json(nullptr)}});
    }
    print_json({{"outbox", list}});
    return 0;
  }
  if (rows.empty()) {
    std::cout << "the outbox is empty\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& m : rows) {
    table.push_back({std::to_string(m.seq), m.type, m.source, utc_time(m.created_ms),
                     std::to_string(m.attempts),
                     m.next_attempt_ms <= now ? "due" : "in " + short_age(m.next_attempt_ms - now),
                     m.last_error.value_or("")});
  }
  print_table(std::cout, {"SEQ", "TYPE", "SOURCE", "CREATED", "ATTEMPTS", "NEXT", "LAST ERROR"},
              table);
  return 0;
}

json dead_letter_json(const inspect::dead_letter& d) {
  return {{"seq", d.seq},
          {"type", d.type},
          {"source", d.source},
          {"created_ms", d.created_ms},
          {"created", utc_time(d.created_ms)},
          {"attempts", d.attempts},
          {"error", d.error},
          {"failed_ms", d.failed_ms},
          {"failed", utc_time(d.failed_ms)}};
}

int list_dead_letters(const server_args& a, int limit, bool as_json) {
  const auto db = open_server(a, access::read_only);
  const auto rows = inspect::list_dead_letters(db->db(), limit);
  if (as_json) {
    json list = json::array();
    for (const auto& d : rows)
      list.push_back(dead_letter_json(d));
    print_json({{"dead_letters", list}});
    return 0;
  }
  if (rows.empty()) {
    std::cout << "no dead letters\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& d : rows) {
    table.push_back({std::to_string(d.seq), d.type, d.source, utc_time(d.failed_ms),
                     std::to_string(d.attempts), d.error});
  }
  print_table(std::cout, {"SEQ", "TYPE", "SOURCE", "FAILED", "ATTEMPTS", "ERROR"}, table);
  return 0;
}

int show_dead_letter(const server_args& a, std::int64_t seq, bool as_json) {
  const auto db = open_server(a, access::read_only);
  const auto d = inspect::show_dead_letter(db->db(), seq);
  if (!d) {
    std::cerr << "exactly-admin: no dead letter " << seq << " in " << db->label() << "\n";
    return 1;
  }
  if (as_json) {
    json j = dead_letter_json(*d);
    j["body"] = d->body;
    print_json(j);
    return 0;
  }
  std::cout << "seq:       " << d->seq << "\ntype:      " << escape_controls(d->type)
            << "\nsource:    " << escape_controls(d->source)
            << "\ncreated:   " << utc_time(d->created_ms)
            << "\nfailed:    " << utc_time(d->failed_ms) << " after " << d->attempts
            << " attempt(s)\nerror:     " << escape_controls(d->error) << "\nbody:\n  "
            << escape_controls(d->body, true) << "\n";
  return 0;
}

// The dead letters a mutation names: `seqs`, or every one with `all`.
std::vector<std::int64_t> chosen(const admin_db& db, const std::vector<std::int64_t>& seqs,
                                 bool all, const char* verb) {
  if (all == !seqs.empty())
    throw usage_error(std::string("dead-letter ") + verb + ": name SEQ... or --all");
  if (!all)
    return seqs;
  std::vector<std::int64_t> every;
  for (const auto& d : inspect::list_dead_letters(db.db(), 1'000'000))
    every.push_back(d.seq);
  return every;
}

// Runs `change` on each of `seqs` in turn, each its own transaction; when one throws, says which
// and how many before it were done (and logged) and rethrows.
template <class F>
void one_by_one(const std::vector<std::int64_t>& seqs, const char* verb, F change) {
  std::size_t i = 0;
  try {
    for (; i < seqs.size(); ++i)
      change(seqs[i]);
  } catch (const std::exception& e) {
    std::cerr << "exactly-admin: " << verb << " stopped at dead letter " << seqs[i] << ": "
              << escape_controls(e.what()) << "; the " << i
              << " before it were handled as printed above (each change committed and logged), "
                 "the rest untouched\n";
    throw;
  }
}

int replay(const server_args& a, const std::vector<std::int64_t>& seqs, bool all) {
  change_log log(a.audit_log);  // before any change: an unwritable log changes nothing
  const auto db = open_server(a, access::read_write);
  int missing = 0;
  one_by_one(chosen(*db, seqs, all, "replay"), "replay", [&](std::int64_t seq) {
    const auto d = inspect::show_dead_letter(db->db(), seq);  // what the log says it was
    switch (inspect::replay_dead_letter(db->db(), seq)) {
      case inspect::replay_result::replayed:
        log.write(*db, "replayed dead letter " + std::to_string(seq) +
                           (d ? " (" + d->type + " from " + d->source + ")" : std::string()) +
                           " into the outbox, due now");
        std::cout << "replayed " << seq << "\n";
        break;
      case inspect::replay_result::already_in_outbox:
        // Another operator's replay came first: the message waits for delivery, as asked.
        std::cerr << "exactly-admin: dead letter " << seq
                  << " is already back in the outbox; nothing changed\n";
        break;
      case inspect::replay_result::not_found:
        std::cerr << "exactly-admin: no dead letter " << seq << " in " << db->label() << "\n";
        ++missing;
        break;
    }
  });
  return missing ? 1 : 0;
}

int drop(const server_args& a, const std::vector<std::int64_t>& seqs, bool all, bool yes) {
  if (!yes) {
    throw usage_error(
        "dead-letter drop deletes dead letters for good: add --yes to confirm (see them first "
        "with `dead-letter show SEQ`)");
  }
  change_log log(a.audit_log);
  const auto db = open_server(a, access::read_write);
  int missing = 0;
  one_by_one(chosen(*db, seqs, all, "drop"), "drop", [&](std::int64_t seq) {
    const auto d = inspect::show_dead_letter(db->db(), seq);
    if (d && inspect::drop_dead_letter(db->db(), seq)) {
      log.write(*db, "dropped dead letter " + std::to_string(seq) + " (" + d->type + " from " +
                         d->source + ", body " + d->body + ")");
      std::cout << "dropped " << seq << "\n";
    } else {
      std::cerr << "exactly-admin: no dead letter " << seq << " in " << db->label() << "\n";
      ++missing;
    }
  });
  return missing ? 1 : 0;
}

// Adds the listing subcommand `name` with --limit and --json; naming it makes `action` call
// `list` with them.
void add_listing(CLI::App* parent, action_fn& action, const std::string& name,
                 const std::string& help, std::function<int(int, bool)> list) {
  auto* c = parent->add_subcommand(name, help);
  struct opts {
    int limit = 100;
    bool json = false;
  };
  auto o = std::make_shared<opts>();
  c->add_option("--limit", o->limit, "at most this many")->check(CLI::Range(1, 1'000'000));
  c->add_flag("--json", o->json, "print JSON");
  c->callback([&action, o, list = std::move(list)] {
    action = [o, list] { return list(o->limit, o->json); };
  });
}

}  // namespace

void add_server_commands(CLI::App& app, action_fn& action) {
  auto* server =
      app.add_subcommand("server", "a server's database: interactions, outbox, dead letters");
  auto args = std::make_shared<server_args>();
  server->add_option("--sqlite", args->where.sqlite_path, "the server's SQLite database file");
  server->add_option("--postgres", args->where.postgres,
                     "the server's PostgreSQL database (a libpq connection string; "
                     "options='-c search_path=SCHEMA' names a schema)");
  server->add_option("--audit-log", args->audit_log, "also append every change made to this file");
  server->require_subcommand(1);
  server->fallthrough();

  // interactions
  {
    auto* c = server->add_subcommand("interactions", "list interactions, newest first");
    struct opts {
      std::string state, owner, route, older_than;
      int limit = 100;
      bool oldest_first = false, json = false;
    };
    auto o = std::make_shared<opts>();
    c->add_option("--state", o->state, "staged, executed or tombstone");
    c->add_option("--owner", o->owner, "the principal that staged them");
    c->add_option("--route", o->route, "the route template, e.g. /payment/authorize/{id}");
    c->add_option("--older-than", o->older_than,
                  "only rows in their state for at least this long: 500ms, 90s, 10m, 2h, 7d");
    c->add_option("--limit", o->limit, "at most this many rows")->check(CLI::Range(1, 1'000'000));
    c->add_flag("--oldest-first", o->oldest_first, "oldest first");
    c->add_flag("--json", o->json, "print JSON");
    c->callback([&action, args, o] {
      action = [args, o] {
        inspect::interaction_filter f;
        if (!o->state.empty()) {
          f.only_state = inspect::parse_state(o->state);
          if (!f.only_state)
            throw usage_error("unknown state '" + o->state +
                              "': use staged, executed or tombstone");
        }
        if (!o->owner.empty())
          f.owner = o->owner;
        if (!o->route.empty())
          f.route = o->route;
        if (!o->older_than.empty()) {
          f.older_than_ms = parse_duration(o->older_than);
        }
        f.now_ms = now_ms();
        f.limit = o->limit;
        f.oldest_first = o->oldest_first;
        return list_interactions(*args, f, o->json);
      };
    });
  }
  // interaction ROUTE ID
  {
    auto* c = server->add_subcommand("interaction", "show one interaction with its bodies");
    struct opts {
      std::string route, id;
      bool json = false;
    };
    auto o = std::make_shared<opts>();
    c->add_option("ROUTE", o->route, "the route template, e.g. /payment/authorize/{id}")
        ->required();
    c->add_option("ID", o->id, "the request id")->required();
    c->add_flag("--json", o->json, "print JSON");
    c->callback([&action, args, o] {
      action = [args, o] { return show_interaction(*args, o->route, o->id, o->json); };
    });
  }
  add_listing(server, action, "outbox", "list messages waiting in the server outbox",
              [args](int limit, bool json) { return list_outbox(*args, limit, json); });
  add_listing(server, action, "dead-letters", "list dead letters, oldest first",
              [args](int limit, bool json) { return list_dead_letters(*args, limit, json); });
  // dead-letter show|replay|drop
  {
    auto* dl = server->add_subcommand("dead-letter", "show, replay or drop dead letters");
    dl->require_subcommand(1);
    dl->fallthrough();
    struct opts {
      std::int64_t seq = 0;
      std::vector<std::int64_t> seqs;
      bool all = false, yes = false, json = false;
    };
    auto o = std::make_shared<opts>();
    auto* show = dl->add_subcommand("show", "show one dead letter with its body");
    show->add_option("SEQ", o->seq, "its sequence number")->required();
    show->add_flag("--json", o->json, "print JSON");
    show->callback([&action, args, o] {
      action = [args, o] { return show_dead_letter(*args, o->seq, o->json); };
    });
    auto* rep = dl->add_subcommand(
        "replay",
        "move dead letters back into the outbox (attempts 0, due now) for delivery; each one is "
        "its own transaction, logged once committed: a failure midway leaves the earlier ones "
        "replayed and names the one it stopped at. One already back in the outbox (another "
        "operator's replay) is said so and counts as done");
    rep->add_option("SEQ", o->seqs, "their sequence numbers");
    rep->add_flag("--all", o->all, "every dead letter");
    rep->callback(
        [&action, args, o] { action = [args, o] { return replay(*args, o->seqs, o->all); }; });
    auto* drp = dl->add_subcommand(
        "drop",
        "delete dead letters for good (needs --yes); each one is its own transaction, logged once "
        "committed: a failure midway leaves the earlier ones dropped and names the one it stopped "
        "at");
    drp->add_option("SEQ", o->seqs, "their sequence numbers");
    drp->add_flag("--all", o->all, "every dead letter");
    drp->add_flag("--yes", o->yes, "confirm: the messages are deleted for good");
    drp->callback([&action, args, o] {
      action = [args, o] { return drop(*args, o->seqs, o->all, o->yes); };
    });
  }
}

}  // namespace exactly::admin
