#pragma once
// The benchmark's three ways to make one business write (one row in bench_writes) over HTTP,
// on one connector and one http_server, so they share the storage thread and commit path:
//   POST /plain/{id}               the write, no deduplication (the floor)
//   POST /idem/write               Idempotency-Key header: the write and its stored response in
//                                  one transaction, per the IETF httpapi idempotency-key draft
//   /bench/write/{id}              the exactly-once connector route (PUT, POST, GET, DELETE)

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>

namespace exactly::bench {

inline constexpr const char* connector_route = "/bench/write/{id}";

// How every route makes its write. `bounded`: overwrite one of 1024 rows instead of adding one,
// so that a long run measures the protocol's own storage, not the growth of the user's data.
struct write_options {
  bool bounded = false;
};

// Creates the tables and registers the connector route; call before http_server::start().
void install_connector_route(server::connector& c, write_options w = {});
// Registers the plain and the idempotency-key routes on `http`, using `c`'s database.
void install_http_routes(server::http_server& http, server::connector& c, write_options w = {});

}  // namespace exactly::bench
