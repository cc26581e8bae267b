// The 3,000 x 1 MiB attack of issue 16 against an in-process server with the default limits:
// many connections each sending a PUT header and a 1 MiB body (all but its last byte, so a served
// connection holds what it read), first without credentials, then with a valid API key. Prints
// the process's resident memory before and its peak during each phase (VmRSS, VmHWM), and with
// --check exits 1 if a peak grew past the bound the README states for the defaults.
//
//   connection-flood [--connections 3000] [--body-bytes 1048576] [--check]

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <CLI/CLI.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

// Under AddressSanitizer, freed blocks wait in its quarantine (256 MiB by default) and stay
// resident, so the peak would measure the quarantine rather than the server: reuse them at once.
// Other ASAN_OPTIONS still apply; a build without ASan never calls this.
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "quarantine_size_mb=0";
}

namespace {

using namespace exactly;
using namespace exactly::test;

// A field of /proc/self/status in KiB (VmRSS, VmHWM), -1 when absent.
long status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Resets VmHWM to the current RSS, so the next read is the peak of what follows.
void reset_peak() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

struct flood_result {
  int refused_or_closed = 0;  // connections the server closed before their body was sent
  int held = 0;               // connections that sent all but their last byte
};

// Opens `n` connections to `port` at once and pushes `request` (but its last byte) on each,
// until every one has either sent that much or been closed by the server; then closes them all.
// `peak_at_end`: called while they are still open.
template <class F>
flood_result flood(std::uint16_t port, int n, const std::string& request, F peak_at_end) {
  struct conn {
    int fd;
    std::size_t sent = 0;
    bool done = false;
  };
  std::vector<conn> conns;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      std::perror("socket");
      std::exit(2);
    }
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // EINPROGRESS: poll
    conns.push_back({fd});
  }
  const std::size_t goal = request.size() - 1;
  flood_result r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::vector<pollfd> fds;
  std::vector<std::size_t> which;
  for (;;) {
    fds.clear();
    which.clear();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      if (!conns[i].done) {
        fds.push_back({conns[i].fd, POLLOUT, 0});
        which.push_back(i);
      }
    }
    if (fds.empty() || std::chrono::steady_clock::now() > deadline)
      break;
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t k = 0; k < fds.size(); ++k) {
      conn& c = conns[which[k]];
      if (fds[k].revents & (POLLERR | POLLHUP)) {
        c.done = true;
        ++r.refused_or_closed;
        continue;
      }
      if (!(fds[k].revents & POLLOUT))
        continue;
      const ssize_t w = ::send(c.fd, request.data() + c.sent, goal - c.sent, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINPROGRESS) {
          c.done = true;
          ++r.refused_or_closed;
        }
        continue;
      }
      c.sent += static_cast<std::size_t>(w);
      if (c.sent == goal) {
        c.done = true;
        ++r.held;
      }
    }
  }
  // What was sent may still sit in the kernel's socket buffers: give the server time to read it.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  peak_at_end();
  for (conn& c : conns)
    ::close(c.fd);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int connections = 3000;
  std::size_t body_bytes = 1 << 20;
  bool check = false;
  CLI::App app{"connections each sending a large body, unauthenticated then authenticated"};
  app.add_option("--connections", connections, "connections opened at once");
  app.add_option("--body-bytes", body_bytes, "the Content-Length of each PUT");
  app.add_flag("--check", check, "exit 1 if a peak exceeds the README's bound for the defaults");
  CLI11_PARSE(app, argc, argv);
  std::signal(SIGPIPE, SIG_IGN);

  echo_server_config cfg;
  const server::server_options defaults;
  cfg.max_body_bytes = defaults.max_body_bytes;  // the defaults: 1 MiB bodies, 512 connections
  cfg.max_connections = defaults.max_connections;
  echo_server server(cfg);
  {
    http_client warm(server.port());
    warm.request("GET", "/healthz");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  // The README's bounds for the defaults (512 connections, 16 KiB headers, 1 MiB bodies).
  const long unauthenticated_bound_kib = 64 * 1024;
  const long authenticated_bound_kib = 640 * 1024;
  bool within = true;
  std::printf("defaults: max_connections %zu, max_header_bytes %zu, max_body_bytes %zu\n",
              defaults.max_connections, defaults.max_header_bytes, defaults.max_body_bytes);
  for (const bool authenticated : {false, true}) {
    const std::string path = path_of(request_id::mint(server.now_ms()).to_string());
    std::string request =
        "PUT " + path + " HTTP/1.1\r\nHost: x\r\n" +
        (authenticated ? "Authorization: Bearer alice-key\r\n" : "") +
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body_bytes) +
        "\r\n\r\n";
    request.append(body_bytes, 'x');
    const long before = status_kib("VmRSS");
    reset_peak();
    long peak = 0;
    const auto started = std::chrono::steady_clock::now();
    const flood_result r =
        flood(server.port(), connections, request, [&] { peak = status_kib("VmHWM"); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const long grew = peak - before;
    const long bound = authenticated ? authenticated_bound_kib : unauthenticated_bound_kib;
    std::printf(
        "%s: %d connections x %zu bytes: %d sent all but their last byte, %d were closed by "
        "the server before; VmRSS before %ld KiB, VmHWM during %ld KiB (+%ld KiB, bound +%ld KiB); "
        "%.1f s\n",
        authenticated ? "authenticated" : "unauthenticated", connections, body_bytes, r.held,
        r.refused_or_closed, before, peak, grew, bound, seconds);
    within = within && grew <= bound;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the server lets go
  }
  const std::string m = server.metrics();
  const auto at = m.find("\nexactly_connections_refused_total ");
  if (at != std::string::npos)
    std::printf("%s\n", m.substr(at + 1, m.find('\n', at + 1) - at - 1).c_str());
  std::fflush(stdout);
  return check && !within ? 1 : 0;
}
