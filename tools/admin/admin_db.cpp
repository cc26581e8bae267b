// Opening the database read-only or read-write, and the log of changes (see admin_db.hpp).
#include "admin_db.hpp"

#include "format.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>

namespace exactly::admin {

std::string redact_conninfo(std::string_view conninfo) {
  std::string s(conninfo);
  // key=value form: password=secret or password='sec ret'
  static const std::regex kv(R"((password\s*=\s*)('([^'\\]|\\.)*'|\S+))", std::regex::icase);
  s = std::regex_replace(s, kv, "$1***");
  // URI form: postgresql://user:secret@host/db
  static const std::regex uri(R"((postgres(ql)?://[^:/@\s]+:)[^@\s]*@)", std::regex::icase);
  s = std::regex_replace(s, uri, "$1***@");
  return s;
}

admin_db::admin_db(const target& t, access a) {
  if (!t.sqlite_path.empty() && !t.postgres.empty())
    throw usage_error("name one database: --sqlite PATH or --postgres CONNINFO, not both");
  if (!t.sqlite_path.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(t.sqlite_path, ec))
      throw usage_error("no database file at " + t.sqlite_path);
    sqlite::options o;
    o.wal = false;  // keep the file's journal mode as the services set it
    sqlite_ = std::make_unique<sqlite::connection>(t.sqlite_path, o);
    if (a == access::read_only)
      sqlite_->exec("PRAGMA query_only=ON");
    label_ = "sqlite:" + t.sqlite_path;
    return;
  }
  if (t.postgres.empty())
    throw usage_error("name the database: --sqlite PATH or --postgres CONNINFO");
  pg_ = std::make_unique<pg::connection>(pg::options{t.postgres});
  if (a == access::read_only)
    pg_->exec("SET default_transaction_read_only = on");
  label_ = "postgres:" + redact_conninfo(t.postgres);
}

admin_db::~admin_db() = default;

database admin_db::db() const {
  return sqlite_ ? database(*sqlite_) : database(*pg_);
}

change_log::change_log(const std::string& audit_log) : path_(audit_log) {
  if (path_.empty())
    return;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    throw usage_error("cannot open the audit log " + path_ + ": " + std::strerror(errno) +
                      " (nothing was changed)");
  }
}

change_log::~change_log() {
  if (fd_ >= 0)
    ::close(fd_);
}

void change_log::write(const admin_db& db, std::string_view what) {
  const char* user = std::getenv("USER");
  const std::string line =
      escape_controls(utc_time(now_ms()) + " exactly-admin " +
                      (user ? std::string(user) : "uid " + std::to_string(::getuid())) + " " +
                      db.label() + ": " + std::string(what)) +
      "\n";
  std::cerr << line << std::flush;
  if (fd_ < 0)
    return;
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw std::runtime_error("cannot append to the audit log " + path_ + ": " +
                               std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace exactly::admin
