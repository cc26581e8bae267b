// The committed invocations of invoke_http (exactly_invocations), moved by the lifecycle machine:
// states and follow-ups as stored, on the engine the database chose.
#include "invocation_store.hpp"

#include <stdexcept>

namespace exactly::client {

int stored_value(invocation_state s) {
  switch (s) {
    case invocation_state::post_pending:
      return 1;
    case invocation_state::awaiting_follow_up:
      return 2;
    case invocation_state::delete_pending:
      return 3;
    case invocation_state::restage_pending:
      return 4;
    default:
      throw std::logic_error("invocation state " + std::string(name_of(s)) + " is not stored");
  }
}

invocation_state stored_state(int stored_state) {
  switch (stored_state) {
    case 1:
      return invocation_state::post_pending;
    case 2:
      return invocation_state::awaiting_follow_up;
    case 3:
      return invocation_state::delete_pending;
    case 4:
      return invocation_state::restage_pending;
    default:
      throw std::logic_error("stored invocation state " + std::to_string(stored_state));
  }
}

invocation_store::invocation_store(database db)
    : impl_(db.kind() == engine::sqlite ? make_sqlite_invocation_engine(db.as_sqlite())
                                        : make_pg_invocation_engine(db.as_postgres())) {}

void invocation_store::add(const invocation_row& row, std::int64_t now_ms) {
  insert(row, invocation_state::post_pending, now_ms);
}

void invocation_store::add_cleanup(std::string_view request_id, std::string_view endpoint,
                                   std::string_view url, std::int64_t now_ms) {
  insert({std::string(request_id), std::string(endpoint), std::string(url), message{}, 0},
         invocation_state::delete_pending, now_ms);
}

void invocation_store::insert(const invocation_row& row, invocation_state s, std::int64_t now_ms) {
  const nlohmann::json follow_up = {{"id", row.follow_up.id},
                                    {"type", row.follow_up.type},
                                    {"headers", row.follow_up.headers},
                                    {"body", row.follow_up.body}};
  impl_->insert({row.request_id, row.endpoint, row.url, follow_up.dump(), row.attempts, row.body,
                 row.content_type},
                stored_value(s), now_ms);
  if (row.staged_until_ms)
    impl_->record_staged_until(row.request_id, *row.staged_until_ms);
}

namespace {

std::vector<invocation_row> rows_of(std::vector<stored_invocation> stored) {
  std::vector<invocation_row> out;
  for (stored_invocation& r : stored) {
    const auto f = nlohmann::json::parse(r.follow_up);
    out.push_back({std::move(r.request_id), std::move(r.endpoint), std::move(r.url),
                   message{f.at("id"), f.at("type"), f.at("headers"), f.at("body")}, r.attempts,
                   std::nullopt, std::move(r.body), std::move(r.content_type)});
  }
  return out;
}

}  // namespace

std::vector<invocation_row> invocation_store::due(invocation_state s, std::int64_t now_ms,
                                                  int limit) {
  return rows_of(impl_->due(stored_value(s), now_ms, limit));
}

std::vector<std::pair<invocation_state, invocation_row>> invocation_store::claim_due(
    std::string_view endpoint, const std::vector<invocation_state>& states, std::int64_t now_ms,
    int limit) {
  std::vector<int> values;
  for (const invocation_state s : states)
    values.push_back(stored_value(s));
  std::vector<stored_invocation> stored = impl_->claim_due(endpoint, values, now_ms, limit);
  std::vector<int> read_in;
  for (const stored_invocation& r : stored)
    read_in.push_back(r.state);
  std::vector<invocation_row> rows = rows_of(std::move(stored));
  std::vector<std::pair<invocation_state, invocation_row>> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.emplace_back(stored_state(read_in[i]), std::move(rows[i]));
  return out;
}

bool invocation_store::move_if_in(std::string_view request_id, invocation_state from,
                                  invocation_state to, std::int64_t due_ms) {
  return impl_->move_if_in(request_id, stored_value(from), stored_value(to), due_ms);
}

void invocation_store::move_if_in_deferred(std::string_view request_id, invocation_state from,
                                           invocation_state to, std::int64_t due_ms) {
  impl_->move_if_in_deferred(request_id, stored_value(from), stored_value(to), due_ms);
}

std::optional<invocation_info> invocation_store::find(std::string_view request_id) {
  auto r = impl_->find(request_id);
  if (!r)
    return std::nullopt;
  return invocation_info{std::move(r->request_id),
                         std::move(r->url),
                         std::string(name_of(stored_state(r->state))),
                         r->attempts,
                         std::move(r->last_error),
                         r->staged_until_ms,
                         r->response_until_ms};
}

}  // namespace exactly::client
