// The transport's default send_all, start and check_url, for transports that only send.
#include <exactly/client/http_transport.hpp>

namespace exactly::client {

std::vector<http_result> http_transport::send_all(const std::vector<http_call>& calls) {
  std::vector<http_result> answers;
  answers.reserve(calls.size());
  for (const http_call& c : calls)
    answers.push_back(send(c.method, c.url, c.content_type, c.body));
  return answers;
}

void http_transport::check_url(std::string_view) const {}

std::future<http_result> http_transport::start(const http_call& call) {
  std::promise<http_result> answer;
  answer.set_value(send(call.method, call.url, call.content_type, call.body));
  return answer.get_future();
}

}  // namespace exactly::client
