#pragma once
// How the runtime sends the protocol's requests. The runtime decides, the transport only sends.

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::client {

struct http_result {
  bool transport_failed = false;  // no answer: connect failure, reset, timeout
  std::string error;              // why, when transport_failed
  unsigned status = 0;
  std::string content_type;
  std::string outcome;  // Exactly-Once-Outcome value, "" when absent
  std::string body;
  std::string retention{};  // Exactly-Once-Retention value (an HTTP-date), "" when absent
  // How long the exchange took as the transport measured it, for metrics; 0 when it did not.
  std::chrono::microseconds elapsed{0};
};

// One request of a send_all() batch.
struct http_call {
  std::string method, url, content_type, body;
  // Further request headers (name, value). The Beast transport sends them; the default send_all
  // and start, which go through send(), cannot.
  std::vector<std::pair<std::string, std::string>> headers{};
};

// Sends requests and waits for their answers. Implementations must be safe to call from the
// thread that drives the endpoint; they never throw for network trouble (transport_failed).
class http_transport {
 public:
  virtual ~http_transport() = default;
  virtual http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) = 0;
  // Sends every call and returns their answers in the same order. The default sends them one
  // after another; a transport that can sends them concurrently.
  virtual std::vector<http_result> send_all(const std::vector<http_call>& calls);
  // Sends `call` now and returns at once; the future holds its answer. The default sends it
  // before returning; a transport that can sends it in the background.
  virtual std::future<http_result> start(const http_call& call);
  // Throws std::invalid_argument for a URL this transport cannot send to; the default accepts any.
  virtual void check_url(std::string_view url) const;
};

struct destination_key {
  // "host:port" as url_authority() gives it: the port explicit ("example.com:443" for
  // https://example.com/...), an IPv6 address in brackets ("[::1]:8080").
  std::string host_port;
  std::string bearer;  // API key sent as Authorization: Bearer
};

struct beast_transport_options {
  std::chrono::milliseconds connect_timeout{3000};   // TCP connect plus TLS handshake
  std::chrono::milliseconds request_timeout{10000};  // write plus read of one exchange
  std::vector<destination_key> keys{};               // per destination API keys
  // Requests in flight to one host:port at most (the others wait); also the most connections
  // kept open to it.
  std::size_t max_per_destination = 8;
  bool verify_peer = true;  // https: check the certificate chain and the host name
  std::string ca_file{};    // https: trust the CAs in this PEM file instead of the system's
  // https: present this certificate (PEM chain) and key to servers that ask for one.
  std::string client_certificate_file{};
  std::string client_private_key_file{};
};

// The "host:port" of an http:// or https:// URL, its port made explicit (80 or 443 when the URL
// has none), an IPv6 host in brackets. Throws std::invalid_argument for a URL the Beast transport
// refuses: not absolute, another scheme, user information, an empty host, a bad port.
std::string url_authority(std::string_view url);

// Transport on Boost.Beast coroutines, for http:// and https:// URLs (IPv6 literals in brackets):
// one I/O thread, a pool of kept-alive connections per host:port, a concurrency limit per
// destination, connect and request timeouts. Thread-safe: one transport can serve many workers.
// send() throws std::invalid_argument for a URL it cannot use; making the transport throws it
// when a certificate file is missing half or does not load.
std::unique_ptr<http_transport> make_beast_transport(beast_transport_options opts = {});

}  // namespace exactly::client
