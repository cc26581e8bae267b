// The crash tests' harness: what a child is started with, and that a start never waits for ever.

#include <child_process.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace exactly::test {
namespace {

using namespace std::chrono_literals;

// The message of what `start` throws as std::runtime_error; "" if it throws nothing.
template <class F>
std::string error_of(F start) {
  try {
    start();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// EXACTLY_CRASH_AT set in this process for one test.
struct crash_at_in_parent {
  crash_at_in_parent() { ::setenv("EXACTLY_CRASH_AT", "parent", 1); }
  ~crash_at_in_parent() { ::unsetenv("EXACTLY_CRASH_AT"); }
};

TEST(child_process, crash_at_is_the_childs_only_and_not_inherited) {
  const crash_at_in_parent parent;
  child_process set(
      {"/bin/sh", "-c", "echo \"$(env | grep -c '^EXACTLY_CRASH_AT=') $EXACTLY_CRASH_AT\""},
      "server.somewhere", true);
  EXPECT_EQ(set.first_line(), "1 server.somewhere");
  EXPECT_EQ(set.wait_exit(), 0);
  child_process unset({"/bin/sh", "-c", "echo \"at=${EXACTLY_CRASH_AT-unset}\""}, "", true);
  EXPECT_EQ(unset.first_line(), "at=unset");
  EXPECT_EQ(unset.wait_exit(), 0);
}

TEST(child_process, a_child_that_ends_without_a_line_is_an_error_with_its_status) {
  EXPECT_NE(error_of([] {
              child_process({"/bin/sh", "-c", "exit 3"}, "", true);
            }).find("ended (status 3) before printing a line"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { child_process({"/nonexistent/program"}, "", true); }).find("cannot start it"),
      std::string::npos);
}

TEST(child_process, a_silent_child_is_killed_once_the_wait_for_its_line_is_over) {
  const auto pid_file = std::filesystem::temp_directory_path() /
                        ("child-process-test-" + std::to_string(::getpid()) + ".pid");
  const auto started = std::chrono::steady_clock::now();
  const std::string error = error_of([&] {
    child_process({"/bin/sh", "-c", "echo $$ > '" + pid_file.string() + "'; exec sleep 30"}, "",
                  true, 300ms);
  });
  EXPECT_NE(error.find("printed no line within 300 ms (killed)"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  int pid = 0;
  std::ifstream(pid_file) >> pid;
  std::filesystem::remove(pid_file);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), -1);  // killed and reaped
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace exactly::test
