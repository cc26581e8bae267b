#pragma once
// One blocking HTTP/1.1 connection to the server under test, plain or TLS, for the conformance
// runner: requests one at a time, several written at once (pipelining), or raw bytes.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exactly::conformance {

using header_list = std::vector<std::pair<std::string, std::string>>;

// Where the server listens and how to reach it.
struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  bool tls = false;
  std::string ca_file{};           // TLS: trusted CAs (PEM); "" = the system's
  bool insecure = false;           // TLS: do not verify the server's certificate
  std::string client_cert_file{};  // TLS: a client certificate (PEM), with client_key_file
  std::string client_key_file{};
  std::chrono::milliseconds timeout{10000};  // per exchange
};

struct request {
  std::string method;
  std::string target;  // path and query
  header_list headers{};
  std::string body{};
};

struct answer {
  unsigned status = 0;  // 0 with `error` set: no answer (connection failed or closed)
  header_list headers{};
  std::string body{};
  std::string error{};
  // The first header named `name` (case-insensitive), or "".
  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const;
};

class http_connection {
 public:
  // Connects lazily. Throws std::invalid_argument when the TLS files do not load.
  explicit http_connection(endpoint at);
  ~http_connection();
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  // Sends `r` (Host and Content-Length added) and reads the answer; reconnects once when a kept-
  // alive connection turns out closed. A failure is an answer with `error`, never an exception.
  answer send(const request& r);
  // Writes every request in one go on a fresh connection, then reads the answers in order.
  std::vector<answer> pipeline(const std::vector<request>& rs);
  // Writes `bytes` as they are on a fresh connection and reads one answer.
  answer raw(const std::string& bytes);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// "METHOD target" with headers (Authorization values hidden) and the body, for a report.
std::string describe(const request& r);
// Status, headers and body of `a`, for a report.
std::string describe(const answer& a);

}  // namespace exactly::conformance
