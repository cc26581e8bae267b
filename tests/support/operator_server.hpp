#pragma once
// A server with the operator page on, for its integration and browser tests: the echo app, a
// route whose message always fails (a dead letter with the failure's text), API keys of alice
// and of a principal whose name is markup, and what the database holds, read on its storage
// thread. On PostgreSQL when EXACTLY_TEST_ENGINE=postgres (see echo_server_config), else SQLite.

#include <echo_server.hpp>

#include <exactly/server/http_server.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace exactly::test {

class operator_server {
 public:
  static inline const std::string page_key = "operator-key-0123456789abcdef";
  static inline const std::string alice_key = "alice-key-0123456789";
  static inline const std::string evil_key = "evil-key-0123456789";
  // The principal of evil_key: markup a page must show as text.
  static inline const std::string evil_owner = "<script>alert(\"owner\")</script>";
  // The path of the route whose message handler throws the message body's "error".
  static inline const std::string failing_route = "/failing/{id}";

  // The page as `page` says (enabled with page_key unless the test changes it).
  explicit operator_server(server::operator_page_options page);
  ~operator_server();

  std::uint16_t port() const { return port_; }
  // PUTs a new echo interaction as the principal of `key`; returns its id.
  std::string stage(const std::string& key = alice_key);
  // PUTs and POSTs a new echo interaction; returns its id.
  std::string execute(const std::string& key = alice_key);
  // Executes on the failing route with `error` as the message's failure, and waits until the
  // message is a dead letter.
  void dead_letter(const std::string& error);
  // Inserts an interaction row as stored by the connector (no request or response).
  void insert_interaction(const std::string& route, const std::string& id, const std::string& owner,
                          int state, std::int64_t since_ms);
  // Inserts an outbox message with `last_error`, not due for a day (the dispatcher leaves it).
  void insert_waiting_message(const std::string& type, const std::string& last_error);
  // Inserts a dead letter with `error`.
  void insert_dead_letter(const std::string& type, const std::string& error);

  // What the database holds, read on the storage thread.
  std::int64_t count(int state);
  std::int64_t dead_letters();
  std::int64_t outbox_pending();
  std::int64_t executions_total();
  // Ids in `state`, oldest state_since_ms first.
  std::vector<std::string> ids(int state);
  // The errors of the dead letters, newest first.
  std::vector<std::string> dead_letter_errors();

  server::http_server& http() { return *http_; }
  server::connector& connector() { return *connector_; }

 private:
  temp_dir dir_;
  std::unique_ptr<server::connector> connector_;
  std::unique_ptr<server::http_server> http_;
  std::uint16_t port_ = 0;
};

}  // namespace exactly::test
