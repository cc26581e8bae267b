// The operator page loaded by headless Chromium (Debian's chromium package) from a real server on
// loopback: the DOM the browser builds shows what the database holds (counts and ids read from
// the database), stored markup stays text, and without the key the browser gets no page.
// Chromium runs with an environment of its own (no LD_PRELOAD or sanitizer options of this
// process), --no-sandbox (the suite runs as root) and a fresh profile.

#include <operator_page_html.hpp>
#include <operator_server.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace exactly::test {
namespace {

// The browser: $EXACTLY_CHROMIUM, else Debian's /usr/bin/chromium.
std::string chromium_path() {
  const char* p = std::getenv("EXACTLY_CHROMIUM");
  return p && *p ? p : "/usr/bin/chromium";
}

// What `chromium --headless --dump-dom url` prints: the DOM after the page loaded. Its stderr
// goes to `log`. Throws when it cannot start, or does not end within a minute (a hang guard).
std::string dump_dom(const std::string& url, const std::filesystem::path& work) {
  const std::filesystem::path profile = work / ("profile-" + std::to_string(::getpid()));
  const std::filesystem::path log = work / "chromium.log";
  std::vector<std::string> args = {chromium_path(),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--user-data-dir=" + profile.string(),
                                   "--dump-dom",
                                   url};
  // Only what Chromium needs: nothing inherited (LD_PRELOAD, ASAN_OPTIONS, ... of a sanitizer
  // run would upset it).
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work.string(),
                                  "LANG=C.UTF-8", "TMPDIR=" + work.string()};
  std::vector<char*> argv, envp;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)  // no other child inherits it
    throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a hung browser is ended with all its processes
    ::dup2(out[1], STDOUT_FILENO);
    const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err >= 0)
      ::dup2(err, STDERR_FILENO);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0)
      ::dup2(in, STDIN_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string dom;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  bool hung = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hung = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      continue;
    char buf[8192];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0)
      break;
    dom.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (hung)
    ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (hung)
    throw std::runtime_error("chromium did not finish within a minute; see " + log.string());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(chromium_path() + " failed (status " + std::to_string(status) +
                             "; is Debian's chromium installed? scripts/install-deps.sh); see " +
                             log.string());
  }
  return dom;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class operator_page_browser : public ::testing::Test {
 protected:
  operator_page_browser() {
    server::operator_page_options o;
    o.enabled = true;
    o.key = operator_server::page_key;
    server_ = std::make_unique<operator_server>(o);
  }
  // The page's URL with the key as the password of Basic credentials ("" = none).
  std::string url(const std::string& key, const std::string& query = "") const {
    const std::string credentials = key.empty() ? "" : "operator:" + key + "@";
    return "http://" + credentials + "127.0.0.1:" + std::to_string(server_->port()) +
           "/_exactly/operator" + query;
  }

  // The 401 answers the server gave so far, from its metrics.
  std::int64_t unauthorized_answers() {
    const std::string text = server_->http().metrics_text();
    const std::string name = "exactly_problems_total{type=\"unauthorized\"} ";
    const auto at = text.find(name);
    if (at == std::string::npos)
      throw std::runtime_error("no unauthorized counter in the metrics");
    return std::stoll(text.substr(at + name.size()));
  }

  temp_dir work_;
  std::unique_ptr<operator_server> server_;
};

TEST_F(operator_page_browser, the_rendered_page_shows_what_the_database_holds) {
  operator_server& s = *server_;
  for (int i = 0; i < 3; ++i)
    s.stage();
  s.stage(operator_server::evil_key);
  for (int i = 0; i < 2; ++i)
    s.execute();
  s.dead_letter("<script>document.title='pwned'</script> card declined & retried");

  const std::string dom = dump_dom(url(operator_server::page_key), work_.path());
  ASSERT_NE(dom.find("id=\"glance\""), std::string::npos) << dom;
  EXPECT_EQ(figure_of(dom, "staged"), s.count(1));
  EXPECT_EQ(figure_of(dom, "executed"), s.count(2));
  EXPECT_EQ(figure_of(dom, "tombstone"), s.count(3));
  EXPECT_EQ(figure_of(dom, "dead-letters"), s.dead_letters());
  EXPECT_EQ(figure_of(dom, "outbox"), s.outbox_pending());
  EXPECT_EQ(total_of(section_of(dom, "staged")), s.count(1));
  EXPECT_EQ(sorted(attribute_values(section_of(dom, "staged"), "data-id")), sorted(s.ids(1)));
  EXPECT_EQ(sorted(attribute_values(section_of(dom, "executed"), "data-id")), sorted(s.ids(2)));
  const std::string dead = section_of(dom, "dead-letters");
  EXPECT_EQ(total_of(dead), s.dead_letters());
  // Stored markup is text in the DOM: no element came of it, and no script ran.
  const std::vector<std::string> errors = s.dead_letter_errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(dead.find("&lt;script&gt;document.title='pwned'&lt;/script&gt; card declined &amp; "
                      "retried"),
            std::string::npos)
      << dead;
  EXPECT_NE(dom.find("&lt;script&gt;alert(\"owner\")&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos) << dom;
  EXPECT_EQ(dom.find("pwned</title>"), std::string::npos);
}

TEST_F(operator_page_browser, a_filter_in_the_address_shows_that_owner_and_state) {
  operator_server& s = *server_;
  const std::string alices = s.stage();
  s.stage(operator_server::evil_key);
  s.execute();
  const std::string dom =
      dump_dom(url(operator_server::page_key, "?state=staged&owner=alice"), work_.path());
  EXPECT_EQ(attribute_values(section_of(dom, "staged"), "data-id"),
            std::vector<std::string>{alices});
  EXPECT_EQ(section_of(dom, "executed"), "");
}

TEST_F(operator_page_browser, without_the_key_the_browser_gets_no_page) {
  const std::string id = server_->stage();
  for (const std::string& key : {std::string(), std::string("wrong-key-0123456789abcdef")}) {
    const std::int64_t refused = unauthorized_answers();
    const std::string dom = dump_dom(url(key), work_.path());
    EXPECT_EQ(dom.find("id=\"glance\""), std::string::npos) << key << ": " << dom;
    EXPECT_EQ(dom.find(id), std::string::npos) << key << ": " << dom;
    EXPECT_GT(unauthorized_answers(), refused) << key;  // the server was asked, and said 401
  }
}

}  // namespace
}  // namespace exactly::test
