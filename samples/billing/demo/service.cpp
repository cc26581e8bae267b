#include "service.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace exactly::samples::demo {

service::service(std::string name, std::vector<std::string> argv, std::filesystem::path dir)
    : name_(std::move(name)),
      argv_(std::move(argv)),
      out_(dir / (name_ + ".out")),
      log_(dir / (name_ + ".log")) {}

service::~service() {
  if (running())
    kill_hard();
}

std::string service::start(std::chrono::milliseconds timeout) {
  if (running())
    throw std::logic_error(name_ + " is already running");
  const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int log = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0 || log < 0)
    throw std::runtime_error("cannot open the output files of " + name_);
  // Made before the fork: a forked copy of a process with threads must not allocate.
  std::vector<char*> args;
  for (const std::string& a : argv_)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  ::close(out);
  ::close(log);
  if (pid_ < 0)
    throw std::runtime_error("cannot fork " + name_);

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::string text = output();
    if (const auto nl = text.find('\n'); nl != std::string::npos)
      return text.substr(0, nl);
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error(name_ + " exited at start:\n" + log_tail());
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill_hard();
      throw std::runtime_error(name_ + " printed nothing in time:\n" + log_tail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void service::kill_hard() {
  if (!running())
    return;
  ::kill(pid_, SIGKILL);
  wait_exit();
}

int service::stop() {
  if (!running())
    return 0;
  ::kill(pid_, SIGTERM);
  return wait_exit();
}

int service::wait_exit() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string service::output() const {
  std::ifstream in(out_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string service::log_tail() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  const std::string all = s.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace exactly::samples::demo
