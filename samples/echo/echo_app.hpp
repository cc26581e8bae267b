#pragma once
// The route the protocol's test vectors run against: /vectors/echo/{id}.
// Payload: {"status": 100..599, "reply": any, "fail": bool}; a member "parse_throws" makes the
// parse step throw (to test that this is refused as 422). The logic answers status with body
// {"reply": <reply>}, throws when fail is true, counts each committed execution per id in
// table echo_executions, and sends an "echo_executed" message whose handler counts deliveries
// in table echo_deliveries.

#include <exactly/server/connector.hpp>

#include <cstdint>
#include <string>

namespace exactly::samples {

inline constexpr const char* echo_route = "/vectors/echo/{id}";

// Registers the route and the message handler, and creates the counting tables.
void register_echo_app(server::connector& c);

// Committed executions of `id` (reads the connector's database, either engine; call on its
// storage thread, or on a connection of one's own to the same database).
std::int64_t echo_executions(const database& db, const std::string& id);
// Sum of committed executions over all ids.
std::int64_t echo_executions_total(const database& db);
// Deliveries of the "echo_executed" message for `id`.
std::int64_t echo_deliveries(const database& db, const std::string& id);

}  // namespace exactly::samples
