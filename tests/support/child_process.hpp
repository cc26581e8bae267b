#pragma once
// A program of the build started as a child process, with EXACTLY_CRASH_AT set when asked and
// removed from what it inherits otherwise.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace exactly::test {

// `s` quoted for /bin/sh.
std::string shell_quoted(const std::string& s);

// How a command ended and what it printed, stdout and stderr together.
struct captured_run {
  int status = -1;  // the exit status; -1 when a signal ended it
  std::string out;
};

// Runs `command` with /bin/sh and waits for it.
captured_run run_captured(const std::string& command);

class child_process {
 public:
  // Starts argv[0] with the arguments; with `wait_for_line`, returns once the child printed its
  // first line on stdout (see first_line(), without its line end). Throws std::runtime_error if it
  // cannot start, or ends or prints no line within `line_timeout` (the child is killed and reaped
  // then). Safe while other threads run (posix_spawn: nothing is allocated in the child).
  child_process(const std::vector<std::string>& argv, const std::string& crash_at = "",
                bool wait_for_line = false,
                std::chrono::milliseconds line_timeout = std::chrono::seconds(60));
  ~child_process();  // SIGKILLs a child still running
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  const std::string& first_line() const { return first_line_; }
  pid_t pid() const { return pid_; }
  // Each of these ends the child and reaps it; afterwards there is no child and they throw.
  // SIGKILL, then the exit status (its own if it had exited already).
  int kill_hard();
  // SIGTERM, then the exit status.
  int terminate();
  // The exit status (128 + signal when killed by a signal).
  int wait_exit();

 private:
  pid_t pid_ = -1;
  std::string first_line_;
};

// The echo-server sample on 127.0.0.1:`port` (0 = any) in open mode, started and ready.
class echo_server_process : public child_process {
 public:
  // `db`: a SQLite file, or with `postgres` a PostgreSQL connection string.
  echo_server_process(const std::string& db, std::uint16_t port, const std::string& crash_at = "",
                      bool postgres = false);
  std::uint16_t port() const { return port_; }

 private:
  std::uint16_t port_ = 0;
};

}  // namespace exactly::test
