// The SQLite wrapper: connections with a statement cache, and statements (transactions:
// sqlite_transaction.cpp).
#include <exactly/common/sqlite.hpp>

#include "commit_hooks.hpp"
#include "sqlite_pragmas.hpp"
#include "wal_checkpointer.hpp"

#include <algorithm>
#include <thread>

#include <sqlite3.h>

namespace exactly::sqlite {

using exactly::detail::synchronous_pragma;

namespace {

class category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "sqlite"; }
  std::string message(int ev) const override { return sqlite3_errstr(ev); }
};

[[noreturn]] void fail(sqlite3* db, int rc, std::string_view context) {
  std::string what(context);
  if (db) {
    what += ": ";
    what += sqlite3_errmsg(db);
  }
  throw error(rc, what);
}

// The wait before try `tries` + 1 of what another connection holds: short at first.
void pause_before_retry(int tries) {
  std::this_thread::sleep_for(tries < 20 ? std::chrono::microseconds(100)
                                         : std::chrono::microseconds(1000));
}

}  // namespace

const boost::system::error_category& sqlite_category() noexcept {
  static const category_impl instance;
  return instance;
}

error::error(int sqlite_code, const std::string& what)
    : storage_error(boost::system::error_code(sqlite_code & 0xFF, sqlite_category()), what) {}

bool error::busy() const noexcept {
  const int c = code().value();
  return c == SQLITE_BUSY || c == SQLITE_LOCKED;
}

bool error::storage_failure() const noexcept {
  switch (code().value()) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_CORRUPT:
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_NOTADB:
      return true;
    default:
      return false;
  }
}

// ---- statement ----

statement::statement(connection& db, std::string_view sql) : db_(&db) {
  const int rc = sqlite3_prepare_v3(db.native(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK)
    fail(db.native(), rc, "prepare");
}

statement::~statement() {
  sqlite3_finalize(stmt_);
}

statement& statement::bind(int i, std::int64_t v) {
  const int rc = sqlite3_bind_int64(stmt_, i, v);
  if (rc != SQLITE_OK)
    fail(db_->native(), rc, "bind");
  return *this;
}

statement& statement::bind(int i, std::string_view text) {
  const int rc =
      sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK)
    fail(db_->native(), rc, "bind");
  return *this;
}

statement& statement::bind(int i, std::nullptr_t) {
  const int rc = sqlite3_bind_null(stmt_, i);
  if (rc != SQLITE_OK)
    fail(db_->native(), rc, "bind");
  return *this;
}

statement& statement::bind_blob(int i, std::string_view bytes) {
  const int rc = sqlite3_bind_blob64(stmt_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK)
    fail(db_->native(), rc, "bind");
  return *this;
}

bool statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  sqlite3_reset(stmt_);
  fail(db_->native(), rc, "step");
}

void statement::run() {
  while (step()) {
  }
  reset();
}

void statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool statement::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::int64_t statement::int64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

std::string statement::text(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}

int statement::columns() const {
  return sqlite3_column_count(stmt_);
}

// ---- connection ----

int connection::on_busy(void* self, int tries) {
  auto* c = static_cast<connection*>(self);
  const auto now = std::chrono::steady_clock::now();
  if (tries == 0)
    c->busy_since_ = now;
  if (now - c->busy_since_ >= c->busy_timeout_)
    return 0;  // SQLITE_BUSY
  pause_before_retry(tries);
  return 1;
}

connection::connection(const std::string& path, options opts)
    : path_(path),
      hooks_(std::make_unique<detail::commit_hooks>()),
      busy_timeout_(opts.busy_timeout) {
  exactly::detail::check_checkpoint_options(opts);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "open " + path + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw error(rc, msg);
  }
  try {
    sqlite3_extended_result_codes(db_, 0);
    sqlite3_busy_handler(db_, &connection::on_busy, this);
    if (opts.wal)
      enter_wal();
    {
      statement mode(*this, "PRAGMA journal_mode");
      wal_ = mode.step() && mode.text(0) == "wal";  // an in-memory database stays in "memory"
    }
    sync_ = opts.sync;
    exec(synchronous_pragma(opts.sync));
    exec("PRAGMA journal_size_limit=" + std::to_string(opts.wal_size_limit_bytes));
    if (wal_)
      checkpoints_ = exactly::detail::install_checkpoints(db_, opts);
    exec(opts.foreign_keys ? "PRAGMA foreign_keys=ON" : "PRAGMA foreign_keys=OFF");
  } catch (...) {
    cache_.clear();
    sqlite3_close(db_);  // no destructor runs for a constructor that throws
    throw;
  }
}

// Switching a file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at once, without
// the busy handler, while another connection holds the file (two processes opening a new file at
// the same moment): the switch is retried here, as long as the busy timeout allows.
void connection::enter_wal() {
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout_;
  for (int tries = 0;; ++tries) {
    const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK)
      return;
    if (rc != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
      fail(db_, rc, "exec: PRAGMA journal_mode=WAL");
    pause_before_retry(tries);
  }
}

connection::~connection() {
  cache_.clear();  // finalize before close
  sqlite3_close(db_);
}

void connection::exec(std::string_view sql) {
  const std::string s(sql);
  char* msg = nullptr;
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string what = "exec: " + std::string(msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    throw error(rc, what);
  }
}

statement& connection::prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    it = cache_.emplace(std::string(sql), std::make_unique<statement>(*this, sql)).first;
  } else {
    it->second->reset();
  }
  return *it->second;
}

void connection::after_commit(std::function<void()> fn) {
  hooks_->add(depth_, std::move(fn));
}

void connection::reset_all() {
  for (auto& [sql, stmt] : cache_)
    stmt->reset();
}

bool connection::in_transaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

std::int64_t connection::changes() const {
  return sqlite3_changes64(db_);
}

}  // namespace exactly::sqlite
