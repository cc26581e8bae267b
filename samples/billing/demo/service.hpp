#pragma once
// One service of the demo as a child process: its stdout goes to <dir>/<name>.out (fresh at each
// start) and its stderr to <dir>/<name>.log. It can be SIGKILLed and started again.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace exactly::samples::demo {

class service {
 public:
  service(std::string name, std::vector<std::string> argv, std::filesystem::path dir);
  ~service();  // SIGKILLs a running child
  service(const service&) = delete;
  service& operator=(const service&) = delete;

  // Starts the child and returns its first line of output once printed. Throws
  // std::runtime_error (with the end of its log) if it exits or stays silent for `timeout`.
  std::string start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // SIGKILL, then reaps the child.
  void kill_hard();
  // SIGTERM, then the exit status (128 + signal when a signal ended it).
  int stop();
  bool running() const { return pid_ > 0; }
  // Replaces the command line used by later starts (to pin a port chosen at the first start).
  void set_argv(std::vector<std::string> argv) { argv_ = std::move(argv); }
  const std::string& name() const { return name_; }
  // Everything the child printed on stdout since its last start.
  std::string output() const;

 private:
  int wait_exit();
  std::string log_tail() const;

  std::string name_;
  std::vector<std::string> argv_;
  std::filesystem::path out_, log_;
  pid_t pid_ = -1;
};

}  // namespace exactly::samples::demo
