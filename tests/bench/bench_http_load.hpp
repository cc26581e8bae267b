#pragma once
// exactly-bench's lean load generator: plain, idempotency-key, wire and
// idempotency-key-four-exchanges, one kept-alive connection per slot.

#include "bench_measure.hpp"

#include <http_client.hpp>

#include <exactly/common/request_id.hpp>

#include <memory>
#include <stdexcept>

namespace exactly::bench {

// A load generator slot: a kept-alive connection and the principal its requests are made as. For
// idempotency-key-four-exchanges also an id staged with `body` and one deleted (a tombstone),
// whose PUT and DELETE write nothing again.
struct http_slot {
  test::http_client c;
  std::vector<std::pair<std::string, std::string>> auth;
  std::string staged, deleted;
  http_slot(std::uint16_t port, bool four_exchanges, int owner) : c(port), auth(auth_as(owner)) {
    if (!four_exchanges)
      return;
    staged = "/bench/write/" + request_id::mint().to_string();
    deleted = "/bench/write/" + request_id::mint().to_string();
    if (c.request("PUT", staged, body, auth).status != 201 ||
        c.request("PUT", deleted, body, auth).status != 201 ||
        c.request("DELETE", deleted, "", auth).status != 204)
      throw std::runtime_error("could not stage and delete a slot's ids");
  }
};

// Load generator slots: one each, spread over the server processes.
struct http_op {
  std::vector<std::uint16_t> ports;
  int kind;  // 0 plain, 1 idempotency-key, 2 wire, 3 idempotency-key-four-exchanges
  std::shared_ptr<step_clock> requests =
      std::make_shared<step_clock>("mean_ms_per_request", "mean ms per request", request_methods);
  std::vector<std::shared_ptr<step_clock>> steps{requests};
  int owners = 1;  // slot i makes its requests as principal i % owners (auth_as)
  http_slot make_slot(int i) const {
    return http_slot(ports[static_cast<std::size_t>(i) % ports.size()], kind == 3, i % owners);
  }
  bool operator()(http_slot& slot) const {
    test::http_client& c = slot.c;
    const std::string id = request_id::mint().to_string();
    if (kind == 0)
      return c.request("POST", "/plain/" + id, body, slot.auth).status == 200;
    const auto idempotency_key_post = [&] {
      auto headers = slot.auth;
      headers.emplace_back("Idempotency-Key", id);
      return c.request("POST", "/idem/write", body, headers).status == 201;
    };
    if (kind == 1)
      return idempotency_key_post();
    if (kind == 3) {
      // A wire cycle's exchanges through the connector, where only the POST writes: the PUT of
      // the slot's staged id is confirmed (200), the DELETE of its deleted id changes nothing
      // (204), the GET of a fresh id is answered 404.
      return c.request("PUT", slot.staged, body, slot.auth).status == 200 &&
             idempotency_key_post() &&
             c.request("GET", "/bench/write/" + id, "", slot.auth).status == 404 &&
             c.request("DELETE", slot.deleted, "", slot.auth).status == 204;
    }
    const std::string path = "/bench/write/" + id;
    const auto step = [&](std::size_t k, const std::string& request_body, unsigned expected) {
      const auto begun = clock_type::now();
      const bool ok =
          c.request(requests->names[k], path, request_body, slot.auth).status == expected;
      requests->add(k, clock_type::now() - begun);
      return ok;
    };
    return step(0, body, 201) && step(1, "", 200) && step(2, "", 200) && step(3, "", 204);
  }
};

}  // namespace exactly::bench
