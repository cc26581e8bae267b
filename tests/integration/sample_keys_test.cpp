// The sample servers' PRINCIPAL:KEY spelling and the options that read it (samples/keys).

#include <api_keys.hpp>
#include <echo_server.hpp>
#include <key_options.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace exactly::test {
namespace {

using samples::keys::key_flags;
using samples::keys::parse_entry;
using samples::keys::parse_lines;
using samples::keys::parse_list;
using samples::keys::resolve_keys;

const std::string key1 = "0123456789abcdef-one";
const std::string key2 = "0123456789abcdef-two";

// The message of the std::invalid_argument `fn` throws, or "" when it throws none.
template <class F>
std::string refusal(F fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(sample_keys, an_entry_is_principal_colon_key) {
  const server::api_key k = parse_entry("billing:" + key1);
  EXPECT_EQ(k.principal, "billing");
  EXPECT_EQ(k.key, key1);
  // The first ':' splits: the key may hold ':' and '=' (base64 padding).
  const server::api_key odd = parse_entry("ops.team@x:abc:def=ghij/klmn+op==");
  EXPECT_EQ(odd.principal, "ops.team@x");
  EXPECT_EQ(odd.key, "abc:def=ghij/klmn+op==");
}

TEST(sample_keys, bad_entries_are_refused_without_quoting_the_key) {
  const std::string secret = "s3cr3t-s3cr3t-s3cr3t";
  for (const std::string& entry : std::vector<std::string>{
           secret, ":" + secret, "bill ing:" + secret, "bill/ing:" + secret,
           "billing:", "billing:short", "billing:" + secret + " x", "billing:" + secret + "\x7f",
           "billing:" + secret + "\xc3\xa9", std::string(65, 'p') + ":" + secret,
           "billing:" + std::string(513, 'k')}) {
    const std::string why = refusal([&] { parse_entry(entry); });
    EXPECT_FALSE(why.empty()) << entry;
    EXPECT_EQ(why.find(secret), std::string::npos) << why;
  }
  EXPECT_NE(refusal([] { parse_entry("billing:short"); }).find("16 to 512"), std::string::npos);
}

TEST(sample_keys, a_file_has_one_entry_a_line_and_bad_lines_are_named) {
  const auto keys = parse_lines(
      "# keys of the payment service\n\nbilling:" + key1 + "\r\n  shop:" + key2 + "  \n",
      "keys.txt");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].principal, "billing");
  EXPECT_EQ(keys[0].key, key1);
  EXPECT_EQ(keys[1].principal, "shop");
  EXPECT_EQ(keys[1].key, key2);
  const std::string why =
      refusal([] { parse_lines("# c\nbilling:" + key1 + "\n\nno-colon-here\n", "keys.txt"); });
  EXPECT_EQ(why.rfind("keys.txt line 4: expected PRINCIPAL:KEY", 0), 0u) << why;
}

TEST(sample_keys, a_list_is_separated_by_whitespace_and_bad_entries_are_numbered) {
  const auto keys = parse_list(" billing:" + key1 + "\n\tshop:" + key2, "EXACTLY_API_KEYS");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[1].principal, "shop");
  const std::string why =
      refusal([] { parse_list("billing:" + key1 + " shop:tiny", "EXACTLY_API_KEYS"); });
  EXPECT_EQ(why.rfind("EXACTLY_API_KEYS entry 2: the key of principal shop", 0), 0u) << why;
}

TEST(sample_keys, keys_come_from_the_file_the_environment_and_the_command_line) {
  temp_dir dir;
  const auto file = dir.path() / "keys";
  std::ofstream(file) << "billing:" << key1 << "\n";
  std::filesystem::permissions(
      file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::ostringstream warn;
  key_flags f{.entries = {"ops:0123456789abcdef-three"}, .file = file.string()};
  const std::string env = "shop:" + key2;
  const auto setup = resolve_keys(f, env.c_str(), warn);
  EXPECT_FALSE(setup.open_mode);
  ASSERT_EQ(setup.keys.size(), 3u);
  EXPECT_EQ(setup.keys[0].principal, "billing");
  EXPECT_EQ(setup.keys[1].principal, "shop");
  EXPECT_EQ(setup.keys[2].principal, "ops");
  // The command line's key is visible to other users: said once, and the file was private.
  EXPECT_NE(warn.str().find("--api-key puts the key on the command line"), std::string::npos);
  EXPECT_EQ(warn.str().find("readable by other users"), std::string::npos);
  EXPECT_EQ(warn.str().find(key1), std::string::npos);

  // A file others can read works, with a warning.
  std::filesystem::permissions(file, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  std::ostringstream warn2;
  EXPECT_EQ(resolve_keys({.file = file.string()}, nullptr, warn2).keys.size(), 1u);
  EXPECT_NE(warn2.str().find("readable by other users"), std::string::npos);
}

TEST(sample_keys, no_keys_without_open_and_no_keys_with_open_are_refused) {
  std::ostringstream warn;
  EXPECT_NE(refusal([&] { resolve_keys({}, nullptr, warn); }).find("no API keys"),
            std::string::npos);
  EXPECT_NE(refusal([&] { resolve_keys({}, " \n", warn); }).find("no API keys"), std::string::npos);
  const std::string env = "shop:" + key2;
  EXPECT_NE(refusal([&] { resolve_keys({.open = true}, env.c_str(), warn); }).find("--open"),
            std::string::npos);
  const auto open = resolve_keys({.open = true}, nullptr, warn);
  EXPECT_TRUE(open.open_mode);
  EXPECT_TRUE(open.keys.empty());
  EXPECT_NE(warn.str().find("no authentication"), std::string::npos);
}

TEST(sample_keys, one_key_for_two_principals_is_refused_and_two_keys_for_one_are_not) {
  std::ostringstream warn;
  const std::string both = "billing:" + key1 + " shop:" + key1;
  const std::string why = refusal([&] { resolve_keys({}, both.c_str(), warn); });
  EXPECT_NE(why.find("principals billing and shop"), std::string::npos) << why;
  EXPECT_EQ(why.find(key1), std::string::npos);
  const std::string rotation = "billing:" + key1 + " billing:" + key2;
  EXPECT_EQ(resolve_keys({}, rotation.c_str(), warn).keys.size(), 2u);
}

TEST(sample_keys, an_unreadable_or_empty_file_is_refused) {
  temp_dir dir;
  std::ostringstream warn;
  const std::string missing = (dir.path() / "missing").string();
  EXPECT_NE(refusal([&] { resolve_keys({.file = missing}, nullptr, warn); }).find("cannot read"),
            std::string::npos);
  const auto empty = dir.path() / "empty";
  std::ofstream(empty) << "# nothing yet\n";
  EXPECT_NE(
      refusal([&] { resolve_keys({.file = empty.string()}, nullptr, warn); }).find("holds no"),
      std::string::npos);
}

}  // namespace
}  // namespace exactly::test
