#pragma once
// The server's PostgreSQL schema: its migrations, applied in order by pg::migrate.

#include <exactly/common/migrations.hpp>

#include <span>

namespace exactly::server {

std::span<const pg::migration> server_pg_schema();

}  // namespace exactly::server
