#pragma once
// A small blocking HTTP/1.1 client for tests: one keep-alive connection to 127.0.0.1:port.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exactly::test {

struct test_response {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;
  // The header's value, or "" when absent.
  std::string header(const std::string& lowercase_name) const;
  bool has_header(const std::string& lowercase_name) const;
};

class http_client {
 public:
  explicit http_client(std::uint16_t port);
  ~http_client();
  // Sends one request and reads the reply; reconnects once if the kept-alive connection died.
  // Throws boost::system::system_error on I/O failure.
  test_response request(const std::string& method, const std::string& target,
                        const std::string& body = "",
                        const std::vector<std::pair<std::string, std::string>>& headers = {});

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Raw socket access for malformed and slow requests.
class raw_connection {
 public:
  explicit raw_connection(std::uint16_t port);
  ~raw_connection();
  void send(const std::string& bytes);
  // Reads until the peer closes or `timeout_ms` passes; returns what arrived.
  std::string read_all(int timeout_ms);
  // True if the peer closed the connection within `timeout_ms`.
  bool closed_within(int timeout_ms);
  // Reads until `n` bytes, the peer's close, or `timeout_ms` without a byte; returns what arrived.
  std::string read_exactly(std::size_t n, int timeout_ms);
  // Ends the sending side: the peer reads the end of the stream, and may still answer.
  void shutdown_send();

 private:
  int fd_ = -1;
};

}  // namespace exactly::test
