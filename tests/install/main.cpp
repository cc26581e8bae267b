// Starts and stops a connector server from the installed package.
#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <filesystem>
#include <iostream>

int main() {
  const auto db = std::filesystem::temp_directory_path() /
                  ("exactly-install-" + exactly::request_id::mint().to_string() + ".db");
  {
    exactly::server::connector c({.db_path = db.string()});
    exactly::server::http_server s({.open_mode = true}, c);
    std::cout << "port " << s.start() << '\n';
    s.stop();
  }
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(db.string() + suffix);
  return 0;
}
