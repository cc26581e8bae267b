#pragma once
// The client's invocation state machine, sans I/O: for each step of one invoke_http (PUT in the
// handler, POST after commit, GET before the follow-up, DELETE after it) and each server answer,
// decide what the runtime does next. The runtime only carries out these decisions.

#include <exactly/common/protocol.hpp>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace exactly::client {

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
next decide(verb s, const answer& a);

}  // namespace exactly::client
