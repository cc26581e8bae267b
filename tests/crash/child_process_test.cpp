// The crash tests' harness: what a child is started with, and that a start never waits for ever.

#include <child_process.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace exactly::test {
namespace {

TEST(child_process, crash_at_reaches_the_child_environment) {
  child_process env({"/bin/sh", "-c", "echo \"at=$EXACTLY_CRASH_AT\""}, "server.somewhere", true);
  EXPECT_EQ(env.first_line(), "at=server.somewhere");
  EXPECT_EQ(env.wait_exit(), 0);
}

TEST(child_process, a_child_that_ends_without_a_line_is_an_error_not_a_wait) {
  EXPECT_THROW(child_process({"/bin/true"}, "", true), std::runtime_error);
  EXPECT_THROW(child_process({"/nonexistent/program"}, "", true), std::runtime_error);
}

}  // namespace
}  // namespace exactly::test
