// The billing sample's payment service alone, driven over HTTP through the whole protocol.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <payment_app.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

namespace exactly::test {
namespace {

using nlohmann::json;

class payment_service : public ::testing::Test {
 protected:
  payment_service()
      : connector_({.db_path = (dir_.path() / "payment.db").string()}),
        http_({.api_keys = {{"billing-key", "billing"}}}, connector_) {
    samples::payment::install(connector_, http_, 1000);
    port_ = http_.start();
    client_.emplace(port_);
  }

  test_response call(const std::string& method, const std::string& target,
                     const std::string& body = "") {
    return client_->request(
        method, target, body,
        {{"Authorization", "Bearer billing-key"}, {"Content-Type", "application/json"}});
  }
  json account(const std::string& customer) {
    const auto r = call("GET", "/accounts/" + customer);
    EXPECT_EQ(r.status, 200u);
    return json::parse(r.body);
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
  EXPECT_EQ(account("c2"), (json{{"customer_id", "c2"},
                                 {"balance_cents", 1000},
                                 {"authorizations", 0},
                                 {"ledger_entries", 0}}));
}

TEST_F(payment_service, accounts_need_the_api_key) {
  EXPECT_EQ(client_->request("GET", "/accounts/c1").status, 401u);
}

}  // namespace
}  // namespace exactly::test
