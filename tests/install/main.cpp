// Starts and stops a connector server, and a client runtime reporting its metrics, from the
// installed package.
#include <exactly/client/runtime.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <filesystem>
#include <iostream>

int main() {
  const auto db = std::filesystem::temp_directory_path() /
                  ("exactly-install-" + exactly::request_id::mint().to_string() + ".db");
  const std::string client_db = db.string() + ".client";
  {
    exactly::server::connector c({.db_path = db.string()});
    exactly::server::http_server s({.open_mode = true}, c);
    std::cout << "port " << s.start() << '\n';
    s.stop();
    // The client's metrics come from a private dependency (prometheus-cpp) the package finds.
    exactly::client::runtime rt(client_db, {}, [](exactly::sqlite::connection& conn) {
      std::vector<std::unique_ptr<exactly::client::endpoint>> eps;
      eps.push_back(std::make_unique<exactly::client::endpoint>("installed", conn));
      return eps;
    });
    rt.start();
    const std::string metrics = rt.metrics_text();
    rt.stop();
    if (metrics.find("exactly_client_queue_messages{endpoint=\"installed\"") == std::string::npos) {
      std::cerr << "no client metrics:\n" << metrics;
      return 1;
    }
  }
  for (const std::string& base : {db.string(), client_db, client_db + ".attempts"}) {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(base + suffix);
  }
  return 0;
}
