#pragma once
// The database exactly-admin works on: a SQLite file or a PostgreSQL connection string, opened
// read-only for listings and read-write only for a named mutation, never migrated; and the log
// of every change it makes.

#include <exactly/common/database.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace exactly::admin {

// A refusal to report as "exactly-admin: <what>" with exit status 2 (bad input, no database).
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct target {
  std::string sqlite_path;  // one of the two
  std::string postgres;
};

enum class access { read_only, read_write };

class admin_db {
 public:
  // Opens `t`. Throws usage_error when the SQLite file does not exist or no engine was named;
  // the engine's error when it cannot be opened. SQLite waits for other writers (busy timeout).
  admin_db(const target& t, access a);
  ~admin_db();
  admin_db(const admin_db&) = delete;
  admin_db& operator=(const admin_db&) = delete;

  database db() const;
  // "sqlite:PATH" or "postgres:CONNINFO" with any password left out, for messages and the log.
  const std::string& label() const { return label_; }

 private:
  std::unique_ptr<sqlite::connection> sqlite_;
  std::unique_ptr<pg::connection> pg_;
  std::string label_;
};

// `conninfo` with the value of any password (key=value or in a URI) replaced by "***".
std::string redact_conninfo(std::string_view conninfo);

// The log of the changes a mutation makes: stderr and, with an audit log path, that file.
class change_log {
 public:
  // Opens `audit_log` (if not empty) for appending, creating it with mode 0600 (it may hold
  // message bodies). Open it before changing anything: throws usage_error naming the file when
  // it cannot be opened, so no change is ever left out of it.
  explicit change_log(const std::string& audit_log);
  ~change_log();
  change_log(const change_log&) = delete;
  change_log& operator=(const change_log&) = delete;

  // Writes "<UTC time> exactly-admin <user> <database label>: <what>", control characters
  // escaped, to stderr and the audit log; throws std::runtime_error when the file write fails.
  void write(const admin_db& db, std::string_view what);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace exactly::admin
