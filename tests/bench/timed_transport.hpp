#pragma once
// exactly-bench's view of a client's exchanges: a transport that passes every call on and adds
// the time each answered one took, as the transport inside measured it, to a step_clock by its
// method (one the clock does not name, or an exchange without an answer, is not counted).

#include "step_clock.hpp"

#include <exactly/client/http_transport.hpp>

#include <algorithm>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exactly::bench {

class timed_transport final : public client::http_transport {
 public:
  timed_transport(std::shared_ptr<client::http_transport> inner, std::shared_ptr<step_clock> clock)
      : inner_(std::move(inner)), clock_(std::move(clock)) {}

  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    client::http_result r = inner_->send(method, url, content_type, body);
    note(method, r);
    return r;
  }
  std::vector<client::http_result> send_all(const std::vector<client::http_call>& calls) override {
    std::vector<client::http_result> answers = inner_->send_all(calls);
    for (std::size_t i = 0; i < answers.size() && i < calls.size(); ++i)
      note(calls[i].method, answers[i]);
    return answers;
  }
  // Noted when the answer is taken (the runtime takes every one it starts, unless the batch
  // throws first).
  std::future<client::http_result> start(const client::http_call& call) override {
    return std::async(std::launch::deferred,
                      [this, method = call.method, answer = inner_->start(call)]() mutable {
                        client::http_result r = answer.get();
                        note(method, r);
                        return r;
                      });
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }

 private:
  void note(std::string_view method, const client::http_result& r) const {
    const auto& names = clock_->names;
    const auto at = std::find(names.begin(), names.end(), method);
    if (r.transport_failed || r.elapsed.count() == 0 || at == names.end())
      return;
    clock_->add(static_cast<std::size_t>(at - names.begin()), r.elapsed);
  }

  std::shared_ptr<client::http_transport> inner_;
  std::shared_ptr<step_clock> clock_;
};

}  // namespace exactly::bench
