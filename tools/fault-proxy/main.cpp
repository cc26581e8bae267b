// fault-proxy: sits between an HTTP client and server and injects faults by probability.
// Prints "listening on HOST:PORT" once it accepts connections; runs until SIGINT/SIGTERM, then
// prints what it did: "requests N dropped_requests N dropped_responses N resets N delays N
// duplicates N".

#include "fault_flags.hpp"

#include <exactly/common/host_port.hpp>

#include <CLI/CLI.hpp>
#include <layered_config.hpp>

#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"fault-proxy: drop, reset, delay and duplicate HTTP requests and responses"};
  exactly::cli_config::layered_config layers(app);
  exactly::tools::fault_options o;
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> upstreams;
  app.add_option("--listen", listen, "HOST:PORT to listen on");
  app.add_option("--upstream", upstreams,
                 "HOST:PORT of the server; repeatable: instances of one service, taken in turn by "
                 "each client connection")
      ->required();
  exactly::tools::add_fault_flags(app, o);
  app.add_option("--seed", o.seed, "random seed for a repeatable fault sequence");
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;
  auto split = [](const std::string& text, std::string& host, std::uint16_t& port) {
    const auto hp = exactly::parse_host_port(text);
    if (!hp)
      throw CLI::ValidationError("expected HOST:PORT: " + text);
    host = hp->host;
    port = hp->port;
  };
  try {
    split(listen, o.listen_host, o.listen_port);
    split(upstreams.front(), o.upstream_host, o.upstream_port);
    for (std::size_t i = 1; i < upstreams.size(); ++i) {
      std::pair<std::string, std::uint16_t> more;
      split(upstreams[i], more.first, more.second);
      o.more_upstreams.push_back(more);
    }
    sigset_t set;  // blocked before the proxy's thread starts, so sigwait below receives them
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    exactly::tools::fault_proxy proxy(o);
    std::cout << "listening on " << o.listen_host << ':' << proxy.start() << std::endl;
    int sig = 0;
    sigwait(&set, &sig);
    const auto c = proxy.counts();
    std::cout << "requests " << c.requests << " dropped_requests " << c.dropped_requests
              << " dropped_responses " << c.dropped_responses << " resets " << c.resets
              << " delays " << c.delays << " duplicates " << c.duplicates << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "fault-proxy: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
