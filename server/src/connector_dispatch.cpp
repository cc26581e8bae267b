// The connector's routes: a PUT, POST, GET or DELETE carried out by the connector in a commit
// group (a GET read apart), with the waits the background sync asks for (see request_dispatch.hpp).
#include "request_dispatch.hpp"

#include "storage_lanes.hpp"

namespace exactly::server {
namespace {

using namespace exactly::net;

verb to_verb(http::verb v) {
  switch (v) {
    case http::verb::put:
      return verb::put;
    case http::verb::post:
      return verb::post;
    case http::verb::delete_:
      return verb::delete_;
    default:
      return verb::get;
  }
}

// What a POST notes in its commit group and a GET of the same id waits for (storage_executor).
std::string post_key(const interaction_request& ir) {
  return std::string(ir.route) + '\n' + std::string(ir.id);
}

}  // namespace

asio::awaitable<beast_response> request_dispatch::read_apart(const interaction_request& ir,
                                                             unsigned version) {
  // Committed rows only, so no commit group to wait for; answered once every commit holding a
  // POST of the id is on disk (at once unless one's background sync is under way: a stored
  // response is only ever written by a POST of its id).
  std::optional<interaction_response> r;
  if (storage_executor* reads = storage_.reads())  // a round trip: on the thread of the reads
    r = co_await reads->run([&] { return connector_.read(ir); });
  else
    r = connector_.read(ir);  // here, on the network thread
  if (!co_await storage_.first().posts_durable(post_key(ir)))
    co_return reply(problem_response(errc::storage_unavailable), version);
  co_return reply(std::move(*r), version);
}

asio::awaitable<beast_response> request_dispatch::connector_route(beast_request& req, route_match m,
                                                                  std::string principal) {
  interaction_request ir{to_verb(req.method()),
                         m.route_template,
                         m.id,
                         principal,
                         to_view(req[http::field::content_type]),
                         req.body()};
  if (ir.v == verb::get && connector_.has_separate_reads())
    co_return co_await read_apart(ir, req.version());
  // Only a PUT or a DELETE may go out before its commit is flushed: a crash taking it back
  // loses no execution (server_options::flush_every_commit).
  ir.unflushed = !storage_.first().flushes_every_commit() && connector_.may_defer_flush(ir);
  // Every request of the id on one storage thread (connection), so its commits keep their order;
  // or, with an unflushed lane, those that may commit unflushed on that one.
  storage_executor& lane = storage_.for_id(ir.route, ir.id, ir.unflushed);
  const commit_flush flush = ir.unflushed ? commit_flush::may_defer : commit_flush::required;
  // Set before the group's COMMIT returns, if at all; shared, as the connection keeps it until
  // its next round trip.
  ir.failed_later = std::make_shared<std::exception_ptr>();
  auto [failure, committed] = co_await lane.run_in_commit_group(
      [this, &ir, &lane] {
        if (ir.v == verb::post)
          lane.note_post(post_key(ir));
        return connector_.handle(ir);
      },
      /*own_savepoint=*/false, flush);  // handle() has its own
  if (failure)  // connector::handle() answers its failures: this is a defect
    co_return reply(failure_response(failure, errc::internal_error, ir.route), req.version());
  if (!committed)
    co_return reply(problem_response(errc::storage_unavailable), req.version());
  if (*ir.failed_later) {  // its writes were rolled back alone: as if its commit had thrown
    lane.note_failed_alone();
    co_return reply(failure_response(*ir.failed_later, errc::internal_error,
                                     std::string(ir.route) + " " + std::string(ir.id)),
                    req.version());
  }
  co_return reply(std::move(*committed), req.version());
}

}  // namespace exactly::server
