#include <exactly/client/endpoint.hpp>
#include <exactly/client/invocation.hpp>
#include <exactly/common/backoff.hpp>
#include <exactly/common/crash_point.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/request_id.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace exactly::client {
namespace {

// An unanswered or 503-answered PUT is sent again twice, quickly, before the attempt fails.
constexpr backoff_policy put_retry{std::chrono::milliseconds(20), std::chrono::milliseconds(80)};

std::string describe_answer(std::string_view method, const http_result& r) {
  if (r.transport_failed)
    return std::string(method) + " failed: " + r.error;
  std::string s = std::string(method) + " answered " + std::to_string(r.status);
  if (const auto p = parse_problem(r.body))
    s += " " + std::string(p->name()) + ": " + p->detail;
  return s;
}

}  // namespace

// ---- handler_context ----

sqlite::connection& handler_context::db() {
  return ep_.db_;
}

std::string_view handler_context::endpoint_name() const {
  return ep_.name_;
}

void handler_context::send(std::string_view to, message m) {
  if (m.id.empty())
    m.id = request_id::mint(now_ms_).to_string();
  ep_.queues_.enqueue(to, m, now_ms_);
}

std::string handler_context::invoke_http(std::string_view url_template, std::string_view body,
                                         std::string_view content_type, message follow_up) {
  if (!ep_.opts_.transport)
    throw std::logic_error("invoke_http needs endpoint_options.transport");
  const std::string placeholder = "{id}";
  std::string url(url_template);
  const auto at = url.find(placeholder);
  if (at == std::string::npos)
    throw std::invalid_argument("URL template without {id}: " + url);
  const std::string id = request_id::mint(now_ms_).to_string();
  url.replace(at, placeholder.size(), id);
  // A URL the transport cannot send to fails here, before anything is journaled or sent (a
  // cleanup DELETE of it could never be sent either).
  ep_.opts_.transport->check_url(url);
  // Journaled before the PUT: DELETEd later if this attempt does not commit, even after a crash.
  ep_.attempt_puts_.push_back({id, url});
  ep_.journal_.record(ep_.name_, ep_.attempt_puts_.back(), now_ms_);

  http_call put{"PUT", url, std::string(content_type), std::string(body)};
  if (ep_.puts_in_flight_mode_) {  // its answer is awaited before the batch commits
    auto answer = ep_.opts_.transport->start(put);
    ep_.puts_in_flight_.push_back({std::move(put), std::move(answer), ep_.running_handler_});
  } else {
    const http_result answer = ep_.put(put);
    if (decide(verb::put, answer.facts()) != next::advance) {
      // A lost answer may hide a staged id: it gets a DELETE in the handler's own savepoint, so
      // a handler that catches this and commits still cleans it up.
      ep_.invocations_.add_cleanup(id, ep_.name_, url, now_ms_);
      throw std::runtime_error("invoke_http " + describe_answer("PUT", answer));
    }
    crash_point("client.after_put_before_commit");
  }

  if (follow_up.id.empty())
    follow_up.id = id + "/follow-up";
  follow_up.headers[request_id_header] = id;
  follow_up.headers[url_header] = url;
  ep_.invocations_.add({id, ep_.name_, url, std::move(follow_up), 0}, now_ms_);
  return id;
}

// ---- endpoint ----

endpoint::endpoint(std::string name, sqlite::connection& db, endpoint_options opts)
    : name_(std::move(name)),
      db_(db),
      opts_(std::move(opts)),
      queues_(db),
      invocations_(db),
      journal_(opts_.attempt_journal.empty() ? attempt_journal_path(db.path())
                                             : opts_.attempt_journal) {}

void endpoint::on(std::string type, handler h) {
  handlers_[std::move(type)] = std::move(h);
}

void endpoint::send(std::string_view to, message m) {
  const std::int64_t now = opts_.clock();
  if (m.id.empty())
    m.id = request_id::mint(now).to_string();
  sqlite::transaction tx(db_);
  queues_.enqueue(to, m, now);
  tx.commit();
}

http_result endpoint::put(const http_call& call, std::optional<http_result> first) {
  http_result answer =
      first ? std::move(*first)
            : opts_.transport->send(call.method, call.url, call.content_type, call.body);
  for (int attempt = 0; decide(verb::put, answer.facts()) == next::retry && attempt < 2;
       ++attempt) {
    std::this_thread::sleep_for(put_retry.delay(attempt, rng_));
    answer = opts_.transport->send(call.method, call.url, call.content_type, call.body);
  }
  return answer;
}

std::int64_t endpoint::backoff_until(int attempts, std::int64_t now) {
  return now + backoff_policy{opts_.retry_base, opts_.retry_cap}.delay(attempts, rng_).count();
}

std::size_t endpoint::process_due(int limit) {
  const std::int64_t now = opts_.clock();
  std::vector<queued_message> batch;
  {
    sqlite::transaction read(db_, sqlite::transaction::mode::deferred);
    batch = queues_.due(name_, now, limit);
  }
  if (batch.empty())
    return 0;
  // Follow-ups first fetch their stored responses, all at once, outside any transaction.
  std::vector<std::optional<http_result>> responses(batch.size());
  std::vector<next> get_decisions(batch.size(), next::advance);
  if (opts_.transport) {
    std::vector<http_call> calls;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].msg.headers.contains(request_id_header)) {
        calls.push_back({"GET", batch[i].msg.headers.at(url_header), "", ""});
        which.push_back(i);
      }
    }
    if (!calls.empty()) {
      std::vector<http_result> answers = opts_.transport->send_all(calls);
      for (std::size_t k = 0; k < which.size(); ++k) {
        get_decisions[which[k]] = decide(verb::get, answers[k].facts());
        if (get_decisions[which[k]] == next::advance)
          crash_point("client.after_get_before_commit");
        responses[which[k]] = std::move(answers[k]);
      }
    }
  }

  std::size_t done = 0;
  const bool in_flight = opts_.wait_for_put == put_wait::before_commit && batch.size() > 1;
  if (!run_batch(batch, responses, get_decisions, now, in_flight, done)) {
    done = 0;  // rolled back: once more, each handler waiting for its PUTs
    run_batch(batch, responses, get_decisions, now, false, done);
  }
  return done;
}

bool endpoint::run_batch(const std::vector<queued_message>& batch,
                         const std::vector<std::optional<http_result>>& responses,
                         const std::vector<next>& get_decisions, std::int64_t now,
                         bool puts_in_flight, std::size_t& done) {
  // The batch commits together (one fsync); each message in a savepoint of its own, so a
  // failing handler rolls back only itself.
  std::optional<sqlite::transaction> group(std::in_place, db_);
  std::vector<journal_entry> puts;  // ids PUT by this batch's attempts, journaled
  std::vector<bool> committed_handlers(batch.size(), false);
  puts_in_flight_mode_ = puts_in_flight;
  puts_in_flight_.clear();
  struct stop_puts_in_flight {
    bool& flag;
    ~stop_puts_in_flight() { flag = false; }
  } reset{puts_in_flight_mode_};
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const queued_message& q = batch[i];
    const auto rid = q.msg.headers.find(request_id_header);
    const std::optional<http_result>& response = responses[i];
    if (response && get_decisions[i] != next::advance) {
      if (get_decisions[i] == next::error_queue) {
        queues_.move_to_errors(q.seq, describe_answer("GET", *response), now);
        invocations_.remove(rid->get<std::string>());
        ++done;
      } else {
        queues_.retry_later(q.seq, backoff_until(q.attempts, now),
                            describe_answer("GET", *response));
      }
      continue;
    }

    std::string error;
    attempt_puts_.clear();
    running_handler_ = i;
    bool committed = false;
    {
      sqlite::transaction tx(db_);
      // Another process sharing the queue may have taken it since the batch was read.
      if (!db_.query_int64("SELECT 1 FROM exactly_queue WHERE seq = ?", q.seq))
        continue;
      const auto h = handlers_.find(q.msg.type);
      if (h == handlers_.end()) {
        queues_.move_to_errors(q.seq, "no handler for message type " + q.msg.type, now);
        tx.commit();
        ++done;
        continue;
      }
      try {
        handler_context ctx(*this, now, q.msg, response ? &*response : nullptr);
        h->second(ctx);
        if (rid != q.msg.headers.end()) {
          invocations_.transition(rid->get<std::string>(), invocation_state::awaiting_follow_up,
                                  invocation_state::delete_pending, now);
        }
        queues_.consume(q.seq);
        tx.commit();
        committed = true;
        ++done;
      } catch (const sqlite::error&) {
        throw;  // storage trouble is not the handler's failure; nothing of the batch commits
      } catch (const std::exception& e) {
        error = e.what();
      }
    }  // an uncommitted handler's writes are rolled back here
    puts.insert(puts.end(), attempt_puts_.begin(), attempt_puts_.end());
    if (committed) {
      committed_handlers[i] = true;
      continue;
    }
    // Ids PUT by the failed attempt get a durable DELETE, committed with the failure.
    for (const journal_entry& e : attempt_puts_)
      invocations_.add_cleanup(e.request_id, name_, e.url, now);
    if (q.attempts + 1 >= opts_.max_attempts) {
      queues_.move_to_errors(q.seq, error, now);
      ++done;
    } else {
      queues_.retry_later(q.seq, backoff_until(q.attempts, now), error);
    }
  }
  if (!puts_in_flight_.empty()) {
    // A failed handler's PUTs already have their DELETE; a committed one's must all be staged.
    bool all_staged = true;
    for (put_in_flight& p : puts_in_flight_) {
      http_result answer;
      try {
        answer = p.answer.get();
      } catch (const std::exception& e) {  // a transport's own failure: no answer, sent again
        answer.transport_failed = true;
        answer.error = e.what();
      }
      if (committed_handlers[p.handler])
        all_staged &= decide(verb::put, put(p.call, std::move(answer)).facts()) == next::advance;
    }
    if (!all_staged) {
      group.reset();  // nothing of the batch commits; every id it PUT gets a durable DELETE
      sqlite::transaction tx(db_);
      for (const journal_entry& e : puts)
        invocations_.add_cleanup(e.request_id, name_, e.url, now);
      tx.commit();
      journal_.forget(puts);
      return false;
    }
    crash_point("client.after_put_before_commit");
  }
  group->commit();
  const bool any_committed = std::find(committed_handlers.begin(), committed_handlers.end(),
                                       true) != committed_handlers.end();
  if (any_committed)
    crash_point("client.after_commit_before_post_or_delete");
  journal_.forget(puts);  // their invocation or cleanup rows own them now
  return true;
}

std::size_t endpoint::recover_orphans(std::int64_t now) {
  const auto entries = journal_.older_than(name_, now - opts_.orphan_grace.count(), 64);
  if (entries.empty())
    return 0;
  // Holding the write lock, no handler is between its PUT and its commit or rollback: an id not
  // in the invocations table now belongs to an attempt that ended without committing.
  std::size_t orphans = 0;
  sqlite::transaction tx(db_);
  for (const journal_entry& e : entries) {
    if (!invocations_.contains(e.request_id)) {
      invocations_.add_cleanup(e.request_id, name_, e.url, now);
      ++orphans;
    }
  }
  tx.commit();
  journal_.forget(entries);
  return orphans;
}

std::size_t endpoint::publish_due(int limit) {
  if (!opts_.transport)
    return 0;
  const std::int64_t now = opts_.clock();
  std::size_t done = recover_orphans(now);
  std::vector<invocation_row> rows;
  std::vector<bool> is_post;  // else a DELETE
  {
    sqlite::transaction read(db_, sqlite::transaction::mode::deferred);
    for (auto state : {invocation_state::post_pending, invocation_state::delete_pending}) {
      for (invocation_row& row : invocations_.due(state, now, limit)) {
        if (row.endpoint != name_)
          continue;
        rows.push_back(std::move(row));
        is_post.push_back(state == invocation_state::post_pending);
      }
    }
  }
  if (rows.empty())
    return done;
  // Every due POST and DELETE goes out at once; their outcomes then commit together, in one
  // transaction (one fsync for the batch). Each step still moves by a conditional transition, so
  // a step another publisher completed meanwhile is skipped, not done twice.
  std::vector<http_call> calls;
  for (std::size_t i = 0; i < rows.size(); ++i)
    calls.push_back({is_post[i] ? "POST" : "DELETE", rows[i].url, "", ""});
  const std::vector<http_result> answers = opts_.transport->send_all(calls);
  std::vector<next> decisions;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool post = is_post[i];
    decisions.push_back(decide(post ? verb::post : verb::delete_, answers[i].facts()));
    if (decisions.back() == next::advance) {
      crash_point(post ? "client.after_post_before_follow_up" : "client.after_delete_before_done");
    }
  }
  sqlite::transaction tx(db_);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const invocation_row& row = rows[i];
    const http_result& r = answers[i];
    const bool post = is_post[i];
    const char* verb = post ? "POST" : "DELETE";
    switch (decisions[i]) {
      case next::advance:
        if (!post) {
          invocations_.remove(row.request_id);
          ++done;
        } else if (invocations_.transition(row.request_id, invocation_state::post_pending,
                                           invocation_state::awaiting_follow_up, now)) {
          // The follow-up is queued atomically with the POST's completion.
          queues_.enqueue(row.endpoint, row.follow_up, now);
          ++done;
        }
        break;
      case next::error_queue:  // never re-invoked under a new id
        // A stale copy of a step another worker completed must not raise a false fault.
        if (post && invocations_.transition(row.request_id, invocation_state::post_pending,
                                            invocation_state::post_pending, now)) {
          queues_.add_error(row.endpoint, row.follow_up, row.attempts + 1, describe_answer(verb, r),
                            now);
          invocations_.remove(row.request_id);
          ++done;
        } else if (!post) {
          invocations_.retry_later(row.request_id, backoff_until(row.attempts, now),
                                   describe_answer(verb, r));
        }
        break;
      default:
        invocations_.retry_later(row.request_id, backoff_until(row.attempts, now),
                                 describe_answer(verb, r));
        break;
    }
  }
  tx.commit();
  return done;
}

void endpoint::run_until_idle() {
  while (process_due() + publish_due() > 0) {
  }
}

}  // namespace exactly::client
