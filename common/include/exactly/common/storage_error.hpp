#pragma once
// The failure of a storage engine (SQLite or PostgreSQL), as the error paths classify it.

#include <boost/system/system_error.hpp>

namespace exactly {

class storage_error : public boost::system::system_error {
 public:
  using boost::system::system_error::system_error;
  // Whether the storage itself failed (unreachable, busy, I/O, full, ...): nothing of the
  // transaction committed and the same work may succeed later. false for what the SQL asked
  // for (a constraint violation, a syntax error, a missing table).
  virtual bool storage_failure() const noexcept = 0;
  // Whether a statement sent ahead of the one that threw, in the same round trip (a write whose
  // answer no one waited for: pg::connection::defer), failed rather than that one.
  virtual bool from_deferred_write() const noexcept { return false; }
};

}  // namespace exactly
