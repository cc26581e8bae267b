#pragma once
// A throwaway PostgreSQL cluster for tests, benchmarks and demos: initdb and pg_ctl in a temp dir
// under /tmp, a free loopback port, fsync=on. Run as root, the server runs as the `postgres` user
// (PostgreSQL refuses root). Missing binaries fail loudly with how to install them.

#include <string>

namespace exactly::tools {

class pg_cluster {
 public:
  // Creates and starts a new cluster in a new directory under TMPDIR (else /tmp). Throws
  // std::runtime_error on failure.
  pg_cluster();
  // Adopts the running cluster described by `info_file` (written by write_info()); it is left
  // running at destruction.
  explicit pg_cluster(const std::string& info_file);
  ~pg_cluster();  // an owned cluster is stopped (fast) and its directory removed
  pg_cluster(const pg_cluster&) = delete;
  pg_cluster& operator=(const pg_cluster&) = delete;

  // Superuser connection string to database `postgres`.
  const std::string& conninfo() const { return conninfo_; }
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/log"; }  // the server's log (pg_ctl -l)
  int port() const { return port_; }
  // Creates an empty schema and returns a connection string whose search_path is that schema:
  // every test gets tables of its own in the one cluster.
  std::string fresh_schema() const;

  // pg_ctl stop -m immediate (a crash: no shutdown checkpoint) or -m fast.
  void stop(bool immediate = true);
  // Starts the stopped cluster again on the same port; returns once it accepts connections.
  void start();
  // Stops the cluster (fast) and starts it again with `environment`, NAME=VALUE words of
  // letters, digits and _ . / = : - only, in its server's environment (and at every later
  // start()); std::invalid_argument for any other character.
  void restart_with_environment(const std::string& environment);
  // The running server's process id (its postmaster.pid); std::runtime_error if it is not running.
  int server_pid() const;
  // Writes what the adopting constructor reads, and lets the cluster outlive this object.
  void write_info(const std::string& info_file);
  // Stops and removes the cluster `info_file` describes, if it still runs.
  static void destroy(const std::string& info_file);

 private:
  std::string dir_;
  std::string conninfo_;
  std::string environment_;
  int port_ = 0;
  bool owned_ = true;
};

}  // namespace exactly::tools
