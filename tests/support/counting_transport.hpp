#pragma once
// A client transport that counts what it sends, for tests that count requests, not answers.

#include <exactly/client/http_transport.hpp>

#include <cstdint>

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::test {

// Sends through `inner`, counting the POSTs of each URL.
class counting_transport final : public client::http_transport {
 public:
  explicit counting_transport(std::shared_ptr<client::http_transport> inner)
      : inner_(std::move(inner)) {}
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    count(method, url);
    return inner_->send(method, url, content_type, body);
  }
  std::vector<client::http_result> send_all(const std::vector<client::http_call>& calls) override {
    for (const client::http_call& c : calls)
      count(c.method, c.url);
    return inner_->send_all(calls);
  }
  std::future<client::http_result> start(const client::http_call& call) override {
    count(call.method, call.url);
    return inner_->start(call);
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }
  // How many times each URL was POSTed.
  std::map<std::string, int> posts() {
    std::lock_guard lock(mutex_);
    return posts_;
  }

 private:
  void count(std::string_view method, std::string_view url) {
    std::lock_guard lock(mutex_);
    if (method == "POST")
      ++posts_[std::string(url)];
  }
  std::shared_ptr<client::http_transport> inner_;
  std::mutex mutex_;
  std::map<std::string, int> posts_;
};

// A counting Beast transport to the echo route on 127.0.0.1:`port`, as alice.
inline std::shared_ptr<counting_transport> counting_echo_transport(std::uint16_t port) {
  const std::string host = "127.0.0.1:" + std::to_string(port);
  return std::make_shared<counting_transport>(
      client::make_beast_transport({.keys = {{host, "alice-key"}}}));
}

// The echo route's URL template on 127.0.0.1:`port`.
inline std::string echo_url(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port) + "/vectors/echo/{id}";
}

}  // namespace exactly::test
