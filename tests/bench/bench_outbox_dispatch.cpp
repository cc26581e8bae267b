// exactly-bench's outbox baselines (bench_e2e_driver.hpp): the dispatchers that publish what the
// handlers queued in their outbox, and record the answers and the follow-ups' writes.
#include "bench_e2e_driver.hpp"

#include "client/src/queue_store.hpp"

#include <exactly/common/backoff.hpp>
#include <exactly/common/clock.hpp>
#include <exactly/common/request_id.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace exactly::bench {

void e2e_driver::dispatch(int k, e2e_way way, const std::string& host) {
  connection c = open();
  const database db = c.db();
  client::queue_store q(db);
  const std::string queue = outbox_queue(k);
  std::mt19937_64 rng(static_cast<std::uint64_t>(k));
  const dispatch_urls urls{"http://" + host + "/idem/write", "http://" + host + "/bench/write/"};
  std::vector<client::http_call> owed;  // sent with the next batch's POSTs
  while (!stop_) {
    try {
      if (dispatch_batch(db, q, queue, way, urls, owed, rng) > 0)
        continue;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "outbox dispatcher %d: %s\n", k, e.what());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

std::size_t e2e_driver::dispatch_batch(const database& db, client::queue_store& q,
                                       const std::string& queue, e2e_way way,
                                       const dispatch_urls& urls,
                                       std::vector<client::http_call>& owed, std::mt19937_64& rng) {
  // Each step's time (the phases of batches_), from the read of the due messages on.
  auto step_began = clock_type::now();
  const auto step_ended = [&](std::size_t step, std::int64_t messages = 0) {
    const auto ended = clock_type::now();
    batches_->add(step, ended - step_began, messages);
    step_began = ended;
  };
  const std::int64_t now = system_now_ms();
  const std::vector<client::queued_message> due = q.due(queue, now, batch_);
  if (due.empty())
    return 0;
  step_ended(0);
  const auto never_staged = [&urls] {
    return client::http_call{"GET", urls.connector + request_id::mint().to_string(), "", "", {}};
  };
  const auto wire_url = [&urls](const client::queued_message& m) {
    return urls.connector + m.msg.body.at("rid").get<std::string>();
  };
  const auto expect = [](const client::http_call& c, const client::http_result& r,
                         std::initializer_list<unsigned> statuses) {
    if (r.transport_failed ||
        std::find(statuses.begin(), statuses.end(), r.status) == statuses.end())
      throw std::runtime_error(c.method + " " + c.url + " got " +
                               (r.transport_failed ? r.error : std::to_string(r.status)));
  };
  std::vector<client::http_call> before;
  for (const client::queued_message& m : due) {
    if (way == e2e_way::outbox_three_exchanges)
      before.push_back(never_staged());
    else if (way == e2e_way::outbox_wire)
      before.push_back({"PUT", wire_url(m), "application/json", body, {}});
  }
  const std::vector<client::http_result> put_answers = transport_->send_all(before);
  if (!before.empty())
    step_ended(1);
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (way == e2e_way::outbox_wire)
      expect(before[i], put_answers[i], {201, 200});  // 200: staged by an earlier attempt
    else
      expect(before[i], put_answers[i], {404});
  }
  std::vector<client::http_call> calls;
  for (const client::queued_message& m : due) {
    if (way == e2e_way::outbox_wire)
      calls.push_back({"POST", wire_url(m), "", "", {}});
    else
      calls.push_back(
          {"POST", urls.idem, "application/json", body, {{"Idempotency-Key", m.msg.id}}});
  }
  for (client::http_call& c : std::exchange(owed, {}))
    calls.push_back(std::move(c));
  std::vector<client::http_result> answers = transport_->send_all(calls);
  for (std::size_t i = due.size(); i < answers.size(); ++i)
    expect(calls[i], answers[i], {calls[i].method == "DELETE" ? 204u : 404u});
  answers.resize(due.size());
  step_ended(2);
  std::vector<client::http_call> next;  // owed once this batch has committed
  database_transaction tx(db);
  for (std::size_t i = 0; i < due.size(); ++i) {
    const client::http_result& r = answers[i];
    const client::queued_message& m = due[i];
    if (!r.transport_failed && r.status >= 200 && r.status < 300) {
      db.execute("INSERT INTO answers(id, status, body) VALUES (?, ?, ?)", m.msg.id,
                 static_cast<std::int64_t>(r.status), r.body);
      record_done(db, m.msg);
      q.consume(m.seq);
      if (way == e2e_way::outbox_three_exchanges)
        next.push_back(never_staged());
      else if (way == e2e_way::outbox_wire)
        next.push_back({"DELETE", wire_url(m), "", "", {}});
      continue;
    }
    const std::string error =
        r.transport_failed ? "no answer: " + r.error : "status " + std::to_string(r.status);
    if (r.transport_failed || r.status >= 500)
      q.retry_later(m.seq, now + backoff_policy{}.delay(m.attempts, rng).count(), error);
    else
      q.move_to_errors(m.seq, error, now);
  }
  step_ended(3);
  tx.commit();
  step_ended(4, static_cast<std::int64_t>(due.size()));
  owed = std::move(next);
  return due.size();
}

}  // namespace exactly::bench
