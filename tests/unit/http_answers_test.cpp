// How the client reads answers: the problem named in an error, the retention header as a time,
// and a kept response with its retention.

#include "client/src/http_answers.hpp"

#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>

#include <gtest/gtest.h>

namespace exactly::client {
namespace {

http_result answer(unsigned status, std::string retention = "") {
  http_result r;
  r.status = status;
  r.retention = std::move(retention);
  return r;
}

TEST(http_answers, a_gone_answer_names_its_problem) {
  http_result r = answer(410);
  r.content_type = protocol::problem_content_type;
  r.body = to_body(make_problem(errc::request_too_old, "the id's timestamp is too old"));
  EXPECT_EQ(describe_answer("POST", r),
            "POST answered 410 request-too-old: the id's timestamp is too old");
  EXPECT_EQ(classify(r), answer_class::too_old);
  r.body = to_body(make_problem(errc::request_consumed, "executed"));
  EXPECT_EQ(classify(r), answer_class::gone);
  r.body = "not a problem";
  EXPECT_EQ(classify(r), answer_class::gone);
}

TEST(http_answers, the_retention_header_is_read_as_a_time) {
  EXPECT_EQ(available_until(answer(200, "Sun, 06 Nov 1994 08:49:37 GMT")), 784'111'777'000);
  EXPECT_EQ(available_until(answer(201)), std::nullopt);
  EXPECT_EQ(available_until(answer(200, "784111777000")), std::nullopt);
  EXPECT_EQ(available_until(answer(200, "Sunday, 06-Nov-94 08:49:37 GMT")), std::nullopt);
}

TEST(http_answers, a_kept_response_keeps_its_retention) {
  http_result r = answer(402, "Sun, 06 Nov 1994 08:49:37 GMT");
  r.outcome = "replayed";
  r.body = "{}";
  const auto kept = kept_response(keep_response(nlohmann::json::object(), r));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->status, 402u);
  EXPECT_EQ(kept->retention, "Sun, 06 Nov 1994 08:49:37 GMT");
  // Kept by a version without retention: none.
  nlohmann::json old = keep_response(nlohmann::json::object(), r);
  old[kept_response_header].erase("retention");
  ASSERT_TRUE(kept_response(old).has_value());
  EXPECT_EQ(kept_response(old)->retention, "");
}

}  // namespace
}  // namespace exactly::client
