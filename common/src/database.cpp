// The engine-neutral handle: which connection, its transactions and commit hooks.
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <stdexcept>

namespace exactly {

std::string numbered_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 8);
  int n = 0;
  char quote = 0;  // ' or " while inside a literal or a quoted identifier
  for (const char c : sql) {
    if (quote) {
      quote = c == quote ? 0 : quote;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$' + std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

void database::exec(std::string_view sql) const {
  if (sqlite_)
    sqlite_->exec(sql);
  else
    pg_->exec(sql);
}

sqlite::connection& database::as_sqlite() const {
  if (!sqlite_)
    throw std::logic_error("this database is PostgreSQL: use as_postgres()");
  return *sqlite_;
}

pg::connection& database::as_postgres() const {
  if (!pg_)
    throw std::logic_error("this database is SQLite: use as_sqlite()");
  return *pg_;
}

bool database::in_transaction() const {
  return sqlite_ ? sqlite_->in_transaction() : pg_->in_transaction();
}

void database::after_commit(std::function<void()> fn) const {
  if (sqlite_)
    sqlite_->after_commit(std::move(fn));
  else
    pg_->after_commit(std::move(fn));
}

database_transaction::database_transaction(const database& db, durability d) {
  if (db.kind() == engine::sqlite)
    sqlite_ = std::make_unique<sqlite::transaction>(db.as_sqlite(),
                                                    sqlite::transaction::mode::immediate, d);
  else
    pg_ = std::make_unique<pg::transaction>(db.as_postgres(), d);
}

database_transaction::~database_transaction() = default;

void database_transaction::set_durability(durability d) {
  if (sqlite_)
    throw std::logic_error("database_transaction::set_durability on SQLite: it is set at BEGIN");
  pg_->set_durability(d);
}

void database_transaction::commit() {
  if (sqlite_)
    sqlite_->commit();
  else
    pg_->commit();
}

void database_transaction::commit_later(std::function<void(std::exception_ptr)> on_failed) {
  if (sqlite_)
    sqlite_->commit();
  else
    pg_->commit_later(std::move(on_failed));
}

}  // namespace exactly
