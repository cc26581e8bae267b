// Replays proto-spec/vectors against a target (see vector_runner.hpp).
#include "vector_runner.hpp"

#include "case_support.hpp"

#include <exactly/common/clock.hpp>
#include <exactly/common/http_date.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

namespace exactly::conformance {
namespace {

using json = nlohmann::json;

// The server clock just before and just after a request step.
struct step_time {
  std::int64_t before_ms = 0, after_ms = 0;
};

std::string padded_body(std::size_t size) {
  std::string head = R"({"status":200,"reply":")";
  const std::string tail = R"("})";
  if (size < head.size() + tail.size())
    throw std::invalid_argument("body_pad_to too small");
  return head + std::string(size - head.size() - tail.size(), 'x') + tail;
}

// Whether `body` is a payload the echo route accepts and runs without throwing.
bool echo_valid(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("status") ||
      !j.at("status").is_number_integer() || j.contains("parse_throws"))
    return false;
  const auto s = j.at("status").get<std::int64_t>();
  return s >= 100 && s <= 599 && !(j.contains("fail") && j.at("fail") != json(false));
}

bool echo_failing(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("fail") && j.at("fail") == json(true);
}

// The first key of the object `j` not in `allowed`, described for a failure, or "".
std::string unknown_key(const json& j, std::initializer_list<std::string_view> allowed,
                        const std::string& where) {
  if (!j.is_object())
    return where + " is not a JSON object";
  for (const auto& [key, value] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const std::string_view a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      return where + ": unknown key \"" + key + "\" (allowed: " + list + ")";
    }
  }
  return "";
}

// What is wrong with the shape of case `c` (an unknown key of a case, step, expect, retention or
// expect_rows, a step of no known type), or "": a misspelt key must not make a check vanish.
std::string malformed(const json& c) {
  if (std::string why = unknown_key(c, {"name", "steps", "description"}, "the case"); !why.empty())
    return why;
  if (!c.contains("steps") || !c.at("steps").is_array() || c.at("steps").empty())
    return "the case has no steps";
  int index = 0;
  for (const json& step : c.at("steps")) {
    const std::string where = "step " + std::to_string(index++);
    std::string why;
    if (!step.is_object())
      return where + " is not a JSON object";
    if (step.contains("method")) {
      why = unknown_key(step,
                        {"method", "id", "raw_id", "path", "principal", "body", "body_pad_to",
                         "content_type", "label", "expect"},
                        where);
      if (why.empty() && !step.contains("expect"))
        why = where + ": a request step needs \"expect\"";
      if (why.empty() && step.contains("id") + step.contains("raw_id") + step.contains("path") != 1)
        why = where + ": a request step needs exactly one of \"id\", \"raw_id\", \"path\"";
      if (why.empty())
        why = unknown_key(step.at("expect"),
                          {"status", "outcome", "problem", "retention", "body", "content_type",
                           "headers", "executions"},
                          where + " expect");
      if (why.empty() && step.at("expect").contains("retention") &&
          !step.at("expect").at("retention").is_null())
        why = unknown_key(step.at("expect").at("retention"), {"plus_seconds", "since"},
                          where + " expect.retention");
      if (why.empty() && !step.at("expect").contains("status"))
        why = where + ": expect needs \"status\"";
    } else if (step.contains("advance_clock_seconds")) {
      why = unknown_key(step, {"advance_clock_seconds"}, where);
    } else if (step.contains("sweep")) {
      why = unknown_key(step, {"sweep"}, where);
    } else if (step.contains("expect_rows")) {
      why = unknown_key(step, {"expect_rows"}, where);
      if (why.empty())
        why = unknown_key(step.at("expect_rows"), {"staged", "executed", "tombstone"},
                          where + " expect_rows");
    } else {
      why = where +
            ": no step type (one of \"method\", \"advance_clock_seconds\", \"sweep\", "
            "\"expect_rows\") in " +
            step.dump();
    }
    if (!why.empty())
      return why;
  }
  return "";
}

// Why case `c` cannot run against `t` with `o`, or "".
std::string skip_reason(const json& c, const target& t, const run_options& o) {
  for (const json& step : c.at("steps")) {
    if (!t.control && (step.contains("advance_clock_seconds") || step.contains("sweep")))
      return "moves the clock or sweeps: needs the test-control interface (--test-control-key)";
    if (!t.control && step.contains("expect_rows"))
      return "counts rows: needs the test-control interface (--test-control-key)";
    if (!step.contains("method"))
      continue;
    if (step.value("principal", "alice") == "bob" && o.second_key.empty())
      return "needs a second principal (--second-key)";
    const json& expect = step.at("expect");
    const std::string problem =
        expect.contains("problem") && expect.at("problem").is_string() ? expect.at("problem") : "";
    if (!o.spec_limits && (step.contains("body_pad_to") || problem == "too-many-staged" ||
                           problem == "payload-too-large"))
      return "depends on the limits of proto-spec section 11 (--spec-limits)";
    if (o.echo)
      continue;
    const std::string body = step.value("body", "");
    if (step.contains("body_pad_to"))
      return "pads an echo payload to a size: needs the echo route (run without --body)";
    if (echo_failing(body) || problem == "execution-failed")
      return "needs the echo route's failing logic (run without --body)";
    if (step.at("method") == "PUT" && !echo_valid(body) && o.invalid_body.empty())
      return "PUTs a payload the route must refuse: needs --invalid-body";
  }
  return "";
}

class case_run {
 public:
  case_run(const json& c, target& t, const run_options& o) : c_(c), t_(t), o_(o), conn_(t.at) {
    if (c.is_object() && c.contains("name") && c.at("name").is_string())
      out_.name = c.at("name").get<std::string>();
  }

  case_result run() {
    if (const std::string why = malformed(c_); !why.empty()) {
      out_.result = verdict::fail;
      out_.failures.push_back("malformed vector case: " + why);
      return out_;
    }
    if (const std::string why = skip_reason(c_, t_, o_); !why.empty()) {
      out_.result = verdict::skip;
      out_.detail = why;
      return out_;
    }
    try {
      prepare_rows();
      for (const json& step : c_.at("steps")) {
        step_ = step;
        run_step(step);
        ++index_;
      }
    } catch (const std::exception& e) {
      // The case fails with what it found so far, and its ids are cleaned up all the same, so
      // that its staged rows do not count against the next cases' limits.
      out_.failures.push_back("step " + std::to_string(index_) +
                              ": the case could not run: " + e.what());
    }
    if (!t_.fresh)
      clean_up();
    out_.result = !out_.failures.empty() ? verdict::fail
                  : weaker_              ? verdict::partial
                                         : verdict::pass;
    std::string notes;
    for (const std::string& n : notes_)
      notes += (notes.empty() ? "" : "; ") + n;
    out_.detail = notes;
    return std::move(out_);
  }

 private:
  std::int64_t now() {
    if (t_.control) {
      if (const auto ms = t_.control->now_ms())
        return *ms;
    }
    return system_now_ms();
  }

  // A failed check of the current step, with its request and answer when it has them.
  void fail(const std::string& what) {
    std::string f = "step " + std::to_string(index_) + ": " + what;
    if (has_exchange_)
      f += "\n  request: " + describe(req_) + "\n  answer: " + describe(ans_);
    else
      f += "\n  step: " + step_.dump();
    out_.failures.push_back(std::move(f));
  }
  template <class A, class B>
  void expect_eq(const A& got, const B& want, const std::string& what) {
    if (!(got == want))
      fail(what + ": want " + show(want) + ", got " + show(got));
  }

  // A shared server: sweeps of this case would purge other cases' rows, so first everything
  // old is purged, and rows are counted from where they stand.
  void prepare_rows() {
    if (!t_.control || t_.fresh)
      return;
    const auto& steps = c_.at("steps");
    const bool sweeps =
        std::any_of(steps.begin(), steps.end(), [](const json& s) { return s.contains("sweep"); });
    const bool counts = std::any_of(steps.begin(), steps.end(),
                                    [](const json& s) { return s.contains("expect_rows"); });
    if (sweeps) {
      t_.control->advance_seconds(2 * 3600 + 60);
      t_.control->sweep();
    }
    if (counts) {
      if (const auto r = t_.control->rows())
        baseline_ = *r;
      notes_.insert("rows counted from the case's start");
    }
  }

  std::string id_for(const std::string& name) {
    if (const auto it = ids_.find(name); it != ids_.end())
      return it->second;
    std::int64_t at = now();
    if (name == "@old")
      at -= 2 * 3600 * 1000;
    if (name == "@future")
      at += 3600 * 1000;
    if (name == "@almost-old")
      at -= 50 * 60 * 1000;
    return ids_[name] = request_id::mint(at).to_string();
  }

  std::string route_target(const std::string& id) const { return with_id(o_.route, id); }

  std::string body_for(const json& step) {
    std::string body = step.value("body", "");
    if (step.contains("body_pad_to"))
      body = padded_body(step.at("body_pad_to").get<std::size_t>());
    if (o_.echo || step.at("method") != "PUT")
      return body;
    if (!echo_valid(body))
      return o_.invalid_body;
    auto [it, fresh] = bodies_.try_emplace(body, std::string());
    if (fresh)
      it->second = numbered_body(o_.body);
    return it->second;
  }

  void run_step(const json& step) {
    has_exchange_ = false;
    if (step.contains("advance_clock_seconds")) {
      if (!t_.control->advance_seconds(step.at("advance_clock_seconds").get<std::int64_t>()))
        fail("the test-control interface did not advance the clock");
      return;
    }
    if (step.contains("sweep")) {
      if (!t_.control->sweep())
        fail("the test-control interface did not sweep");
      return;
    }
    if (step.contains("expect_rows")) {
      check_rows(step.at("expect_rows"));  // skip_reason: there are controls
      return;
    }
    request_step(step);
  }

  void check_rows(const json& want) {
    const auto got = t_.control->rows();
    if (!got) {
      fail("the test-control interface did not count rows");
      return;
    }
    if (want.contains("staged"))
      expect_eq(got->staged - baseline_.staged, want.at("staged").get<std::int64_t>(),
                "staged rows");
    if (want.contains("executed"))
      expect_eq(got->executed - baseline_.executed, want.at("executed").get<std::int64_t>(),
                "executed rows");
    if (want.contains("tombstone"))
      expect_eq(got->tombstone - baseline_.tombstone, want.at("tombstone").get<std::int64_t>(),
                "tombstone rows");
  }

  void request_step(const json& step) {
    std::string id;
    req_ = request{step.at("method").get<std::string>(), "", {}, ""};
    if (step.contains("path")) {
      req_.target = step.at("path");
    } else {
      id = step.contains("raw_id") ? step.at("raw_id").get<std::string>()
                                   : id_for(step.at("id").get<std::string>());
      req_.target = route_target(id);
    }
    const std::string principal = step.value("principal", "alice");
    if (principal == "alice")
      req_.headers.emplace_back("Authorization", "Bearer " + o_.key);
    else if (principal == "bob")
      req_.headers.emplace_back("Authorization", "Bearer " + o_.second_key);
    else if (principal == "wrong")
      req_.headers.emplace_back("Authorization", "Bearer not-a-key");
    else if (principal != "none")
      throw std::runtime_error("unknown principal " + principal);
    req_.body = body_for(step);
    req_.headers.emplace_back("Content-Type", step.value("content_type", "application/json"));

    step_time here{now(), 0};
    ans_ = conn_.send(req_);
    here.after_ms = now();
    has_exchange_ = true;
    if (step.contains("label"))
      labelled_[step.at("label").get<std::string>()] = here;
    if (ans_.status == 0) {
      fail("no answer");
      return;
    }
    check_answer(step.at("expect"), id, here);
  }

  void check_answer(const json& expect, const std::string& id, step_time here) {
    const std::string outcome = ans_.header("exactly-once-outcome");
    const bool business =
        !o_.echo && expect.contains("outcome") && expect.at("outcome").is_string();
    if (outcome == protocol::outcome_executed)
      ++executed_seen_[id];
    if (business) {
      // Not the echo route: the business answer is whatever the route stored first.
      notes_.insert(
          "business answers compared with the first stored one (--body given, not the echo route)");
      const std::string stored =
          std::to_string(ans_.status) + " " + ans_.header("content-type") + " " + ans_.body;
      auto [it, first] = stored_.try_emplace(id, stored);
      if (!first)
        expect_eq(stored, it->second, "the stored answer (status, Content-Type, body)");
    } else {
      expect_eq(ans_.status, expect.at("status").get<unsigned>(), "status");
    }
    if (expect.contains("outcome")) {
      if (expect.at("outcome").is_null()) {
        if (ans_.has_header("exactly-once-outcome"))
          fail("Exactly-Once-Outcome must be absent");
      } else {
        expect_eq(outcome, expect.at("outcome").get<std::string>(), "Exactly-Once-Outcome");
      }
    }
    if (expect.contains("problem") && !business)
      check_problem(expect.at("problem"));
    if (expect.contains("retention"))
      check_retention(expect.at("retention"), here);
    if (expect.contains("body") && !business)
      expect_eq(ans_.body, expect.at("body").get<std::string>(), "body");
    if (expect.contains("content_type") && !business)
      expect_eq(ans_.header("content-type"), expect.at("content_type").get<std::string>(),
                "Content-Type");
    if (expect.contains("headers")) {
      for (const auto& [name, value] : expect.at("headers").items())
        expect_eq(ans_.header(name), value.get<std::string>(), "header " + name);
    }
    if (expect.contains("executions"))
      check_executions(id, expect.at("executions").get<std::int64_t>());
  }

  void check_problem(const json& want) {
    const std::string type = ans_.header("content-type");
    if (want.is_null()) {
      if (type == protocol::problem_content_type)
        fail("must not be a problem");
      return;
    }
    expect_eq(type, std::string(protocol::problem_content_type), "Content-Type");
    const auto p = parse_problem(ans_.body);
    if (!p) {
      fail("the body is not a problem");
      return;
    }
    expect_eq(std::string(p->name()), want.get<std::string>(), "problem");
    expect_eq(p->status, ans_.status, "the problem's status");
    if (ans_.has_header("exactly-once-outcome"))
      fail("a problem must not carry Exactly-Once-Outcome");
    if (ans_.has_header("exactly-once-retention"))
      fail("a problem must not carry Exactly-Once-Retention");
  }

  void check_retention(const json& want, step_time here) {
    if (want.is_null()) {
      if (ans_.has_header("exactly-once-retention"))
        fail("Exactly-Once-Retention must be absent");
      return;
    }
    step_time at = here;
    if (want.contains("since")) {
      const auto it = labelled_.find(want.at("since").get<std::string>());
      if (it == labelled_.end())
        throw std::runtime_error("no step labelled " + want.at("since").dump());
      at = it->second;
    }
    const std::int64_t slack = t_.control ? 0 : o_.clock_tolerance_ms;
    if (slack > 0)
      notes_.insert("retention dates within " + std::to_string(slack) + " ms of our clock");
    const std::int64_t plus_ms = want.at("plus_seconds").get<std::int64_t>() * 1000;
    if (!ans_.has_header("exactly-once-retention")) {
      fail("Exactly-Once-Retention missing");
      return;
    }
    const auto date = parse_http_date(ans_.header("exactly-once-retention"));
    if (!date) {
      fail("Exactly-Once-Retention is not an IMF-fixdate");
      return;
    }
    const std::int64_t lo = (at.before_ms - slack + plus_ms) / 1000 * 1000;
    const std::int64_t hi = (at.after_ms + slack + plus_ms) / 1000 * 1000;
    if (*date < lo || *date > hi)
      fail("Exactly-Once-Retention: want between " + format_http_date(lo) + " and " +
           format_http_date(hi));
  }

  void check_executions(const std::string& id, std::int64_t want) {
    std::optional<std::int64_t> got;
    if (t_.control)
      got = t_.control->executions(id);
    if (!got) {
      // Weaker: the runner's own "executed" answers, not the server's count (pass*).
      notes_.insert(
          "executions NOT counted by the server: counted from this runner's Exactly-Once-Outcome "
          "answers only");
      weaker_ = true;
      got = executed_seen_[id];
    }
    expect_eq(*got, want, "executions of the id");
  }

  // Leaves no staged or executed rows of this case behind on a shared server.
  void clean_up() {
    for (const auto& [name, id] : ids_) {
      for (const std::string* key : {&o_.key, &o_.second_key}) {
        if (!key->empty())
          conn_.send(request{"DELETE", route_target(id), {{"Authorization", "Bearer " + *key}}});
      }
    }
  }

  const json& c_;
  target& t_;
  const run_options& o_;
  http_connection conn_;
  case_result out_;
  std::set<std::string> notes_;
  std::map<std::string, std::string> ids_;
  std::map<std::string, step_time> labelled_;
  std::map<std::string, std::string> bodies_;  // vector body -> the body sent (not echo)
  std::map<std::string, std::string> stored_;  // id -> the first stored answer (not echo)
  std::map<std::string, std::int64_t> executed_seen_;
  row_counts baseline_{};
  json step_;
  int index_ = 0;
  request req_;
  answer ans_;
  bool has_exchange_ = false;
  bool weaker_ = false;  // a check was weaker than the vector asks: pass* at best
};

}  // namespace

case_result run_vector_case(const json& c, target& t, const run_options& o) {
  return case_run(c, t, o).run();
}

std::vector<std::filesystem::path> vector_files(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("no vectors directory " + dir.string());
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> vector_case_names(const std::filesystem::path& file) {
  std::ifstream in(file);
  const json doc = json::parse(in, nullptr, false);
  std::vector<std::string> out;
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("cases") ||
      !doc.at("cases").is_array() || doc.at("cases").empty()) {
    out.push_back(file.stem().string() + "/(file)");
    return out;
  }
  int index = 0;
  for (const json& c : doc.at("cases")) {
    out.push_back(file.stem().string() + "/" +
                  (c.is_object() && c.contains("name") && c.at("name").is_string()
                       ? c.at("name").get<std::string>()
                       : "(case " + std::to_string(index) + ")"));
    ++index;
  }
  return out;
}

std::vector<case_result> run_vector_file(const std::filesystem::path& file,
                                         const target_factory& make, const run_options& o,
                                         const std::function<bool(const std::string&)>& wanted) {
  std::vector<case_result> out;
  std::ifstream in(file);
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("cases") ||
      !doc.at("cases").is_array() || doc.at("cases").empty()) {
    // One failing entry for the file: its cases cannot run, and the run must not pass.
    case_result r{file.stem().string() + "/(file)", verdict::fail, "", {}};
    r.failures.push_back(file.string() + ": not a vector file with cases (JSON {\"cases\":[...]})");
    if (!wanted || wanted(r.name))
      out.push_back(std::move(r));
    return out;
  }
  int index = 0;
  for (const json& c : doc.at("cases")) {
    const std::string name = file.stem().string() + "/" +
                             (c.is_object() && c.contains("name") && c.at("name").is_string()
                                  ? c.at("name").get<std::string>()
                                  : "(case " + std::to_string(index) + ")");
    ++index;
    if (wanted && !wanted(name))
      continue;
    case_result r;
    try {
      auto t = make();
      r = run_vector_case(c, *t, o);
    } catch (const std::exception& e) {
      // A malformed step (a wrong type, an unknown principal or label) fails this case only.
      r = case_result{
          name, verdict::fail, "", {std::string("the case could not run: ") + e.what()}};
    }
    r.name = name;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace exactly::conformance
