// The operator page on the real server: off by default, its own key (HTTP Basic password or
// Bearer, never an API key), read-only, every stored text escaped, tables bounded with "N more",
// filters by state and owner, and figures that match the database.

#include <http_client.hpp>
#include <operator_page_html.hpp>
#include <operator_server.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/server/test_control.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace exactly::test {
namespace {

server::operator_page_options page_on(std::size_t max_rows = 100) {
  server::operator_page_options o;
  o.enabled = true;
  o.key = operator_server::page_key;
  o.max_rows = max_rows;
  return o;
}

// GET `target` with the Authorization header `authorization` ("" = none).
test_response get(operator_server& s, const std::string& target, const std::string& authorization) {
  http_client c(s.port());
  header_list h;
  if (!authorization.empty())
    h.emplace_back("Authorization", authorization);
  return c.request("GET", target, "", h);
}

// The page as an operator's browser gets it.
std::string page(operator_server& s, const std::string& query = "") {
  const auto r = get(s, "/_exactly/operator" + query,
                     "Basic " + base64("operator:" + operator_server::page_key));
  EXPECT_EQ(r.status, 200u) << r.body;
  return r.body;
}

TEST(operator_page, off_by_default_its_path_is_an_unknown_route) {
  operator_server s{server::operator_page_options{}};
  const auto with_api_key = get(s, "/_exactly/operator", "Bearer " + operator_server::alice_key);
  EXPECT_EQ(with_api_key.status, 404u) << with_api_key.body;
  const auto with_page_key = get(s, "/_exactly/operator", "Bearer " + operator_server::page_key);
  EXPECT_EQ(with_page_key.status, 401u);
  EXPECT_EQ(with_page_key.header("www-authenticate"), "Bearer");  // the API's, not the page's
}

TEST(operator_page, without_its_key_is_401_asking_a_browser_for_basic_credentials) {
  operator_server s{page_on()};
  const std::string& key = operator_server::page_key;
  for (const std::string& auth : std::vector<std::string>{
           std::string(), "Bearer wrong-key-0123456789abcdef",
           "Bearer " + operator_server::alice_key,
           "Basic " + base64("operator:wrong-key-0123456789"), "Basic " + base64("operator"),
           "Basic " + base64(key), "Basic " + base64(key + ":x"), "Basic !!notbase64!!",
           "Bearer " + key + "x", "Bearer " + key.substr(0, key.size() - 1), "Digest " + key,
           key}) {
    const auto r = get(s, "/_exactly/operator", auth);
    EXPECT_EQ(r.status, 401u) << auth;
    EXPECT_EQ(r.header("www-authenticate"), "Basic realm=\"exactly\"") << auth;
    EXPECT_EQ(r.body.find("glance"), std::string::npos) << auth;
  }
}

TEST(operator_page, its_key_opens_it_as_basic_password_or_bearer) {
  operator_server s{page_on()};
  const std::string& key = operator_server::page_key;
  for (const std::string& auth :
       {"Basic " + base64("operator:" + key), "Basic " + base64(":" + key),
        "basic " + base64("anyone:" + key), "Bearer " + key}) {
    const auto r = get(s, "/_exactly/operator", auth);
    EXPECT_EQ(r.status, 200u) << auth << ": " << r.body;
    EXPECT_EQ(r.header("content-type"), "text/html; charset=utf-8");
    EXPECT_NE(r.header("content-security-policy").find("default-src 'none'"), std::string::npos);
    EXPECT_EQ(r.header("cache-control"), "no-store");
    EXPECT_NE(r.body.find("id=\"glance\""), std::string::npos) << auth;
  }
  // The page's key opens nothing else: not the API, not /_exactly/test/.
  const auto api = get(s, path_of(request_id::mint().to_string()), "Bearer " + key);
  EXPECT_EQ(api.status, 401u);
}

TEST(operator_page, is_read_only_and_its_key_is_checked_before_a_body_is_read) {
  operator_server s{page_on()};
  {
    raw_connection raw(s.port());
    raw.send(
        "POST /_exactly/operator HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        "Content-Length: 10\r\n\r\n");
    const std::string r = raw.read_all(3000);
    EXPECT_EQ(r.find("100 Continue"), std::string::npos) << r;
    EXPECT_NE(r.find("HTTP/1.1 401"), std::string::npos) << r;
  }
  http_client c(s.port());
  const header_list h = {{"Authorization", "Bearer " + operator_server::page_key}};
  for (const char* method : {"POST", "PUT", "DELETE"}) {
    const auto r = c.request(method, "/_exactly/operator", "", h);
    EXPECT_EQ(r.status, 405u) << method;
    EXPECT_EQ(r.header("allow"), "GET");
  }
  EXPECT_EQ(c.request("GET", "/_exactly/operator/anything", "", h).status, 404u);
}

TEST(operator_page, refuses_a_weak_key_an_api_key_or_the_test_control_key) {
  auto with_key = [](std::string key) {
    server::operator_page_options o = page_on();
    o.key = std::move(key);
    return o;
  };
  EXPECT_THROW(operator_server{with_key("")}, std::invalid_argument);
  EXPECT_THROW(operator_server{with_key("only-15-chars-x")}, std::invalid_argument);
  EXPECT_THROW(operator_server{with_key(operator_server::alice_key)}, std::invalid_argument);
  EXPECT_THROW(operator_server{page_on(0)}, std::invalid_argument);
  EXPECT_NO_THROW(operator_server{with_key("exactly-16-chars")});

  temp_dir dir;
  server::connector_options co;
  co.db_path = (dir.path() / "server.db").string();
  auto clock = std::make_shared<server::test_clock>();
  co.clock = clock->fn();
  server::connector c(co);
  server::server_options so;
  so.api_keys = {{operator_server::alice_key, "alice"}};
  so.test_control.key = operator_server::page_key;
  so.test_control.clock = clock;
  so.operator_page = page_on();
  EXPECT_THROW(server::http_server(so, c), std::invalid_argument);
  so.test_control.key = "another-key-0123456789";
  EXPECT_NO_THROW(server::http_server(so, c));
}

TEST(operator_page, shows_markup_in_owners_routes_ids_and_errors_as_text) {
  operator_server s{page_on()};
  const std::string evil_id = s.stage(operator_server::evil_key);
  s.insert_interaction("/r/<script>alert('route')</script>/{id}", "<img src=x onerror=alert(1)>",
                       "alice", 1, 1000);
  s.dead_letter("<script>alert(\"dead\")</script> & <b>bold</b>");
  s.insert_waiting_message("<i>type</i>", "<script>alert('retry')</script>");
  const std::string html = page(s);
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;owner&quot;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("/r/&lt;script&gt;alert(&#39;route&#39;)&lt;/script&gt;/{id}"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;dead&quot;)&lt;/script&gt; &amp; "
                      "&lt;b&gt;bold&lt;/b&gt;"),
            std::string::npos)
      << html;
  EXPECT_NE(section_of(html, "staged").find(evil_id), std::string::npos);
  const std::string outbox = section_of(html, "outbox");
  EXPECT_EQ(attribute_values(outbox, "data-seq").size(), 1u) << outbox;
  EXPECT_NE(outbox.find("&lt;i&gt;type&lt;/i&gt;"), std::string::npos) << outbox;
  EXPECT_NE(outbox.find("&lt;script&gt;alert(&#39;retry&#39;)&lt;/script&gt;"), std::string::npos);

  // The owner filter finds the evil owner's row, and shows the owner back escaped.
  const std::string filtered = page(s, "?owner=%3Cscript%3Ealert(%22owner%22)%3C%2Fscript%3E");
  EXPECT_EQ(filtered.find("<script"), std::string::npos) << filtered;
  EXPECT_EQ(attribute_values(section_of(filtered, "staged"), "data-id"),
            std::vector<std::string>{evil_id});
}

TEST(operator_page, tables_are_bounded_and_say_how_many_more_there_are) {
  operator_server s{page_on(3)};
  std::vector<std::string> staged;
  for (int i = 0; i < 5; ++i) {
    staged.push_back(request_id::mint().to_string());
    s.insert_interaction("/vectors/echo/{id}", staged.back(), "alice", 1, 1000 + 5 - i);
  }
  for (int i = 0; i < 4; ++i)
    s.insert_dead_letter("kind-" + std::to_string(i), "failure " + std::to_string(i));
  const std::string html = page(s);
  const std::string staged_section = section_of(html, "staged");
  // Oldest first: the rows were inserted newest first.
  EXPECT_EQ(attribute_values(staged_section, "data-id"),
            (std::vector<std::string>{staged[4], staged[3], staged[2]}));
  EXPECT_EQ(total_of(staged_section), 5);
  EXPECT_EQ(more_of(staged_section), 2);
  const std::string dead = section_of(html, "dead-letters");
  EXPECT_EQ(attribute_values(dead, "data-seq"), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(total_of(dead), 4);
  EXPECT_EQ(more_of(dead), 1);
  EXPECT_EQ(more_of(section_of(html, "executed")), 0);
}

TEST(operator_page, figures_and_listings_match_the_database) {
  operator_server s{page_on()};
  const std::string staged = s.stage();
  const std::string executed = s.execute();
  const std::string bobs = s.stage(operator_server::evil_key);
  s.dead_letter("the handler failed");
  const std::string html = page(s);
  EXPECT_EQ(figure_of(html, "staged"), s.count(1));
  EXPECT_EQ(figure_of(html, "executed"), s.count(2));
  EXPECT_EQ(figure_of(html, "tombstone"), s.count(3));
  EXPECT_EQ(figure_of(html, "dead-letters"), s.dead_letters());
  EXPECT_EQ(figure_of(html, "outbox"), s.outbox_pending());
  EXPECT_EQ(figure_of(html, "executions"), 2);  // the echo execution and the failing route's
  EXPECT_EQ(s.executions_total(), 1);           // (the echo app counts its own)
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(attribute_values(section_of(html, "staged"), "data-id")), sorted(s.ids(1)));
  EXPECT_EQ(sorted(attribute_values(section_of(html, "executed"), "data-id")), sorted(s.ids(2)));
  EXPECT_NE(section_of(html, "dead-letters").find("the handler failed"), std::string::npos);

  // ?state= shows that state only; ?owner= that owner's rows, with its own total.
  const std::string only_executed = page(s, "?state=executed");
  EXPECT_EQ(section_of(only_executed, "staged"), "");
  EXPECT_EQ(sorted(attribute_values(section_of(only_executed, "executed"), "data-id")),
            sorted(s.ids(2)));
  const std::string alices = page(s, "?owner=alice&state=staged");
  EXPECT_EQ(attribute_values(section_of(alices, "staged"), "data-id"),
            std::vector<std::string>{staged});
  EXPECT_EQ(total_of(section_of(alices, "staged")), 1);
  (void)bobs;
  (void)executed;

  const header_list h = {{"Authorization", "Bearer " + operator_server::page_key}};
  http_client c(s.port());
  EXPECT_EQ(c.request("GET", "/_exactly/operator?state=bogus", "", h).status, 400u);
  EXPECT_EQ(c.request("GET", "/_exactly/operator?owner=%zz", "", h).status, 400u);
  EXPECT_EQ(c.request("GET", "/_exactly/operator?limit=5", "", h).status, 400u);
}

}  // namespace
}  // namespace exactly::test
