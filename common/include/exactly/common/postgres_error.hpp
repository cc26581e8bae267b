#pragma once
// PostgreSQL's errors: a failed call with its SQLSTATE, and which SQLSTATEs are storage trouble.

#include <exactly/common/storage_error.hpp>

#include <boost/system/error_category.hpp>

#include <string>
#include <string_view>

namespace exactly::pg {

// Category of SQLSTATE codes (each packed into an int as PostgreSQL's MAKE_SQLSTATE does).
const boost::system::error_category& postgres_category() noexcept;

// A failed PostgreSQL call with its SQLSTATE; "08006" when the connection is down or was lost.
// A statement the open transaction refuses because storage trouble that the caller caught
// aborted it (25P02) carries that trouble's SQLSTATE, so it reads as storage trouble too (a
// COMMIT answered with ROLLBACK is "40000", whatever aborted the transaction).
class error : public storage_error {
 public:
  error(std::string_view sqlstate, const std::string& what, bool deferred = false);
  const std::string& sqlstate() const noexcept { return sqlstate_; }
  // Connection (class 08), resources (53), shut down (57), system (58), transaction rollback
  // (40: serialization failure, deadlock), lock not available (55P03), read-only (25006).
  bool storage_failure() const noexcept override;
  // A unique or primary key constraint was violated (23505).
  bool unique_violation() const noexcept { return sqlstate_ == "23505"; }
  bool from_deferred_write() const noexcept override { return deferred_; }

 private:
  std::string sqlstate_;
  bool deferred_;
};

}  // namespace exactly::pg
