#pragma once
// The client's invocation state machine, sans I/O: for each step of one invoke_http (PUT in the
// handler, POST after commit, GET before the follow-up, DELETE after it) and each server answer,
// decide what the runtime does next. The runtime only carries out these decisions.

#include <chrono>
#include <cstdint>
#include <random>
#include <string_view>

namespace exactly::client {

enum class step { put, post, get, del };

// What came back for a step: an HTTP answer, or no answer at all (connect failure, reset,
// timeout: the request may or may not have reached the server).
struct answer {
  bool transport_failed = false;
  unsigned status = 0;
  bool has_outcome = false;  // Exactly-Once-Outcome header present
  std::string_view problem;  // problem name when the answer is problem+json, else ""
};

enum class next {
  advance,       // the step succeeded: carry on with the protocol
  retry,         // send the same request again after backoff (same id, same body)
  fail_handler,  // PUT refused: the handler attempt fails (and is retried with a new id)
  error_queue,   // protocol fault: the message goes to the error queue with the problem
};

// Decides what follows `a` for step `s`. Total over every status code.
next decide(step s, const answer& a);

// Capped exponential backoff with equal jitter: uniform in [c/2, c], c = min(cap, base *
// 2^attempt), so a retry always waits at least half its step and concurrent retries still spread
// out.
std::chrono::milliseconds backoff(int attempt, std::chrono::milliseconds base,
                                  std::chrono::milliseconds cap, std::mt19937_64& rng);

}  // namespace exactly::client
