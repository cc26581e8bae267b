// The server over https: the protocol and a client runtime over TLS, client certificates that
// name principals (and keep ids apart), and handshakes refused for want of a trusted certificate.

#include <certificates.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/client/http_transport.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <fstream>
#include <future>
#include <thread>

namespace exactly::test {
namespace {

class server_tls : public ::testing::Test {
 protected:
  server_tls() {
    make_certificate("IP:127.0.0.1", pem("server"), key("server"));
    for (const char* who : {"alice", "bob", "carol", "stranger"})
      make_certificate("DNS:" + std::string(who) + ".invalid", pem(who), key(who));
    // The clients' CA file trusts alice, bob and carol (each its own CA), not the stranger.
    std::ofstream cas(pem("client-cas"));
    for (const char* who : {"alice", "bob", "carol"})
      cas << std::ifstream(pem(who)).rdbuf();
  }

  std::string pem(const std::string& n) const { return (dir_.path() / (n + ".pem")).string(); }
  std::string key(const std::string& n) const { return (dir_.path() / (n + ".key")).string(); }

  // https with the server certificate; with client certificates when `mutual`: alice and bob
  // listed by fingerprint, carol trusted but not listed.
  echo_server_config config(bool mutual) const {
    echo_server_config cfg;
    cfg.max_staged_per_principal = 100;
    cfg.tls.certificate_chain_file = pem("server");
    cfg.tls.private_key_file = key("server");
    if (mutual) {
      cfg.tls.client_ca_file = pem("client-cas");
      cfg.tls.client_certificates = {{certificate_sha256(pem("alice")), "alice"},
                                     {certificate_sha256(pem("bob")), "bob"}};
    }
    return cfg;
  }

  // A transport trusting the server certificate, presenting `who`'s certificate unless "", and
  // sending `api_key` unless "".
  std::shared_ptr<client::http_transport> transport(std::uint16_t port, const std::string& who,
                                                    const std::string& api_key = "") const {
    client::beast_transport_options o{.ca_file = pem("server")};
    if (!api_key.empty())
      o.keys = {{"127.0.0.1:" + std::to_string(port), api_key}};
    if (!who.empty()) {
      o.client_certificate_file = pem(who);
      o.client_private_key_file = key(who);
    }
    return client::make_beast_transport(o);
  }

  static std::string url(std::uint16_t port, const std::string& id) {
    return "https://127.0.0.1:" + std::to_string(port) + "/vectors/echo/" + id;
  }

  static std::int64_t handshake_failures(echo_server& server) {
    const std::string m = server.metrics();
    const std::string name = "\nexactly_tls_handshake_failures_total ";
    const auto at = m.find(name);
    return at == std::string::npos ? -1 : std::stoll(m.substr(at + name.size()));
  }

  temp_dir dir_;
};

TEST_F(server_tls, a_client_runtime_invokes_over_https_exactly_once) {
  echo_server server(config(false));
  sqlite::connection db((dir_.path() / "client.db").string());
  db.exec("CREATE TABLE results (order_id TEXT PRIMARY KEY, status INTEGER)");
  client::endpoint ep("billing", db, {.transport = transport(server.port(), "", "alice-key")});
  const std::string route = url(server.port(), "{id}");
  ep.on("bill", [&](client::handler_context& ctx) {
    ctx.invoke_http(route, R"({"status":200})", "application/json",
                    {.type = "bill_result", .body = ctx.incoming().body});
  });
  ep.on("bill_result", [](client::handler_context& ctx) {
    ctx.db()
        .prepare("INSERT INTO results VALUES (?, ?)")
        .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status)
        .run();
  });
  constexpr int n = 5;
  for (int i = 0; i < n; ++i)
    ep.send("billing", {.type = "bill", .body = {{"order", "o-" + std::to_string(i)}}});
  EXPECT_TRUE(eventually([&] {
    ep.run_until_idle();
    return db.query_int64("SELECT count(*) FROM results WHERE status = 200") == n &&
           ep.pending_invocations() == 0;
  }));
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(server.rows().tombstone, n);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  EXPECT_EQ(handshake_failures(server), 0);
}

TEST_F(server_tls, plain_http_to_the_https_port_gets_no_answer) {
  echo_server server(config(false));
  auto plain = client::make_beast_transport(
      {.keys = {{"127.0.0.1:" + std::to_string(server.port()), "alice-key"}}});
  const std::string id = request_id::mint().to_string();
  const auto r = plain->send(
      "PUT", "http://127.0.0.1:" + std::to_string(server.port()) + "/vectors/echo/" + id,
      "application/json", R"({"status":200})");
  EXPECT_TRUE(r.transport_failed);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_TRUE(eventually([&] { return handshake_failures(server) == 1; }));
}

TEST_F(server_tls, a_listed_client_certificate_is_the_principal_and_owns_its_ids) {
  echo_server server(config(true));
  auto alice = transport(server.port(), "alice");  // no API key: the certificate authenticates
  auto bob = transport(server.port(), "bob");
  const std::string id = request_id::mint().to_string();
  const std::string u = url(server.port(), id);
  EXPECT_EQ(alice->send("PUT", u, "application/json", R"({"status":200})").status, 201u);
  // Another principal gets 404 on every verb, and nothing runs.
  EXPECT_EQ(bob->send("POST", u, "", "").status, 404u);
  EXPECT_EQ(bob->send("GET", u, "", "").status, 404u);
  EXPECT_EQ(bob->send("DELETE", u, "", "").status, 404u);
  EXPECT_EQ(server.executions(id), 0);
  EXPECT_EQ(alice->send("POST", u, "", "").status, 200u);
  EXPECT_EQ(alice->send("POST", u, "", "").status, 200u);  // a replay
  EXPECT_EQ(alice->send("GET", u, "", "").status, 200u);
  EXPECT_EQ(alice->send("DELETE", u, "", "").status, 204u);
  EXPECT_EQ(server.executions(id), 1);
  // The certificate wins over an API key of another principal on the same connection.
  auto alice_with_bobs_key = transport(server.port(), "alice", "bob-key");
  const std::string id2 = request_id::mint().to_string();
  EXPECT_EQ(alice_with_bobs_key
                ->send("PUT", url(server.port(), id2), "application/json", R"({"status":200})")
                .status,
            201u);
  EXPECT_EQ(alice->send("POST", url(server.port(), id2), "", "").status, 200u);
  EXPECT_EQ(server.executions(id2), 1);
  // Clients that leave without a TLS close_notify have left; they did not send a bad request.
  alice.reset();
  bob.reset();
  alice_with_bobs_key.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NE(server.metrics().find("exactly_problems_total{type=\"bad-request\"} 0\n"),
            std::string::npos);
}

TEST_F(server_tls, a_trusted_but_unlisted_certificate_still_needs_an_api_key) {
  echo_server server(config(true));
  const std::string u = url(server.port(), request_id::mint().to_string());
  EXPECT_EQ(transport(server.port(), "carol")
                ->send("PUT", u, "application/json", R"({"status":200})")
                .status,
            401u);
  EXPECT_EQ(transport(server.port(), "carol", "bob-key")
                ->send("PUT", u, "application/json", R"({"status":200})")
                .status,
            201u);
  EXPECT_EQ(transport(server.port(), "bob")->send("POST", u, "", "").status, 200u);  // bob's id
  EXPECT_EQ(handshake_failures(server), 0);
}

TEST_F(server_tls, no_certificate_or_an_untrusted_one_fails_the_handshake) {
  echo_server server(config(true));
  const std::string u = url(server.port(), request_id::mint().to_string());
  const auto none = transport(server.port(), "", "alice-key")
                        ->send("PUT", u, "application/json", R"({"status":200})");
  EXPECT_TRUE(none.transport_failed);
  const auto stranger = transport(server.port(), "stranger", "alice-key")
                            ->send("PUT", u, "application/json", R"({"status":200})");
  EXPECT_TRUE(stranger.transport_failed);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_TRUE(eventually([&] { return handshake_failures(server) == 2; }));
}

// Clients such as curl resume TLS sessions; with client certificates verified, OpenSSL refuses
// a resumption unless the server set a session id context.
TEST_F(server_tls, a_client_with_a_certificate_can_resume_its_session) {
  echo_server server(config(true));
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.load_verify_file(pem("server"));
  ctx.set_verify_mode(asio::ssl::verify_peer);
  ctx.use_certificate_chain_file(pem("alice"));
  ctx.use_private_key_file(key("alice"), asio::ssl::context::pem);
  SSL_SESSION* session = nullptr;
  for (int connection = 0; connection < 2; ++connection) {
    beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
    beast::get_lowest_layer(stream).connect({asio::ip::make_address("127.0.0.1"), server.port()});
    if (session)
      SSL_set_session(stream.native_handle(), session);
    beast::error_code ec;
    stream.handshake(asio::ssl::stream_base::client, ec);
    ASSERT_FALSE(ec) << "connection " << connection << ": " << ec.message();
    http::request<http::string_body> req{http::verb::get, "/healthz", 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);  // also takes in the session ticket sent after the handshake
    EXPECT_EQ(res.result_int(), 200u);
    if (session) {
      EXPECT_EQ(SSL_session_reused(stream.native_handle()), 1);
    } else {
      session = SSL_get1_session(stream.native_handle());
      ASSERT_NE(session, nullptr);
    }
    stream.shutdown(ec);
  }
  SSL_SESSION_free(session);
  EXPECT_EQ(handshake_failures(server), 0);
}

// A peer that connects and never starts its handshake does not hold up a graceful stop.
TEST_F(server_tls, a_stop_cuts_short_a_handshake_that_never_comes) {
  echo_server_config cfg = config(true);
  cfg.tls.handshake_timeout = std::chrono::minutes(2);
  echo_server server(cfg);
  raw_connection silent(server.port());
  EXPECT_FALSE(silent.closed_within(200));  // the server waits for the handshake
  auto stopped = std::async(std::launch::async, [&] { server.stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(silent.closed_within(1000));
  EXPECT_EQ(handshake_failures(server), 0);  // cut short by the stop, not the client's failure
}

TEST_F(server_tls, incomplete_or_unloadable_settings_are_refused_at_construction) {
  server::connector c({.db_path = ":memory:"});
  const auto refused = [&](server::tls_options t, std::vector<server::api_key> keys) {
    server::server_options o;
    o.api_keys = std::move(keys);
    o.tls = std::move(t);
    EXPECT_THROW(server::http_server(o, c), std::invalid_argument);
  };
  const std::vector<server::api_key> keys = {{"k", "p"}};
  refused({.certificate_chain_file = pem("server")}, keys);  // no key file
  refused({.certificate_chain_file = pem("missing"), .private_key_file = key("server")}, keys);
  refused({.private_key_file = key("server")}, keys);  // a key without a certificate
  refused({.certificate_chain_file = pem("server"),
           .private_key_file = key("server"),
           .client_certificates = {{certificate_sha256(pem("alice")), "alice"}}},
          keys);  // listed certificates but no CA to check them
  refused({.certificate_chain_file = pem("server"),
           .private_key_file = key("server"),
           .client_ca_file = pem("client-cas"),
           .client_certificates = {{"not-hex", "alice"}}},
          keys);
  // Listed client certificates alone are enough authentication.
  server::server_options ok;
  ok.tls = {.certificate_chain_file = pem("server"),
            .private_key_file = key("server"),
            .client_ca_file = pem("client-cas"),
            .client_certificates = {{certificate_sha256(pem("alice")), "alice"}}};
  EXPECT_NO_THROW(server::http_server(ok, c));
  EXPECT_THROW(client::make_beast_transport({.client_certificate_file = pem("alice")}),
               std::invalid_argument);
}

// Handshakes run on the network thread: beyond max_tls_handshakes in progress, a connection is
// closed at once, counted, and the server takes handshakes again once a place frees.
TEST_F(server_tls, handshakes_over_the_cap_are_refused_at_once) {
  echo_server_config cfg = config(false);
  cfg.max_tls_handshakes = 1;
  echo_server server(cfg);
  auto silent = std::make_unique<raw_connection>(server.port());  // holds the one place
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  raw_connection refused(server.port());
  EXPECT_TRUE(refused.closed_within(3000));
  EXPECT_FALSE(silent->closed_within(200));  // the one in progress waits for its hello
  const std::string m = server.metrics();
  EXPECT_NE(m.find("\nexactly_tls_handshakes_refused_total 1\n"), std::string::npos) << m;
  EXPECT_EQ(handshake_failures(server), 0);

  silent.reset();
  const std::string u = url(server.port(), request_id::mint().to_string());
  EXPECT_TRUE(eventually([&] {
    return transport(server.port(), "", "alice-key")
               ->send("PUT", u, "application/json", R"({"status":200})")
               .status == 201;
  }));
}

}  // namespace
}  // namespace exactly::test
