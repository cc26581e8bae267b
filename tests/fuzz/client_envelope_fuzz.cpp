// Fuzzes the JSON envelopes the client runtime reads back from its own rows: a queued message's
// headers and body (queue_store::due) and an invocation's follow-up message
// (invocation_store::due). Properties, for any stored text: reading never crashes; it gives
// exactly what the text says when the text is a well-formed envelope and throws a
// std::exception otherwise; and any message written by the stores reads back equal.
// Input: one byte choosing the row, then the stored text ("headers\0body" for a queued message).
#include "client/src/invocation_store.hpp"
#include "client/src/queue_store.hpp"

#include <exactly/common/sqlite.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

using nlohmann::json;
using namespace exactly;
using namespace exactly::client;

constexpr std::int64_t now_ms = 1'700'000'000'000;

[[noreturn]] void fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "envelope property broken: %s (stored text \"%.*s\")\n", what,
               static_cast<int>(input.size()), input.data());
  std::abort();
}

// The JSON of `text`, or nullopt when it is not one well-formed JSON text.
std::optional<json> parsed(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return std::nullopt;
  return j;
}

// One in-memory database with both stores, for every input; each input's writes are rolled back.
struct stores {
  sqlite::connection db{":memory:", sqlite::options{.wal = false}};
  queue_store queues{db};
  invocation_store invocations{db};
};

// A message written by enqueue() reads back equal.
void queue_round_trip(stores& s, const message& m, std::string_view input) {
  sqlite::transaction tx(s.db);
  s.queues.enqueue("round-trip", m, now_ms);
  const auto due = s.queues.due("round-trip", now_ms, 10);
  if (due.size() != 1 || due[0].msg.id != m.id || due[0].msg.type != m.type ||
      due[0].msg.headers != m.headers || due[0].msg.body != m.body)
    fail("a queued message did not read back equal", input);
}

// A queued message whose stored headers and body are `headers` and `body`.
void queued_text(stores& s, std::string_view headers, std::string_view body,
                 std::string_view input) {
  sqlite::transaction tx(s.db);
  s.queues.enqueue("ep", message{"m-1", "t", json::object(), nullptr}, now_ms);
  s.db.prepare("UPDATE exactly_queue SET headers = ?, body = ?").bind_all(headers, body).run();
  const auto h = parsed(headers);
  const auto b = parsed(body);
  try {
    const auto due = s.queues.due("ep", now_ms, 10);
    if (!h || !b)
      fail("a malformed stored message was read without an error", input);
    if (due.size() != 1 || due[0].msg.headers != *h || due[0].msg.body != *b)
      fail("a stored message read back differently", input);
  } catch (const std::exception&) {
    if (h && b)
      fail("a well-formed stored message could not be read", input);
    return;
  }
  queue_round_trip(s, message{"m-2", "t", *h, *b}, input);
}

// The follow-up an invocation row holds as `text`, when it is a well-formed envelope.
std::optional<message> envelope(std::string_view text) {
  const auto j = parsed(text);
  if (!j || !j->is_object() || !j->contains("id") || !j->contains("type") ||
      !j->contains("headers") || !j->contains("body") || !(*j)["id"].is_string() ||
      !(*j)["type"].is_string())
    return std::nullopt;
  return message{(*j)["id"], (*j)["type"], (*j)["headers"], (*j)["body"]};
}

// An invocation row whose stored follow-up is `text`.
void invocation_text(stores& s, std::string_view text, std::string_view input) {
  sqlite::transaction tx(s.db);
  s.invocations.add({"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b", "ep", "http://x/a/1", message{}, 0},
                    now_ms);
  s.db.prepare("UPDATE exactly_invocations SET follow_up = ?").bind_all(text).run();
  const auto expected = envelope(text);
  try {
    const auto due = s.invocations.due(invocation_state::post_pending, now_ms, 10);
    if (!expected)
      fail("a malformed follow-up was read without an error", input);
    const message& m = due.at(0).follow_up;
    if (due.size() != 1 || m.id != expected->id || m.type != expected->type ||
        m.headers != expected->headers || m.body != expected->body)
      fail("a stored follow-up read back differently", input);
  } catch (const std::exception&) {
    if (expected)
      fail("a well-formed follow-up could not be read", input);
    return;
  }
  // Written by add() (a fresh id), it reads back equal.
  s.invocations.add({"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7c", "ep", "http://x/a/2", *expected, 0},
                    now_ms);
  for (const invocation_row& r : s.invocations.due(invocation_state::post_pending, now_ms, 10)) {
    if (r.follow_up.id != expected->id || r.follow_up.type != expected->type ||
        r.follow_up.headers != expected->headers || r.follow_up.body != expected->body)
      fail("a follow-up written by add() did not read back equal", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view text = input.substr(1);
  static stores s;
  if (data[0] % 2 == 0) {
    const auto nul = text.find('\0');
    if (nul == std::string_view::npos)
      queued_text(s, text, "null", input);
    else
      queued_text(s, text.substr(0, nul), text.substr(nul + 1), input);
  } else {
    invocation_text(s, text, input);
  }
  return 0;
}
