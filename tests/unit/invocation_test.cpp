// Every step of an invocation against every server answer.

#include <exactly/client/invocation.hpp>

#include <gtest/gtest.h>

#include <set>

namespace exactly::client {
namespace {

answer http(unsigned status, bool outcome = false) {
  return {false, status, outcome, ""};
}
answer lost() {
  return {true, 0, false, ""};
}

TEST(invocation, lost_answers_are_retried_at_every_step) {
  for (verb s : {verb::put, verb::post, verb::get, verb::delete_})
    EXPECT_EQ(decide(s, lost()), next::retry);
}

TEST(invocation, put) {
  EXPECT_EQ(decide(verb::put, http(201)), next::advance);
  EXPECT_EQ(decide(verb::put, http(200)), next::advance);  // a lost first PUT had staged it
  for (unsigned st : {400u, 409u, 410u, 413u, 422u}) {
    EXPECT_EQ(decide(verb::put, http(st)), next::fail_handler) << st;
  }
  for (unsigned st : {401u, 403u, 408u, 429u, 500u, 502u, 503u}) {
    EXPECT_EQ(decide(verb::put, http(st)), next::retry) << st;
  }
}

TEST(invocation, post_and_get_take_any_stored_outcome) {
  for (verb s : {verb::post, verb::get}) {
    for (unsigned st : {200u, 201u, 402u, 422u, 500u, 503u}) {
      EXPECT_EQ(decide(s, http(st, true)), next::advance) << st;  // business outcomes
    }
    for (unsigned st : {404u, 410u, 409u, 400u}) {
      EXPECT_EQ(decide(s, http(st)), next::error_queue) << st;  // never re-invoked
    }
    for (unsigned st : {500u, 502u, 503u, 504u, 408u, 429u, 401u}) {
      EXPECT_EQ(decide(s, http(st)), next::retry) << st;
    }
  }
}

TEST(invocation, delete_until_204) {
  EXPECT_EQ(decide(verb::delete_, http(204)), next::advance);
  EXPECT_EQ(decide(verb::delete_, http(404)), next::advance);
  for (unsigned st : {500u, 503u, 401u, 400u})
    EXPECT_EQ(decide(verb::delete_, http(st)), next::retry);
}

TEST(invocation, decide_is_total) {
  for (verb s : {verb::put, verb::post, verb::get, verb::delete_}) {
    for (unsigned st = 100; st < 600; ++st) {
      for (bool outcome : {false, true}) {
        const next n = decide(s, http(st, outcome));
        EXPECT_TRUE(n == next::advance || n == next::retry || n == next::fail_handler ||
                    n == next::error_queue);
        if (s == verb::delete_) {
          EXPECT_NE(n, next::error_queue);
        }
        if (s != verb::put) {
          EXPECT_NE(n, next::fail_handler);
        }
      }
    }
  }
}

}  // namespace
}  // namespace exactly::client
