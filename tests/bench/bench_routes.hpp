#pragma once
// The benchmark's three ways to make one business write (one row in bench_writes) over HTTP,
// on one connector and one http_server, so they share the storage thread and commit path:
//   POST /plain/{id}               the write, no deduplication (the floor)
//   POST /idem/write               Idempotency-Key header: the write and its stored response in
//                                  one transaction, per the IETF httpapi idempotency-key draft;
//                                  keys older than a window are purged as new ones are stored
//   /bench/write/{id}              the exactly-once connector route (PUT, POST, GET, DELETE)

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>

#include <exactly/common/clock.hpp>
#include <exactly/common/sqlite.hpp>

#include <chrono>

namespace exactly::bench {

inline constexpr const char* connector_route = "/bench/write/{id}";

// How every route makes its write. `bounded`: overwrite one of 1024 rows instead of adding one,
// so that a long run measures the protocol's own storage, not the growth of the user's data.
struct write_options {
  bool bounded = false;
};

// How long the idempotency-key route keeps a key: storing a key first deletes the keys older than
// `window` (what the draft leaves to the server: a key expires, its request may then run again).
struct key_options {
  std::chrono::milliseconds window{60000};
  clock_fn clock = system_now_ms;
};

// Creates the tables and registers the connector route; call before http_server::start().
void install_connector_route(server::connector& c, write_options w = {});
// Registers the plain and the idempotency-key routes on `http`, using `c`'s database.
void install_http_routes(server::http_server& http, server::connector& c, write_options w = {},
                         key_options k = {});
// Drops the triggers of the SQLite database `db` that keep the server's row counters and staged
// counts (sqlite_schema.cpp), which then stay wrong; returns how many. Only to measure their cost.
int drop_counter_triggers(sqlite::connection& db);

}  // namespace exactly::bench
