#pragma once
// The server's SQLite schema: its migrations, applied in order.

#include <exactly/common/migrations.hpp>

#include <span>

namespace exactly::server {

// The migrations of component "exactly.server", oldest first.
std::span<const sqlite::migration> server_schema();

}  // namespace exactly::server
