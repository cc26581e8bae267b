// The transport's default send_all, start and check_url, for transports that only send.
#include <exactly/client/http_transport.hpp>

namespace exactly::client {
namespace {

// `t`'s send of `c`, timed here when the transport did not time it.
http_result timed_send(http_transport& t, const http_call& c) {
  const auto start = std::chrono::steady_clock::now();
  http_result r = t.send(c.method, c.url, c.content_type, c.body);
  if (r.elapsed.count() == 0) {
    r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
  }
  return r;
}

}  // namespace

std::vector<http_result> http_transport::send_all(const std::vector<http_call>& calls) {
  std::vector<http_result> answers;
  answers.reserve(calls.size());
  for (const http_call& c : calls)
    answers.push_back(timed_send(*this, c));
  return answers;
}

void http_transport::check_url(std::string_view) const {}

std::future<http_result> http_transport::start(const http_call& call) {
  std::promise<http_result> answer;
  answer.set_value(timed_send(*this, call));
  return answer.get_future();
}

}  // namespace exactly::client
