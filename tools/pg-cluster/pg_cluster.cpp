// A throwaway cluster: initdb, pg_ctl, a free port, a schema per user (see pg_cluster.hpp).
#include "pg_cluster_tool.hpp"

#include <exactly/common/postgres.hpp>

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string_view>

namespace exactly::tools {
namespace {

namespace fs = std::filesystem;

// The directory of PostgreSQL's server programs (Debian: /usr/lib/postgresql/<major>/bin).
std::string server_bindir() {
  const fs::path root = "/usr/lib/postgresql";
  std::error_code ec;
  for (const auto& major : fs::directory_iterator(root, ec)) {
    if (fs::exists(major.path() / "bin" / "initdb"))
      return (major.path() / "bin").string();
  }
  throw std::runtime_error(
      "PostgreSQL's server programs (initdb, pg_ctl) are missing: install them with "
      "`bash scripts/install-deps.sh` (Debian package postgresql-15)");
}

bool running_as_root() {
  return ::geteuid() == 0;
}

// Runs `cmd` through the shell, as the postgres user when we are root; throws on failure.
void run(const std::string& cmd) {
  const std::string full =
      running_as_root() ? "runuser -u postgres -- sh -c '" + cmd + "'" : "sh -c '" + cmd + "'";
  if (std::system(full.c_str()) != 0)
    throw std::runtime_error("failed: " + cmd);
}

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(s);
    throw std::runtime_error("no free port");
  }
  ::close(s);
  return ntohs(a.sin_port);
}

std::string conninfo_for(int port) {
  return "host=127.0.0.1 port=" + std::to_string(port) + " user=postgres dbname=postgres";
}

void pg_ctl_start(const std::string& dir, const std::string& log, int port,
                  const std::string& environment = "") {
  run(environment + " " + server_bindir() + "/pg_ctl -w -t 60 -D " + dir + "/data -l " + log +
      " -o \"-p " + std::to_string(port) +
      " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dir +
      " -c fsync=on -c synchronous_commit=on -c max_connections=200\" start >/dev/null");
}

}  // namespace

pg_cluster::pg_cluster() {
  const std::string bindir = server_bindir();
  std::string tmpl = (std::filesystem::temp_directory_path() / "exactly-pg-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error("mkdtemp " + tmpl + " failed");
  dir_ = tmpl;
  if (running_as_root()) {
    const passwd* pw = ::getpwnam("postgres");
    if (!pw)
      throw std::runtime_error("no `postgres` user: install postgresql-15, which creates it");
    if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      throw std::runtime_error("cannot chown " + dir_);
  }
  run(bindir + "/initdb -D " + dir_ + "/data -U postgres --auth=trust -E UTF8 --no-sync" + " >" +
      dir_ + "/initdb.log 2>&1");
  port_ = free_port();
  pg_ctl_start(dir_, log_path(), port_);
  conninfo_ = conninfo_for(port_);
}

pg_cluster::pg_cluster(const std::string& info_file) : owned_(false) {
  std::ifstream in(info_file);
  if (!(in >> dir_ >> port_))
    throw std::runtime_error("no test cluster described in " + info_file);
  conninfo_ = conninfo_for(port_);
}

pg_cluster::~pg_cluster() {
  if (!owned_)
    return;
  try {
    stop(false);
  } catch (const std::exception&) {
    try {  // a fast shutdown that did not end (a slow disk's checkpoint): the directory goes next
      stop(true);
    } catch (const std::exception&) {
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string pg_cluster::fresh_schema() const {
  static std::mt19937_64 rng{std::random_device{}()};
  const std::string name = "t" + std::to_string(rng() % 1000000000000ULL);
  pg::connection admin({conninfo_});
  admin.exec("CREATE SCHEMA " + name);
  return conninfo_ + " options='-c search_path=" + name + "'";
}

void pg_cluster::stop(bool immediate) {
  run(server_bindir() + "/pg_ctl -w -D " + dir_ + "/data -m " + (immediate ? "immediate" : "fast") +
      " stop >/dev/null 2>&1");
}

void pg_cluster::start() {
  pg_ctl_start(dir_, log_path(), port_, environment_);
}

void pg_cluster::restart_with_environment(const std::string& environment) {
  // Put in a shell command as it is: nothing the shell would read as more than words.
  for (const char c : environment) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view(" _./=:-").find(c) == std::string_view::npos) {
      throw std::invalid_argument(
          "a cluster's environment is NAME=VALUE words of letters, digits "
          "and _ . / = : - only: " +
          environment);
    }
  }
  stop(false);
  environment_ = environment;
  start();
}

int pg_cluster::server_pid() const {
  std::ifstream in(dir_ + "/data/postmaster.pid");
  int pid = 0;
  if (!(in >> pid) || pid <= 0)
    throw std::runtime_error("no PostgreSQL server running in " + dir_);
  return pid;
}

void pg_cluster::write_info(const std::string& info_file) {
  std::ofstream(info_file) << dir_ << "\n" << port_ << "\n";
  owned_ = false;
}

void pg_cluster::destroy(const std::string& info_file) {
  try {
    pg_cluster c(info_file);
    c.owned_ = true;  // the destructor stops and removes it
  } catch (const std::exception&) {
  }
  std::error_code ec;
  fs::remove(info_file, ec);
}

}  // namespace exactly::tools
