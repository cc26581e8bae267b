// The built-in black-box cases (see black_box.hpp).
#include "black_box.hpp"

#include "case_support.hpp"

#include <exactly/common/clock.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <cctype>
#include <map>
#include <thread>

namespace exactly::conformance {
namespace {

// What an answer must be: a status (0: any), and a problem name or an outcome ("" = neither).
struct want {
  unsigned status;
  std::string problem{};
  std::string outcome{};
};

// One case's requests and checks on one connection, as principal A unless told otherwise.
class checks {
 public:
  checks(target& t, const run_options& o, std::string name) : t_(t), o_(o), conn_(t.at) {
    out_.name = std::move(name);
  }

  std::int64_t now() {
    if (t_.control) {
      if (const auto ms = t_.control->now_ms())
        return *ms;
    }
    return system_now_ms();
  }
  std::string fresh_id(std::int64_t shift_ms = 0) {
    const std::string id = request_id::mint(now() + shift_ms).to_string();
    ids_.push_back(id);
    return id;
  }
  std::string body() {
    return o_.echo ? R"({"status":200,"reply":")" + numbered_body("{n}") + R"("})"
                   : numbered_body(o_.body);
  }
  request make(const std::string& method, const std::string& id, const std::string& body = "",
               const std::string* key = nullptr) const {
    request r{method, with_id(o_.route, id), {}, body};
    r.headers.emplace_back("Authorization", "Bearer " + (key ? *key : o_.key));
    if (method == "PUT")
      r.headers.emplace_back("Content-Type", "application/json");
    return r;
  }
  answer send(const request& r) { return conn_.send(r); }

  // Sends `r` and checks the answer against `w`; returns the answer.
  answer expect(const std::string& what, const request& r, const want& w) {
    const answer a = conn_.send(r);
    check(what, r, a, w);
    return a;
  }
  void check(const std::string& what, const request& r, const answer& a, const want& w) {
    if (r.method == "PUT")
      staged_.try_emplace(r.target, r.body);  // the first PUT of an id stages its body
    std::string wrong;
    if (a.status == 0)
      wrong = "no answer";
    else if (w.status != 0 && a.status != w.status)
      wrong = "status: want " + std::to_string(w.status) + ", got " + std::to_string(a.status);
    const std::string outcome = a.header("exactly-once-outcome");
    const bool is_problem = a.header("content-type") == protocol::problem_content_type;
    if (wrong.empty() && !w.problem.empty()) {
      const auto p = is_problem ? parse_problem(a.body) : std::nullopt;
      if (!p)
        wrong = "want the problem " + w.problem + ", got no problem";
      else if (p->name() != w.problem)
        wrong = "problem: want " + w.problem + ", got " + std::string(p->name());
      else if (p->status != a.status)
        wrong = "the problem's status: want " + std::to_string(a.status) +
                " (the HTTP status), got " + std::to_string(p->status);
      else if (a.has_header("exactly-once-outcome"))
        wrong = "a problem must not carry Exactly-Once-Outcome";
      else if (a.has_header("exactly-once-retention"))
        wrong = "a problem must not carry Exactly-Once-Retention";
    }
    if (wrong.empty() && !w.outcome.empty())
      wrong = echo_wrong(r, a);
    if (wrong.empty() && w.problem.empty() && outcome != w.outcome)
      wrong = "Exactly-Once-Outcome: want " + show(w.outcome) + ", got " + show(outcome);
    if (wrong.empty() && w.problem.empty() && w.outcome.empty() && is_problem)
      wrong = "must not be a problem";
    if (!wrong.empty())
      fail(what + ": " + wrong, r, a);
  }
  // The echo route (no --body): what is wrong with `a` as the stored answer of the id `r` names
  // (200 and {"reply":<the staged body's reply>}), or "". Another route: "" (its answers are
  // compared with the first stored one).
  std::string echo_wrong(const request& r, const answer& a) const {
    if (!o_.echo)
      return "";
    if (a.status != 200)
      return "status: want 200 (the echo route's stored answer), got " + std::to_string(a.status);
    const auto it = staged_.find(r.target);
    if (it == staged_.end())
      return "";
    const auto staged = nlohmann::json::parse(it->second, nullptr, false);
    if (staged.is_discarded() || !staged.is_object() || !staged.contains("reply"))
      return "";
    const std::string want_body = nlohmann::json{{"reply", staged.at("reply")}}.dump();
    if (a.body != want_body)
      return "body: want " + show(want_body) + " (the echo of the staged body), got " +
             show(a.body);
    return "";
  }
  void fail(const std::string& what, const request& r, const answer& a) {
    out_.failures.push_back(what + "\n  request: " + describe(r) + "\n  answer: " + describe(a));
  }
  void fail(const std::string& what) { out_.failures.push_back(what); }
  void note(const std::string& n) { out_.detail += (out_.detail.empty() ? "" : "; ") + n; }

  // A check was weaker than the case means (why): the case is pass* at best.
  void weaker(const std::string& why) {
    if (!weaker_)
      note(why);
    weaker_ = true;
  }

  case_result finish() {
    for (const std::string& id : ids_)
      conn_.send(make("DELETE", id));
    out_.result = !out_.failures.empty() ? verdict::fail
                  : weaker_              ? verdict::partial
                                         : verdict::pass;
    return std::move(out_);
  }
  case_result skip(const std::string& why) {
    out_.result = verdict::skip;
    out_.detail = why;
    return std::move(out_);
  }

  // The case's own connection (pipelining and raw requests open a fresh one each time).
  http_connection& conn() { return conn_; }

 private:
  target& t_;
  const run_options& o_;
  http_connection conn_;
  case_result out_;
  std::vector<std::string> ids_;
  std::map<std::string, std::string> staged_;  // request target -> the body its first PUT sent
  bool weaker_ = false;
};

// Stored answers compare equal when status, Content-Type and body are the same.
bool same_stored(const answer& a, const answer& b) {
  return a.status == b.status && a.header("content-type") == b.header("content-type") &&
         a.body == b.body;
}

const want executed{0, "", "executed"};
const want replayed{0, "", "replayed"};

// A stored answer must come back the same: status, Content-Type, body.
void expect_same(checks& c, const std::string& what, const request& r, const answer& a,
                 const answer& first) {
  if (a.status != first.status || a.header("content-type") != first.header("content-type") ||
      a.body != first.body)
    c.fail(what + ": differs from the first stored answer (" + describe(first) + ")", r, a);
}

case_result lifecycle(target& t, const run_options& o) {
  checks c(t, o, "black-box/lifecycle");
  const std::string id = c.fresh_id(), body = c.body();
  c.expect("PUT", c.make("PUT", id, body), {201});
  c.expect("PUT again, same body", c.make("PUT", id, body), {200});
  c.expect("GET before POST", c.make("GET", id), {409, "not-executed"});
  const answer first = c.expect("POST", c.make("POST", id), executed);
  const request post = c.make("POST", id);
  const answer again = c.expect("POST again", post, replayed);
  expect_same(c, "POST again", post, again, first);
  const request get = c.make("GET", id);
  const answer got = c.expect("GET", get, replayed);
  expect_same(c, "GET", get, got, first);
  c.expect("DELETE", c.make("DELETE", id), {204});
  c.expect("DELETE again", c.make("DELETE", id), {204});
  c.expect("GET after DELETE", c.make("GET", id), {410, "request-consumed"});
  c.expect("POST after DELETE", c.make("POST", id), {410, "request-consumed"});
  c.expect("PUT after DELETE (re-staging)", c.make("PUT", id, body), {410, "request-consumed"});
  c.expect("POST after the PUT", c.make("POST", id), {410, "request-consumed"});
  return c.finish();
}

// The states reachable without moving the clock.
enum class state { unknown, staged, executed, deleted, old_unknown, future_unknown };

struct state_row {
  state s;
  const char* name;
  want put, post, get, del;
};

const state_row state_rows[] = {
    {state::unknown, "unknown", {201}, {404, "request-unknown"}, {404, "request-unknown"}, {204}},
    {state::staged, "staged", {200}, executed, {409, "not-executed"}, {204}},
    {state::executed, "executed", {410, "request-consumed"}, replayed, replayed, {204}},
    {state::deleted,
     "deleted",
     {410, "request-consumed"},
     {410, "request-consumed"},
     {410, "request-consumed"},
     {204}},
    {state::old_unknown,
     "unknown-old",
     {410, "request-too-old"},
     {410, "request-too-old"},
     {410, "request-too-old"},
     {204}},
    {state::future_unknown,
     "unknown-future",
     {400, "invalid-request-id"},
     {404, "request-unknown"},
     {404, "request-unknown"},
     {204}},
};

// A fresh id brought into `s` with `body` (a failed step is a failure of the case).
void set_up(checks& c, state s, const std::string& body, std::string& id) {
  switch (s) {
    case state::old_unknown:
      id = c.fresh_id(-2 * 3600 * 1000);
      return;
    case state::future_unknown:
      id = c.fresh_id(3600 * 1000);
      return;
    default:
      id = c.fresh_id();
  }
  if (s == state::unknown)
    return;
  c.expect("set-up PUT", c.make("PUT", id, body), {201});
  if (s == state::executed)
    c.expect("set-up POST", c.make("POST", id), executed);
  if (s == state::deleted)
    c.expect("set-up DELETE", c.make("DELETE", id), {204});
}

case_result state_case(target& t, const run_options& o, const state_row& row) {
  checks c(t, o, std::string("black-box/state-") + row.name);
  if ((row.s == state::old_unknown || row.s == state::future_unknown) && !t.control)
    c.note("ids dated from our clock");
  const std::pair<const char*, const want*> verbs[] = {
      {"PUT", &row.put}, {"POST", &row.post}, {"GET", &row.get}, {"DELETE", &row.del}};
  for (const auto& [verb, w] : verbs) {
    std::string id;
    const std::string body = c.body();
    set_up(c, row.s, body, id);
    const std::string what = std::string(verb) + " of a " + row.name + " id";
    const request r = c.make(verb, id, std::string(verb) == "PUT" ? body : "");
    const answer a = c.expect(what, r, *w);
    if (row.s == state::executed && w->outcome == "replayed") {
      const answer stored = c.send(c.make("GET", id));
      expect_same(c, what, r, a, stored);
    }
  }
  if (row.s == state::unknown) {
    // A DELETE of a young unknown id leaves a tombstone: a delayed PUT can never stage it.
    const std::string id = c.fresh_id(), body = c.body();
    c.expect("DELETE of an unknown id", c.make("DELETE", id), {204});
    c.expect("PUT after that DELETE", c.make("PUT", id, body), {410, "request-consumed"});
  }
  return c.finish();
}

case_result ownership(target& t, const run_options& o) {
  checks c(t, o, "black-box/ownership");
  if (o.second_key.empty())
    return c.skip("needs a second principal (--second-key)");
  const std::string id = c.fresh_id(), body = c.body();
  const std::string* b = &o.second_key;
  c.expect("A stages", c.make("PUT", id, body), {201});
  c.expect("B PUTs A's id", c.make("PUT", id, body, b), {404, "request-unknown"});
  c.expect("B POSTs A's id", c.make("POST", id, "", b), {404, "request-unknown"});
  c.expect("B GETs A's id", c.make("GET", id, "", b), {404, "request-unknown"});
  c.expect("B DELETEs A's id", c.make("DELETE", id, "", b), {404, "request-unknown"});
  c.expect("A POSTs after B's attempts", c.make("POST", id), executed);
  c.expect("B GETs A's executed id", c.make("GET", id, "", b), {404, "request-unknown"});
  c.expect("B POSTs A's executed id", c.make("POST", id, "", b), {404, "request-unknown"});
  return c.finish();
}

case_result concurrent_posts(target& t, const run_options& o) {
  checks c(t, o, "black-box/concurrent-posts");
  const int n = std::max(2, o.concurrency);
  constexpr int rounds = 5;
  for (int round = 0; round < rounds; ++round) {
    const std::string id = c.fresh_id();
    c.expect("PUT", c.make("PUT", id, c.body()), {201});
    std::vector<std::unique_ptr<http_connection>> conns;
    for (int i = 0; i < n; ++i) {
      conns.push_back(std::make_unique<http_connection>(t.at));
      conns.back()->send(c.make("GET", id));  // connected before the race
    }
    std::vector<answer> answers(n);
    std::barrier start(n);
    std::vector<std::thread> threads;
    const request post = c.make("POST", id);
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        answers[i] = conns[i]->send(post);
      });
    }
    for (auto& th : threads)
      th.join();
    int executions = 0;
    const answer* first = nullptr;
    for (const answer& a : answers) {
      const std::string outcome = a.header("exactly-once-outcome");
      if (outcome == "executed")
        ++executions;
      else if (outcome != "replayed")
        c.fail(std::to_string(n) + " concurrent POSTs: an answer without an outcome", post, a);
      if (const std::string wrong = c.echo_wrong(post, a); !wrong.empty())
        c.fail("concurrent POSTs: " + wrong, post, a);
      if (first && !same_stored(a, *first))
        c.fail("concurrent POSTs: answers differ (the first: " + describe(*first) + ")", post, a);
      first = first ? first : &a;
    }
    if (executions != 1) {
      c.fail(std::to_string(n) +
             " concurrent POSTs of one staged id: want exactly 1 answer "
             "\"executed\", got " +
             std::to_string(executions) + " (round " + std::to_string(round + 1) + ")");
    }
    const auto counted = t.control ? t.control->executions(id) : std::nullopt;
    if (!counted)
      c.weaker(
          "executions NOT counted by the server (no test control, or it cannot count them): "
          "only the answers' Exactly-Once-Outcome checked");
    else if (*counted != 1)
      c.fail("concurrent POSTs: the server counts " + std::to_string(*counted) +
             " executions of the id (round " + std::to_string(round + 1) + ")");
  }
  return c.finish();
}

case_result pipelining(target& t, const run_options& o) {
  checks c(t, o, "black-box/pipelining");
  const std::string id = c.fresh_id(), body = c.body();
  const std::vector<request> rs = {c.make("PUT", id, body), c.make("POST", id), c.make("GET", id),
                                   c.make("DELETE", id), c.make("GET", id)};
  const want ws[] = {{201}, executed, replayed, {204}, {410, "request-consumed"}};
  const auto answers = c.conn().pipeline(rs);
  if (answers.size() != rs.size() || answers.back().status == 0) {
    c.fail("5 pipelined requests: " + std::to_string(answers.size()) +
           " answers, the last: " + describe(answers.back()));
    return c.finish();
  }
  for (std::size_t i = 0; i < rs.size(); ++i)
    c.check("pipelined request " + std::to_string(i + 1), rs[i], answers[i], ws[i]);
  if (!same_stored(answers[1], answers[2]))
    c.fail("pipelined GET: differs from the POST's answer", rs[2], answers[2]);
  return c.finish();
}

case_result malformed_ids(target& t, const run_options& o) {
  checks c(t, o, "black-box/malformed-ids");
  std::string upper = request_id::mint(c.now()).to_string();
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  std::string v4 = request_id::mint(c.now()).to_string();
  v4[14] = '4';
  const std::string bad[] = {"not-an-id", upper, v4, v4.substr(0, 35)};
  for (const std::string& id : bad) {
    for (const char* verb : {"PUT", "POST", "GET", "DELETE"}) {
      c.expect(std::string(verb) + " of the id " + show(id),
               c.make(verb, id, std::string(verb) == "PUT" ? c.body() : ""),
               {400, "invalid-request-id"});
    }
  }
  return c.finish();
}

case_result malformed_requests(target& t, const run_options& o) {
  checks c(t, o, "black-box/malformed-requests");
  const std::string id = c.fresh_id(), body = c.body();
  request patch = c.make("PATCH", id, body);
  const answer a = c.expect("PATCH", patch, {405, "method-not-allowed"});
  if (a.status == 405 && a.header("allow").empty())
    c.fail("405 without Allow", patch, a);
  request anonymous{"PUT", with_id(o.route, id), {{"Content-Type", "application/json"}}, body};
  const answer no_key = c.expect("PUT without a key", anonymous, {401, "unauthorized"});
  if (no_key.status == 401 && no_key.header("www-authenticate").find("Bearer") == std::string::npos)
    c.fail("401 without WWW-Authenticate: Bearer", anonymous, no_key);
  request wrong = anonymous;
  wrong.headers.emplace_back("Authorization", "Bearer not-a-key-of-this-server");
  c.expect("PUT with an unknown key", wrong, {401, "unauthorized"});
  request nowhere{"GET", "/no-such-route-of-exactly-conformance/x", {}, ""};
  c.expect("an unknown route without a key (authentication comes first)", nowhere,
           {401, "unauthorized"});
  c.expect("the PUT with the key (nothing was staged before)", c.make("PUT", id, body), {201});

  const std::string host = "Host: " + t.at.host + "\r\n";
  const std::string auth = "Authorization: Bearer " + o.key + "\r\n";
  const std::string target = with_id(o.route, c.fresh_id());
  const std::string too_large =
      "PUT " + target + " HTTP/1.1\r\n" + host + auth +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(o.max_body_bytes + 1) +
      "\r\nExpect: 100-continue\r\n\r\n";
  c.check("a body over the limit (--max-body-bytes), announced",
          request{"PUT", target, {{"Content-Length", std::to_string(o.max_body_bytes + 1)}}, ""},
          c.conn().raw(too_large), {413, "payload-too-large"});
  const std::string no_host = "GET " + with_id(o.route, id) + " HTTP/1.1\r\n" + auth + "\r\n";
  c.check("HTTP/1.1 without Host", request{"GET", with_id(o.route, id), {{"Host", "(none)"}}, ""},
          c.conn().raw(no_host), {400, "bad-request"});
  c.check("not HTTP", request{"(raw)", "NOT HTTP AT ALL", {}, ""},
          c.conn().raw("NOT HTTP AT ALL\r\n\r\n"), {400, "bad-request"});
  return c.finish();
}

}  // namespace

const std::vector<black_box_case>& black_box_cases() {
  static const std::vector<black_box_case> cases = [] {
    std::vector<black_box_case> v{{"black-box/lifecycle", lifecycle}};
    for (const state_row& row : state_rows) {
      v.push_back({std::string("black-box/state-") + row.name,
                   [&row](target& t, const run_options& o) { return state_case(t, o, row); }});
    }
    v.push_back({"black-box/ownership", ownership});
    v.push_back({"black-box/concurrent-posts", concurrent_posts});
    v.push_back({"black-box/pipelining", pipelining});
    v.push_back({"black-box/malformed-ids", malformed_ids});
    v.push_back({"black-box/malformed-requests", malformed_requests});
    return v;
  }();
  return cases;
}

}  // namespace exactly::conformance
