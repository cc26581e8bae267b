// The billing sample's payment service alone, driven over HTTP through the whole protocol, on
// SQLite, and on PostgreSQL when run with EXACTLY_TEST_ENGINE=postgres (the pg. suite).

#include <echo_server.hpp>
#include <http_client.hpp>
#include <payment_app.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

namespace exactly::test {
namespace {

using nlohmann::json;

server::connector_options payment_options(const temp_dir& dir) {
  server::connector_options co{.db_path = (dir.path() / "payment.db").string()};
  if (const std::string pg = echo_server_config::default_test_postgres(); !pg.empty())
    co.postgres = pg::options{pg};
  return co;
}

class payment_service : public ::testing::Test {
 protected:
  payment_service()
      : connector_(payment_options(dir_)),
        http_({.api_keys = {{"billing-key", "billing"}, {"shop-key", "shop"}}}, connector_) {
    samples::payment::install(connector_, http_, 1000);
    port_ = http_.start();
    client_.emplace(port_);
  }

  // A request as principal billing (`key` "shop-key": as principal shop).
  test_response call(const std::string& method, const std::string& target,
                     const std::string& body = "", const std::string& key = "billing-key") {
    return client_->request(
        method, target, body,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}});
  }
  json account(const std::string& customer) {
    const auto r = call("GET", "/accounts/" + customer);
    EXPECT_EQ(r.status, 200u);
    return json::parse(r.body);
  }
  // PUT then POST of a fresh id as the principal of `key`; the POST's answer.
  test_response authorize(const std::string& body, const std::string& key = "billing-key") {
    const std::string id = request_id::mint().to_string();
    EXPECT_EQ(call("PUT", "/payment/authorize/" + id, body, key).status, 201u) << body;
    return call("POST", "/payment/authorize/" + id, "", key);
  }
  // The first column of the first row of `sql` on the service's database, as an integer.
  std::int64_t query(const std::string& sql) {
    std::int64_t n = -1;
    http_.run_on_storage([&] { n = connector_.storage().query_int64(sql).value_or(-1); });
    return n;
  }
  // Rows in the sample's own tables.
  std::int64_t sample_rows() {
    return query(
        "SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM authorizations)"
        " + (SELECT count(*) FROM declines) + (SELECT count(*) FROM ledger)");
  }

  temp_dir dir_;
  server::connector connector_;
  server::http_server http_;
  std::uint16_t port_ = 0;
  std::optional<http_client> client_;
};

std::string authorize_path(const std::string& id) {
  return "/payment/authorize/" + id;
}

TEST_F(payment_service, authorizes_once_and_declines_with_a_stored_402) {
  const std::string a = request_id::mint().to_string();
  ASSERT_EQ(call("PUT", authorize_path(a), R"({"customer_id":"c1","amount_cents":600})").status,
            201u);
  const auto first = call("POST", authorize_path(a));
  EXPECT_EQ(first.status, 200u);
  EXPECT_EQ(first.header("exactly-once-outcome"), "executed");
  EXPECT_EQ(json::parse(first.body), (json{{"authorization_id", a}, {"balance_cents", 400}}));
  const auto again = call("POST", authorize_path(a));
  EXPECT_EQ(again.header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(call("GET", authorize_path(a)).body, first.body);

  // More than the balance: a business outcome, stored and replayed, the account untouched.
  const std::string b = request_id::mint().to_string();
  ASSERT_EQ(call("PUT", authorize_path(b), R"({"customer_id":"c1","amount_cents":500})").status,
            201u);
  const auto declined = call("POST", authorize_path(b));
  EXPECT_EQ(declined.status, 402u);
  EXPECT_EQ(declined.header("exactly-once-outcome"), "executed");
  EXPECT_EQ(json::parse(declined.body), (json{{"reason", "insufficient_funds"}}));
  const auto replayed = call("POST", authorize_path(b));
  EXPECT_EQ(replayed.status, 402u);
  EXPECT_EQ(replayed.header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(call("GET", authorize_path(b)).status, 402u);

  EXPECT_TRUE(eventually([&] { return account("c1")["ledger_entries"] == 1; }));
  EXPECT_EQ(account("c1"), (json{{"customer_id", "c1"},
                                 {"balance_cents", 400},
                                 {"authorizations", 1},
                                 {"ledger_entries", 1}}));
  EXPECT_EQ(call("DELETE", authorize_path(a)).status, 204u);
  EXPECT_EQ(call("DELETE", authorize_path(b)).status, 204u);
  EXPECT_EQ(call("POST", authorize_path(a)).status, 410u);
  EXPECT_EQ(account("c1")["balance_cents"], 400);
  server::state_counts rows;
  http_.run_on_storage([&] { rows = connector_.counts(); });
  EXPECT_EQ(rows.staged + rows.executed, 0);
}

TEST_F(payment_service, refuses_bad_payloads_at_put) {
  for (const char* body :
       {R"({"customer_id":"c2","amount_cents":0})", R"({"customer_id":"c2","amount_cents":-5})",
        R"({"customer_id":"c2","amount_cents":"10"})", R"({"amount_cents":10})",
        R"({"customer_id":"","amount_cents":10})", "customer_id=c2"}) {
    const auto r = call("PUT", authorize_path(request_id::mint().to_string()), body);
    EXPECT_EQ(r.status, 422u) << body;
  }
  EXPECT_EQ(call("GET", "/accounts/c2").status, 404u);  // a refused PUT opens no account
  EXPECT_EQ(sample_rows(), 0);
}

TEST_F(payment_service, accounts_need_the_api_key) {
  EXPECT_EQ(client_->request("GET", "/accounts/c1").status, 401u);
}

// The status of the answer to `request` sent as raw bytes on a connection of its own; 0 if none.
unsigned raw_status(std::uint16_t port, const std::string& request) {
  raw_connection c(port);
  c.send(request);
  const std::string answer = c.read_all(5000);
  if (!answer.starts_with("HTTP/1.1 ") || answer.size() < 12)
    return 0;
  return static_cast<unsigned>(std::stoi(answer.substr(9, 3)));
}

// A raw request as principal billing, closing the connection after the answer.
std::string raw_request(const std::string& method, const std::string& target,
                        const std::string& body = "") {
  return method + " " + target +
         " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer billing-key\r\n"
         "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_F(payment_service, a_get_of_an_unknown_account_answers_404_and_writes_nothing) {
  for (int i = 0; i < 3; ++i) {
    const auto r = call("GET", "/accounts/nobody-" + std::to_string(i));
    EXPECT_EQ(r.status, 404u);
    EXPECT_EQ(r.header("content-type"), "application/problem+json");
    EXPECT_EQ(json::parse(r.body)["type"], "urn:exactly-once:problem:not-found");
  }
  EXPECT_EQ(sample_rows(), 0);
  // An account exists once an authorization of its principal has executed; reading it writes
  // nothing either.
  ASSERT_EQ(authorize(R"({"customer_id":"c3","amount_cents":10})").status, 200u);
  EXPECT_TRUE(eventually([&] { return query("SELECT count(*) FROM ledger") == 1; }));
  const std::int64_t rows = sample_rows();
  EXPECT_EQ(account("c3")["balance_cents"], 990);
  EXPECT_EQ(sample_rows(), rows);
}

TEST_F(payment_service, accounts_belong_to_the_principal_that_opened_them) {
  ASSERT_EQ(authorize(R"({"customer_id":"c4","amount_cents":100})").status, 200u);
  EXPECT_EQ(query("SELECT count(*) FROM accounts WHERE customer_id = 'c4' AND owner = 'billing'"),
            1);

  // Another principal reads nothing: the same 404 as for an account that does not exist.
  const auto read = call("GET", "/accounts/c4", "", "shop-key");
  EXPECT_EQ(read.status, 404u);
  EXPECT_EQ(read.header("content-type"), "application/problem+json");
  const json foreign = json::parse(read.body);
  const json unknown = json::parse(call("GET", "/accounts/c404", "", "shop-key").body);
  EXPECT_EQ(foreign["detail"], "no account c4 for this principal");
  EXPECT_EQ(unknown["detail"], "no account c404 for this principal");
  EXPECT_EQ(json::parse(read.body)["type"], "urn:exactly-once:problem:not-found");

  // Nor can it debit it: a stored 404, replayed, the account untouched, the attempt on record.
  const std::string id = request_id::mint().to_string();
  ASSERT_EQ(call("PUT", "/payment/authorize/" + id, R"({"customer_id":"c4","amount_cents":50})",
                 "shop-key")
                .status,
            201u);
  const auto debit = call("POST", "/payment/authorize/" + id, "", "shop-key");
  EXPECT_EQ(debit.status, 404u);
  EXPECT_EQ(debit.header("exactly-once-outcome"), "executed");
  EXPECT_EQ(json::parse(debit.body)["type"], "urn:exactly-once:problem:not-found");
  const auto again = call("POST", "/payment/authorize/" + id, "", "shop-key");
  EXPECT_EQ(again.status, 404u);
  EXPECT_EQ(again.header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(query("SELECT count(*) FROM declines WHERE customer_id = 'c4'"
                  " AND reason = 'not_owner' AND principal = 'shop'"),
            1);
  EXPECT_EQ(account("c4")["balance_cents"], 900);
  EXPECT_EQ(query("SELECT count(*) FROM authorizations WHERE customer_id = 'c4'"), 1);

  // Its own account of another id is its own.
  ASSERT_EQ(authorize(R"({"customer_id":"c5","amount_cents":1})", "shop-key").status, 200u);
  EXPECT_EQ(call("GET", "/accounts/c5", "", "shop-key").status, 200u);
  EXPECT_EQ(call("GET", "/accounts/c5").status, 404u);
}

TEST_F(payment_service, bad_bytes_are_refused_never_a_500) {
  // Account ids in the path: raw bytes that are not UTF-8, control characters, percent
  // escapes, a length over 64.
  for (const std::string& id :
       {std::string("\xff\xfe"), std::string("c\xc3\x28"), std::string("caf\xc3\xa9"),
        std::string("a\x01z"), std::string("%C3%28"), std::string("a\"b"), std::string(65, 'x')}) {
    EXPECT_EQ(raw_status(port_, raw_request("GET", "/accounts/" + id)), 400u) << id;
  }
  EXPECT_EQ(sample_rows(), 0);
  // An id of the protocol that is not one, in raw bytes.
  EXPECT_EQ(raw_status(port_, raw_request("PUT", "/payment/authorize/\xff\xfe",
                                          R"({"customer_id":"c6","amount_cents":1})")),
            400u);
  // Bodies: not UTF-8, an account id that is not UTF-8 or not an account id. The protocol
  // refuses a payload its route rejects with 422 invalid-payload.
  for (const std::string& body :
       {std::string("\xff\xfe{}"), std::string("{\"customer_id\":\"\xff\",\"amount_cents\":1}"),
        std::string(R"({"customer_id":"a/b","amount_cents":1})"),
        std::string(R"({"customer_id":"\u0000","amount_cents":1})"),
        std::string(R"({"customer_id":"caf\u00e9","amount_cents":1})"),
        "{\"customer_id\":\"" + std::string(65, 'x') + "\",\"amount_cents\":1}"}) {
    const unsigned status = raw_status(
        port_, raw_request("PUT", "/payment/authorize/" + request_id::mint().to_string(), body));
    EXPECT_EQ(status, 422u) << body;
  }
  EXPECT_EQ(sample_rows(), 0);
}

TEST(payment_service_schema, tables_from_before_account_owners_are_refused_at_install) {
  temp_dir dir;
  server::connector c(payment_options(dir));
  c.storage().exec("CREATE TABLE accounts (customer_id TEXT PRIMARY KEY, balance_cents BIGINT)");
  server::http_server http({.api_keys = {{"billing-key", "billing"}}}, c);
  EXPECT_THROW(samples::payment::install(c, http, 1000), std::runtime_error);
}

}  // namespace
}  // namespace exactly::test
