// The sample servers' binaries started as an operator would: where keys come from, what happens
// without them, and that a key never lands in the database or the log.

#include <child_process.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <sys/wait.h>

#include <csignal>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace exactly::test {
namespace {

const std::string payment_service = EXACTLY_PAYMENT_SERVICE;
const std::string echo_server_bin = EXACTLY_ECHO_SERVER;
const std::string billing_key = "b1ll1ng-k3y-0123456789abcdef";
const std::string shop_key = "sh0p-k3y-0123456789abcdef";

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The arguments quoted for /bin/sh.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Ends a started server with SIGTERM: a graceful stop, exit status 0, even right after it printed
// "listening" (the server takes SIGTERM over before it starts listening).
void stop(child_process& p) {
  const int status = p.terminate();
  EXPECT_EQ(status, 0);
}

class sample_startup : public ::testing::Test {
 protected:
  // `env` (NAME=value words, may be "") then the program and its arguments, as a shell line
  // whose stderr goes to err_path().
  std::string command(const std::string& env, const std::vector<std::string>& argv) const {
    std::string line = "exec env -u EXACTLY_API_KEYS " + env;
    for (const std::string& a : argv)
      line += " " + quoted(a);
    return line + " 2>" + quoted(err_path().string());
  }
  // Runs a program that must exit by itself (10 s at most); its exit status.
  int exit_status(const std::string& env, const std::vector<std::string>& argv) const {
    const int status =
        std::system(("timeout 10 sh -c " + quoted(command(env, argv)) + " >/dev/null").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Starts a server and returns once it listens; port() then has its port.
  std::unique_ptr<child_process> start(const std::string& env,
                                       const std::vector<std::string>& argv) {
    auto p = std::make_unique<child_process>(
        std::vector<std::string>{"/bin/sh", "-c", command(env, argv)}, "", true);
    const std::string& line = p->first_line();
    port_ = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
    return p;
  }
  std::filesystem::path err_path() const { return dir_.path() / "stderr"; }
  std::string err() const { return read_file(err_path()); }
  std::string db() const { return (dir_.path() / "payment.db").string(); }
  std::vector<std::string> payment(std::vector<std::string> more) const {
    std::vector<std::string> argv = {payment_service, "--listen", "127.0.0.1:0", "--db", db()};
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  }
  std::string keys_file(const std::string& text) const {
    const auto p = dir_.path() / "keys";
    std::ofstream(p) << text;
    std::filesystem::permissions(
        p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return p.string();
  }
  unsigned status(const std::string& method, const std::string& target, const std::string& key,
                  const std::string& body = "") {
    http_client c(port_);
    std::vector<std::pair<std::string, std::string>> h = {{"Content-Type", "application/json"}};
    if (!key.empty())
      h.push_back({"Authorization", "Bearer " + key});
    return c.request(method, target, body, h).status;
  }

  temp_dir dir_;
  std::uint16_t port_ = 0;
};

TEST_F(sample_startup, without_keys_or_open_the_servers_refuse_to_start) {
  EXPECT_EQ(exit_status("", payment({})), 2);
  EXPECT_NE(err().find("no API keys"), std::string::npos) << err();
  EXPECT_NE(err().find("--open"), std::string::npos) << err();
  EXPECT_EQ(exit_status("", {echo_server_bin, "--listen", "127.0.0.1:0", "--db",
                             (dir_.path() / "echo.db").string()}),
            2);
  EXPECT_NE(err().find("no API keys"), std::string::npos) << err();
  // An empty environment variable is no key either.
  EXPECT_EQ(exit_status("EXACTLY_API_KEYS=", payment({})), 2);
}

TEST_F(sample_startup, open_mode_is_chosen_with_open_and_excludes_keys) {
  EXPECT_EQ(exit_status("", payment({"--open", "--api-key", "billing:" + billing_key})), 2);
  EXPECT_NE(err().find("--open"), std::string::npos) << err();
  auto p = start("", payment({"--open"}));
  EXPECT_NE(err().find("no authentication"), std::string::npos) << err();
  EXPECT_EQ(status("GET", "/accounts/c1", ""), 404u);  // served without a key
  stop(*p);
}

TEST_F(sample_startup, a_bad_keys_file_line_is_a_startup_error_naming_the_line) {
  const std::string file =
      keys_file("# payment keys\nbilling:" + billing_key + "\nshop " + shop_key + "\n");
  EXPECT_EQ(exit_status("", payment({"--api-keys-file", file})), 2);
  EXPECT_NE(err().find(file + " line 3: expected PRINCIPAL:KEY"), std::string::npos) << err();
  EXPECT_EQ(err().find(shop_key), std::string::npos) << "the error quotes the key";
  EXPECT_EQ(exit_status("", payment({"--api-keys-file", (dir_.path() / "none").string()})), 2);
  EXPECT_NE(err().find("cannot read"), std::string::npos) << err();
  EXPECT_EQ(
      exit_status("EXACTLY_API_KEYS=" + quoted("billing:" + billing_key + " shop:x"), payment({})),
      2);
  EXPECT_NE(err().find("EXACTLY_API_KEYS entry 2"), std::string::npos) << err();
}

TEST_F(sample_startup, keys_from_the_environment_name_principals) {
  auto p = start("EXACTLY_API_KEYS=" + quoted("billing:" + billing_key + " shop:" + shop_key),
                 payment({}));
  EXPECT_EQ(err().find("--api-key puts"), std::string::npos) << err();
  EXPECT_EQ(status("GET", "/accounts/c1", billing_key), 404u);
  EXPECT_EQ(status("GET", "/accounts/c1", "wrong-key-0123456789"), 401u);
  EXPECT_EQ(status("GET", "/accounts/c1", ""), 401u);
  stop(*p);
}

TEST_F(sample_startup, a_key_on_the_command_line_works_with_a_warning) {
  auto p = start("", payment({"--api-key", "billing:" + billing_key}));
  EXPECT_NE(err().find("other users of this machine see it"), std::string::npos) << err();
  EXPECT_EQ(status("GET", "/accounts/c1", billing_key), 404u);
  stop(*p);
  EXPECT_EQ(err().find(billing_key), std::string::npos);
  // The echo server spells keys the same way, and not the old KEY=PRINCIPAL.
  auto e = start("", {echo_server_bin, "--listen", "127.0.0.1:0", "--db",
                      (dir_.path() / "echo.db").string(), "--api-key", "me:" + billing_key});
  EXPECT_EQ(status("GET", "/vectors/echo/" + request_id::mint().to_string(), billing_key), 404u);
  stop(*e);
  EXPECT_EQ(exit_status("", {echo_server_bin, "--db", (dir_.path() / "echo.db").string(),
                             "--api-key", billing_key + "=me"}),
            2);
}

TEST_F(sample_startup, the_owner_is_the_principal_and_no_key_is_stored_or_logged) {
  auto p = start("", payment({"--api-keys-file",
                              keys_file("billing:" + billing_key + "\nshop:" + shop_key + "\n")}));
  const std::string id = request_id::mint().to_string();
  const std::string target = "/payment/authorize/" + id;
  ASSERT_EQ(status("PUT", target, billing_key, R"({"customer_id":"c1","amount_cents":100})"), 201u);
  ASSERT_EQ(status("POST", target, billing_key), 200u);
  EXPECT_EQ(status("GET", "/accounts/c1", billing_key), 200u);
  EXPECT_EQ(status("GET", "/accounts/c1", shop_key), 404u);
  EXPECT_EQ(status("GET", target, shop_key), 404u);
  const std::string other = "/payment/authorize/" + request_id::mint().to_string();
  ASSERT_EQ(status("PUT", other, shop_key, R"({"customer_id":"c1","amount_cents":5})"), 201u);
  EXPECT_EQ(status("POST", other, shop_key), 404u);
  stop(*p);
  {
    sqlite::connection c(db());
    EXPECT_EQ(c.query_int64("SELECT count(*) FROM exactly_interactions WHERE owner = 'billing'"),
              1);
    EXPECT_EQ(c.query_int64("SELECT count(*) FROM exactly_interactions WHERE owner = 'shop'"), 1);
    EXPECT_EQ(c.query_int64("SELECT count(*) FROM accounts WHERE owner = 'billing'"), 1);
    EXPECT_EQ(c.query_int64("SELECT balance_cents FROM accounts WHERE customer_id = 'c1'"),
              100'000 - 100);
  }
  // Every byte the service wrote: the database with its WAL, and its log.
  for (const auto& f : std::filesystem::directory_iterator(dir_.path())) {
    if (f.path().filename() == "keys")
      continue;
    const std::string bytes = read_file(f.path());
    EXPECT_EQ(bytes.find(billing_key), std::string::npos) << f.path();
    EXPECT_EQ(bytes.find(shop_key), std::string::npos) << f.path();
  }
}

}  // namespace
}  // namespace exactly::test
