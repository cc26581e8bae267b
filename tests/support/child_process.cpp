#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

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

namespace {

// `environ` with EXACTLY_CRASH_AT=`crash_at` in place of any it had (nothing added when empty).
std::vector<std::string> environment_with_crash_at(const std::string& crash_at) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("EXACTLY_CRASH_AT="))
      env.emplace_back(*e);
  }
  if (!crash_at.empty())
    env.push_back("EXACTLY_CRASH_AT=" + crash_at);
  return env;
}

// What came of waiting for a child's first line.
struct line_read {
  std::optional<std::string> line;  // without its line end; nullopt if none came
  bool ended = false;               // the child closed its stdout first
};

// The first line `fd` gives within `timeout`; a line over 64 KiB counts as none.
line_read first_line_of(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || line.size() > 64 * 1024)
      return {};
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;  // a signal handler ran (exactly-bench has some): the deadline still holds
    if (ready <= 0)
      return {};
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return {.line = std::nullopt, .ended = true};
    if (c == '\n')
      break;
    line += c;
  }
  while (!line.empty() && line.back() == '\r')
    line.pop_back();
  return {.line = std::move(line)};
}

}  // namespace

child_process::child_process(const std::vector<std::string>& argv, const std::string& crash_at,
                             bool wait_for_line, std::chrono::milliseconds line_timeout) {
  // Everything the child needs is made here: the tests start children while other threads run,
  // and a forked copy of the process must not allocate (a lock another thread held at the fork
  // stays held in it). posix_spawn does no more than dup2 and exec in the child.
  std::vector<std::string> env = environment_with_crash_at(crash_at);
  std::vector<char*> args, envp;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (std::string& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)  // no other child inherits either end
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  int spawned = posix_spawn_file_actions_init(&actions);
  if (spawned == 0) {
    spawned = posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    if (spawned == 0)
      spawned = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
  }
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    pid_ = -1;
    throw std::runtime_error(argv[0] + ": cannot start it: " + std::strerror(spawned));
  }
  line_read read;
  try {
    if (wait_for_line)
      read = first_line_of(out[0], line_timeout);
  } catch (...) {
    ::close(out[0]);
    kill_hard();
    throw;
  }
  ::close(out[0]);  // later output goes nowhere; children print only their first line on stdout
  if (wait_for_line && !read.line) {
    if (read.ended) {
      // It closed its stdout, and is given 2 s to exit before it is killed.
      for (int i = 0; i < 200; ++i) {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            info.si_pid != 0)
          break;  // it has exited (still to be reaped), or cannot be waited for
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      const int status = kill_hard();  // nothing to kill if it has exited: its own status
      throw std::runtime_error(argv[0] + " ended (status " + std::to_string(status) +
                               ") before printing a line");
    }
    kill_hard();
    throw std::runtime_error(argv[0] + " printed no line within " +
                             std::to_string(line_timeout.count()) + " ms (killed)");
  }
  first_line_ = read.line.value_or("");
}

child_process::~child_process() {
  if (pid_ > 0)
    kill_hard();
}

int child_process::kill_hard() {
  if (pid_ <= 0)
    throw std::logic_error("no child to kill");
  ::kill(pid_, SIGKILL);
  return wait_exit();
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
