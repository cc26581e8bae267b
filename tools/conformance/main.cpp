// exactly-conformance: runs the protocol's test vectors and the built-in black-box cases against a
// running server and prints a pass/fail table; exit status 0 when a case passed and none failed,
// 1 when a case failed or none passed (nothing checked is not a pass), 2 on a usage error.

#include "black_box.hpp"
#include "table.hpp"
#include "target.hpp"
#include "vector_runner.hpp"

#include <exactly/common/url.hpp>

#include <CLI/CLI.hpp>
#include <layered_config.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace {

using namespace exactly::conformance;

// The first line of `path`, without trailing whitespace. Throws std::runtime_error.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line))
    throw std::runtime_error("cannot read " + path);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
    line.pop_back();
  return line;
}

// The server's base URL, http[s]://HOST[:PORT] (80 or 443 without a port, IPv6 in brackets), into
// `at`. Throws std::invalid_argument saying what is wrong, a path included: --route names it.
void apply_base_url(const std::string& url, endpoint& at) {
  const exactly::http_url u = exactly::parse_http_url(url);
  if (u.target != "/")
    throw std::invalid_argument("--base-url '" + url +
                                "' has a path or query; give only http[s]://HOST[:PORT] (the "
                                "route is --route)");
  at.tls = u.https;
  at.host = u.host;
  at.port = u.port;
}

// The installed vectors beside this program (PREFIX/bin -> PREFIX/share/exactly/vectors), else
// those of the configured install prefix, else the source tree's (a build that is not installed).
std::string default_vectors_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = exe.parent_path().parent_path() / "share" / "exactly" / "vectors";
    if (std::filesystem::is_directory(beside))
      return beside.string();
  }
  if (std::filesystem::is_directory(EXACTLY_INSTALLED_VECTORS_DIR))
    return EXACTLY_INSTALLED_VECTORS_DIR;
  return EXACTLY_SOURCE_VECTORS_DIR;
}

// The one running server, handed to every case.
struct shared_target : target {};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "exactly-conformance: checks a running server against the exactly-once protocol "
      "(proto-spec/README.md): its test vectors (proto-spec/vectors; the cases that move the "
      "clock, sweep or count rows need the test-control interface, else they are skipped) and "
      "black-box cases (the lifecycle; PUT/POST/GET/DELETE of each state reachable without moving "
      "the clock: unknown, staged, executed, deleted, unknown-old, unknown-future; ownership; "
      "concurrent POSTs; pipelining; malformed ids and requests). Prints a table case | result | "
      "detail and, for each failure, the request and the answer. Results: pass, pass* (held, but "
      "a check was weaker than asked: see the detail; never counted as a pass), FAIL, skip. Exit "
      "status: 0 at least one case passed and none failed, 1 a case failed or none passed (e.g. "
      "no case ran, or no vector files), 2 usage error."};
  exactly::cli_config::layered_config layers(app);
  std::string base_url;
  run_options o;
  std::string key_file, second_key_file, control_key, control_key_file;
  endpoint at;
  std::string vectors_dir;
  std::vector<std::string> only;
  bool list = false, no_vectors = false, no_black_box = false;
  app.add_option("--base-url", base_url,
                 "the server, http[s]://HOST[:PORT] (required but with --list)");
  app.add_option("--route", o.route,
                 "the interaction route with {id} where the request id goes (default: the echo "
                 "route of the spec's vectors)")
      ->capture_default_str();
  layers.secret(
      app.add_option("--key", o.key, "principal A's API key (Authorization: Bearer KEY)"));
  app.add_option("--key-file", key_file, "read principal A's API key from the file's first line");
  layers.secret(
      app.add_option("--second-key", o.second_key,
                     "principal B's API key: enables the ownership cases (else skipped)"));
  app.add_option("--second-key-file", second_key_file, "read principal B's key from a file");
  layers.secret(
      app.add_option("--test-control-key", control_key,
                     "key of the server's test-control interface (proto-spec section 12, off by "
                     "default): enables the cases that move the clock, sweep or count rows (else "
                     "skipped) and exact execution counts"));
  app.add_option("--test-control-key-file", control_key_file,
                 "read the test-control key from a file");
  app.add_option("--ca-file", at.ca_file, "https: trusted CA certificates (PEM)");
  app.add_flag("--insecure", at.insecure, "https: do not verify the server's certificate");
  app.add_option("--client-cert", at.client_cert_file, "https: client certificate (PEM)");
  app.add_option("--client-key", at.client_key_file, "https: the client certificate's key (PEM)");
  app.add_option("--body", o.body,
                 "a valid PUT body for the route, '{n}' replaced by a fresh number so bodies "
                 "differ; without it the route must be the spec's echo route (section 11)");
  app.add_option("--invalid-body", o.invalid_body,
                 "with --body: a PUT body the route refuses with 422 (else such vectors are "
                 "skipped)");
  app.add_flag("--spec-limits", o.spec_limits,
               "the server has the limits of the spec's section 11 (body 1024 bytes; 3 staged "
               "requests and 2048 staged bytes per principal): runs the vectors that depend on "
               "them (else skipped)");
  app.add_option("--max-body-bytes", o.max_body_bytes,
                 "the server's body limit; the 413 case announces one byte more")
      ->capture_default_str();
  app.add_option("--clock-tolerance-ms", o.clock_tolerance_ms,
                 "without test control: how far the server's clock may be from ours when "
                 "checking Exactly-Once-Retention dates")
      ->capture_default_str();
  app.add_option("--concurrency", o.concurrency, "connections POSTing one id at once")
      ->capture_default_str();
  std::int64_t timeout_ms = 10000;
  app.add_option("--timeout-ms", timeout_ms, "per-request timeout")->capture_default_str();
  app.add_option("--vectors", vectors_dir,
                 "directory of the vector files (default: the installed proto-spec vectors)");
  app.add_option("--only", only, "run only cases whose name contains this (repeatable)");
  app.add_flag("--no-vectors", no_vectors, "skip the vector files");
  app.add_flag("--no-black-box", no_black_box, "skip the built-in black-box cases");
  app.add_flag("--list", list, "list the cases and exit");
  std::string json_file;
  app.add_option("--json", json_file, "also write the results as JSON to this file");
  layers.command_line_only(app.get_option("--list"));
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;

  try {
    at.timeout = std::chrono::milliseconds(timeout_ms);
    if (base_url.empty() && !list)
      throw std::invalid_argument("--base-url is required");
    if (!base_url.empty())
      apply_base_url(base_url, at);
    if (!key_file.empty())
      o.key = first_line(key_file);
    if (!second_key_file.empty())
      o.second_key = first_line(second_key_file);
    if (!control_key_file.empty())
      control_key = first_line(control_key_file);
    if (o.key.empty() && !list)
      throw std::invalid_argument("--key or --key-file is required");
    if (o.route.find("{id}") == std::string::npos || o.route.front() != '/')
      throw std::invalid_argument("--route must be a path with {id}");
    o.echo = o.body.empty();
    if (!o.invalid_body.empty() && o.echo)
      throw std::invalid_argument("--invalid-body needs --body");
    if (vectors_dir.empty())
      vectors_dir = default_vectors_dir();
  } catch (const std::exception& e) {
    std::cerr << "exactly-conformance: " << e.what() << '\n';
    return 2;
  }

  auto wanted = [&only](const std::string& name) {
    if (only.empty())
      return true;
    return std::any_of(only.begin(), only.end(),
                       [&](const std::string& s) { return name.find(s) != std::string::npos; });
  };

  try {
    std::optional<http_controls> control;
    if (!control_key.empty() && !list) {
      control.emplace(at, control_key);
      std::string why;
      if (!control->available(why)) {
        std::cerr << "exactly-conformance: the test-control interface does not answer: " << why
                  << '\n';
        return 1;
      }
    }
    shared_target shared;
    shared.at = at;
    shared.control = control ? &*control : nullptr;
    const target_factory one = [&shared]() -> std::unique_ptr<target> {
      auto t = std::make_unique<shared_target>();
      t->at = shared.at;
      t->control = shared.control;
      return t;
    };

    std::vector<case_result> results;
    if (!no_vectors) {
      const auto files = vector_files(vectors_dir);
      if (files.empty()) {
        std::cerr << "exactly-conformance: no vector files (*.json) in " << vectors_dir
                  << " (--no-vectors to run without them)\n";
        return 1;
      }
      for (const auto& file : files) {
        if (list) {
          for (const std::string& name : vector_case_names(file)) {
            if (wanted(name))
              std::cout << name << '\n';
          }
          continue;
        }
        for (case_result& r : run_vector_file(file, one, o, wanted))
          results.push_back(std::move(r));
      }
    }
    if (!no_black_box) {
      for (const black_box_case& c : black_box_cases()) {
        if (!wanted(c.name))
          continue;
        if (list) {
          std::cout << c.name << '\n';
          continue;
        }
        try {
          auto t = one();
          results.push_back(c.run(*t, o));
        } catch (const std::exception& e) {
          results.push_back(
              {c.name, verdict::fail, "", {std::string("the case could not run: ") + e.what()}});
        }
      }
    }
    if (list)
      return 0;
    const totals t = print_report(std::cout, results);
    if (!json_file.empty()) {
      std::ofstream json_out(json_file);
      write_json(json_out, results);
      if (!json_out)
        throw std::runtime_error("cannot write " + json_file);
    }
    if (t.failed > 0)
      return 1;
    if (t.passed == 0) {
      std::cerr << "exactly-conformance: no case passed ("
                << (results.empty() ? "no case ran" : "every case was skipped or pass*")
                << "): nothing was checked in full\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "exactly-conformance: " << e.what() << '\n';
    return 2;
  }
}
