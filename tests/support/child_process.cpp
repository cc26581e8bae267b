#include "child_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace exactly::test {

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

captured_run run_captured(const std::string& command) {
  captured_run r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr)
    throw std::runtime_error("popen: " + command);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p))
    r.out.append(buf, n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

child_process::child_process(const std::vector<std::string>& argv, const std::string& crash_at,
                             bool wait_for_line) {
  int out[2];
  if (pipe(out) != 0)
    throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (!crash_at.empty())
      setenv("EXACTLY_CRASH_AT", crash_at.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  if (wait_for_line) {
    char line[256] = {};
    if (!fgets(line, sizeof line, f)) {
      fclose(f);
      throw std::runtime_error(argv[0] + " printed nothing");
    }
    first_line_ = line;
    while (!first_line_.empty() && (first_line_.back() == '\n' || first_line_.back() == '\r'))
      first_line_.pop_back();
  }
  fclose(f);  // later output goes nowhere; children print only their first line on stdout
}

child_process::~child_process() {
  if (pid_ > 0)
    kill_hard();
}

void child_process::kill_hard() {
  if (pid_ <= 0)
    throw std::logic_error("no child to kill");
  ::kill(pid_, SIGKILL);
  wait_exit();
}

int child_process::terminate() {
  if (pid_ <= 0)
    throw std::logic_error("no child to terminate");
  ::kill(pid_, SIGTERM);
  return wait_exit();
}

int child_process::wait_exit() {
  if (pid_ <= 0)
    throw std::logic_error("no child to wait for");  // waitpid(-1) would reap any child
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

// The echo-server's command line; on PostgreSQL with the connections the test asks for.
std::vector<std::string> echo_server_args(const std::string& db, std::uint16_t port,
                                          bool postgres) {
  std::vector<std::string> a = {EXACTLY_ECHO_SERVER,
                                "--listen",
                                "127.0.0.1:" + std::to_string(port),
                                postgres ? "--postgres" : "--db",
                                db,
                                "--open"};
  const char* connections = std::getenv("EXACTLY_TEST_PG_CONNECTIONS");  // as echo_server's
  if (postgres && connections)
    a.insert(a.end(), {"--postgres-connections", connections});
  const char* unflushed_lane = std::getenv("EXACTLY_TEST_PG_UNFLUSHED_LANE");
  if (postgres && unflushed_lane && std::string(unflushed_lane) == "1")
    a.push_back("--postgres-unflushed-lane");
  return a;
}

}  // namespace

echo_server_process::echo_server_process(const std::string& db, std::uint16_t port,
                                         const std::string& crash_at, bool postgres)
    : child_process(echo_server_args(db, port, postgres), crash_at, true) {
  const std::string& s = first_line();
  port_ = static_cast<std::uint16_t>(std::stoi(s.substr(s.rfind(':') + 1)));
}

}  // namespace exactly::test
