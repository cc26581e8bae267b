// The client's invocation lifecycle machine: every state × every event, written out; answers
// classified by status; the retry rules.

#include "client/src/invocation_lifecycle.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace exactly::client {
namespace {

using S = invocation_state;
using E = lifecycle_event;
using A = lifecycle_action;

// Answer events grouped as the rules treat them.
constexpr E resend_answers[] = {E::answer_no_answer, E::answer_credentials_refused, E::answer_busy,
                                E::answer_server_error};
constexpr E refusal_answers[] = {E::answer_no_content,    E::answer_not_found, E::answer_conflict,
                                 E::answer_gone,          E::answer_too_old,   E::answer_too_large,
                                 E::answer_unprocessable, E::answer_other};
constexpr E handler_events[] = {E::put_tries_exhausted, E::handler_committed,
                                E::handler_failed,      E::attempts_exhausted,
                                E::attempt_abandoned,   E::handler_committed_unanswered};

using table = std::map<std::pair<S, E>, lifecycle_step>;

// The expected machine, state by state. Each state lists each event once.
table expected() {
  table t;
  const auto row = [&t](S s, E e, S next, A a) {
    EXPECT_TRUE(t.emplace(std::pair{s, e}, lifecycle_step{next, a}).second)
        << name_of(s) << " × " << name_of(e) << " listed twice";
  };

  // put_sent: the PUT of a handler attempt, answer not known yet.
  row(S::put_sent, E::answer_created, S::staged, A::commit_when_staged);
  row(S::put_sent, E::answer_ok, S::staged, A::commit_when_staged);  // a lost try had staged it
  for (E e : resend_answers)
    row(S::put_sent, e, S::put_sent, A::resend);
  row(S::put_sent, E::answer_stored_response, S::delete_pending, A::fail_handler);
  for (E e : refusal_answers)
    row(S::put_sent, e, S::delete_pending, A::fail_handler);
  row(S::put_sent, E::put_tries_exhausted, S::delete_pending, A::fail_handler);
  row(S::put_sent, E::handler_committed, S::put_sent, A::commit_when_staged);
  row(S::put_sent, E::handler_failed, S::delete_pending, A::queue_cleanup_delete);
  row(S::put_sent, E::attempts_exhausted, S::delete_pending, A::queue_cleanup_delete);
  row(S::put_sent, E::attempt_abandoned, S::delete_pending, A::queue_cleanup_delete);
  // put_wait::never: committed with its PUT unanswered, POSTed at once (a 404 then re-PUTs).
  row(S::put_sent, E::handler_committed_unanswered, S::post_pending, A::queue_post);

  // staged: the handler attempt has not committed; nothing is sent meanwhile.
  for (E e : all_events) {
    if (e == E::handler_committed || e == E::handler_committed_unanswered)
      row(S::staged, e, S::post_pending, A::queue_post);
    else if (e == E::handler_failed || e == E::attempts_exhausted || e == E::attempt_abandoned)
      row(S::staged, e, S::delete_pending, A::queue_cleanup_delete);
    else
      row(S::staged, e, S::staged, A::none);
  }

  // post_pending: POST until a stored response; 404 (the server lost the staged row): stage it
  // again; any other answer is a protocol fault, any 410 included.
  row(S::post_pending, E::answer_stored_response, S::awaiting_follow_up, A::queue_follow_up);
  for (E e : resend_answers)
    row(S::post_pending, e, S::post_pending, A::resend);
  for (E e : refusal_answers) {
    if (e == E::answer_not_found)
      row(S::post_pending, e, S::restage_pending, A::restage);
    else
      row(S::post_pending, e, S::delete_pending, A::error_queue_follow_up);
  }
  row(S::post_pending, E::answer_created, S::delete_pending, A::error_queue_follow_up);
  row(S::post_pending, E::answer_ok, S::delete_pending, A::error_queue_follow_up);
  for (E e : handler_events)
    row(S::post_pending, e, S::post_pending, A::none);

  // restage_pending: PUT the kept body again under the same id, then POST again whatever the
  // answer (the POST tells what it left), but for busy, failing or credentials refused: the PUT
  // again later; and 410 request-too-old: protocol fault.
  row(S::restage_pending, E::answer_created, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_ok, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_gone, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_no_answer, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_busy, S::restage_pending, A::resend);
  row(S::restage_pending, E::answer_server_error, S::restage_pending, A::resend);
  row(S::restage_pending, E::answer_credentials_refused, S::restage_pending, A::resend);
  row(S::restage_pending, E::answer_too_old, S::delete_pending, A::error_queue_follow_up);
  row(S::restage_pending, E::answer_conflict, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_too_large, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_unprocessable, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_not_found, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_no_content, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_other, S::post_pending, A::post_again);
  row(S::restage_pending, E::answer_stored_response, S::post_pending, A::post_again);
  for (E e : handler_events)
    row(S::restage_pending, e, S::restage_pending, A::none);

  // awaiting_follow_up: GET the stored response, run the follow-up handler with it.
  row(S::awaiting_follow_up, E::answer_stored_response, S::awaiting_follow_up, A::run_follow_up);
  for (E e : resend_answers)
    row(S::awaiting_follow_up, e, S::awaiting_follow_up, A::resend);
  for (E e : refusal_answers)
    row(S::awaiting_follow_up, e, S::delete_pending, A::error_queue_follow_up);
  row(S::awaiting_follow_up, E::answer_created, S::delete_pending, A::error_queue_follow_up);
  row(S::awaiting_follow_up, E::answer_ok, S::delete_pending, A::error_queue_follow_up);
  row(S::awaiting_follow_up, E::put_tries_exhausted, S::awaiting_follow_up, A::none);
  row(S::awaiting_follow_up, E::handler_committed, S::delete_pending, A::queue_delete);
  row(S::awaiting_follow_up, E::handler_failed, S::awaiting_follow_up, A::retry_follow_up);
  row(S::awaiting_follow_up, E::attempts_exhausted, S::delete_pending,
      A::error_queue_follow_up_with_response);
  row(S::awaiting_follow_up, E::attempt_abandoned, S::awaiting_follow_up, A::none);
  row(S::awaiting_follow_up, E::handler_committed_unanswered, S::awaiting_follow_up, A::none);

  // delete_pending: DELETE until 204 (404: the server does not know the id for us).
  for (E e : all_events) {
    if (e == E::answer_no_content || e == E::answer_not_found)
      row(S::delete_pending, e, S::done, A::forget);
    else if (static_cast<int>(e) <= static_cast<int>(E::answer_other))
      row(S::delete_pending, e, S::delete_pending, A::resend);
    else
      row(S::delete_pending, e, S::delete_pending, A::none);
  }

  // done: nothing is left.
  for (E e : all_events)
    row(S::done, e, S::done, A::none);
  return t;
}

TEST(invocation_lifecycle, every_state_and_event_has_its_expected_step) {
  const table t = expected();
  EXPECT_EQ(t.size(), all_states.size() * all_events.size());  // nothing missing or extra
  for (S s : all_states) {
    for (E e : all_events) {
      const auto want = t.find({s, e});
      ASSERT_NE(want, t.end()) << name_of(s) << " × " << name_of(e) << " has no expected step";
      const lifecycle_step got = on_event(s, e);
      EXPECT_EQ(got, want->second)
          << name_of(s) << " × " << name_of(e) << ": got " << name_of(got.next) << "/"
          << name_of(got.action) << ", want " << name_of(want->second.next) << "/"
          << name_of(want->second.action);
    }
  }
}

TEST(invocation_lifecycle, every_status_has_its_answer_class) {
  const std::pair<unsigned, answer_class> without_outcome[] = {
      {201, answer_class::created},
      {200, answer_class::ok},
      {204, answer_class::no_content},
      {401, answer_class::credentials_refused},
      {403, answer_class::credentials_refused},
      {404, answer_class::not_found},
      {408, answer_class::busy},
      {429, answer_class::busy},
      {409, answer_class::conflict},
      {410, answer_class::gone},
      {413, answer_class::too_large},
      {422, answer_class::unprocessable},
      {400, answer_class::other},
      {405, answer_class::other},
      {431, answer_class::other},
      {302, answer_class::other},
      {202, answer_class::other},
      {500, answer_class::server_error},
      {502, answer_class::server_error},
      {503, answer_class::server_error},
      {504, answer_class::server_error},
  };
  for (const auto& [status, want] : without_outcome)
    EXPECT_EQ(classify(false, status, false), want) << status;
  // A stored response, business 4xx and 5xx included, is told by its outcome header.
  for (unsigned status : {200u, 201u, 402u, 404u, 409u, 422u, 500u, 503u})
    EXPECT_EQ(classify(false, status, true), answer_class::stored_response) << status;
  for (unsigned status : {0u, 200u, 500u})
    EXPECT_EQ(classify(true, status, false), answer_class::no_answer);
}

// Only a 410 is told apart by its problem: request-too-old from every other.
TEST(invocation_lifecycle, a_gone_answer_is_told_apart_by_its_problem) {
  EXPECT_EQ(classify(false, 410, false, "request-too-old"), answer_class::too_old);
  for (const char* p : {"request-consumed", "request-expired", "response-expired", "", "other"})
    EXPECT_EQ(classify(false, 410, false, p), answer_class::gone) << p;
  EXPECT_EQ(classify(false, 404, false, "request-too-old"), answer_class::not_found);
  EXPECT_EQ(classify(false, 410, true, "request-too-old"), answer_class::stored_response);
  EXPECT_EQ(classify(true, 410, false, "request-too-old"), answer_class::no_answer);
}

// A row committed before rows kept their body cannot be staged again: its 404 is a protocol fault
// as before; every other step is unchanged.
TEST(invocation_lifecycle, without_a_kept_request_a_404_stays_a_protocol_fault) {
  EXPECT_EQ(without_kept_request(on_event(S::post_pending, E::answer_not_found)),
            (lifecycle_step{S::delete_pending, A::error_queue_follow_up}));
  for (S s : all_states) {
    for (E e : all_events) {
      const lifecycle_step step = on_event(s, e);
      if (step.action != A::restage) {
        EXPECT_EQ(without_kept_request(step), step) << name_of(s) << " × " << name_of(e);
      }
    }
  }
}

TEST(invocation_lifecycle, each_sending_state_sends_its_verb) {
  EXPECT_EQ(request_of(S::put_sent), verb::put);
  EXPECT_EQ(request_of(S::staged), std::nullopt);
  EXPECT_EQ(request_of(S::post_pending), verb::post);
  EXPECT_EQ(request_of(S::restage_pending), verb::put);
  EXPECT_EQ(request_of(S::awaiting_follow_up), verb::get);
  EXPECT_EQ(request_of(S::delete_pending), verb::delete_);
  EXPECT_EQ(request_of(S::done), std::nullopt);
}

// Every status, with and without the outcome header, through every sending state: never stuck
// without a next step, never a protocol fault on DELETE, never a failed handler after commit.
TEST(invocation_lifecycle, every_answer_to_every_request_has_a_step) {
  for (S s : all_states) {
    if (!request_of(s))
      continue;
    for (unsigned status = 100; status < 600; ++status) {
      for (bool outcome : {false, true}) {
        for (const char* problem : {"", "request-too-old"}) {
          const lifecycle_step step =
              on_event(s, answer_event(classify(false, status, outcome, problem)));
          EXPECT_NE(step.action, A::none) << name_of(s) << " " << status;
          if (s == S::delete_pending) {
            EXPECT_NE(step.action, A::error_queue_follow_up) << status;
          }
          if (s != S::put_sent) {
            EXPECT_NE(step.action, A::fail_handler) << status;
          }
        }
      }
    }
  }
}

TEST(invocation_lifecycle, a_handler_fails_until_its_attempts_are_exhausted) {
  EXPECT_EQ(handler_failure(0, 3), E::handler_failed);
  EXPECT_EQ(handler_failure(1, 3), E::handler_failed);
  EXPECT_EQ(handler_failure(2, 3), E::attempts_exhausted);
  EXPECT_EQ(handler_failure(0, 1), E::attempts_exhausted);
  EXPECT_EQ(handler_failure(7, 3), E::attempts_exhausted);
}

}  // namespace
}  // namespace exactly::client
