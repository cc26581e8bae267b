#include <exactly/client/invocation.hpp>

#include <algorithm>

namespace exactly::client {
namespace {

bool server_trouble(const answer& a) {
  // No answer, any 5xx without an outcome (execution-failed, storage-unavailable, a proxy's 502),
  // 408 and 429: the same request may be sent again safely.
  return a.transport_failed || (a.status >= 500 && !a.has_outcome) || a.status == 408 ||
         a.status == 429;
}

}  // namespace

next decide(verb s, const answer& a) {
  if (server_trouble(a))
    return next::retry;
  switch (s) {
    case verb::put:
      // 201 staged, 200 staged earlier by a lost attempt of this same PUT.
      if (a.status == 201 || a.status == 200)
        return next::advance;
      if (a.status == 401 || a.status == 403)
        return next::retry;       // credentials: wait for a fix
      return next::fail_handler;  // 400/409/410/413/422: this attempt cannot stage
    case verb::post:
    case verb::get:
      // A stored response, whatever its status, is the outcome (a business 402 or 500 included).
      if (a.has_outcome)
        return next::advance;
      if (a.status == 401 || a.status == 403)
        return next::retry;
      return next::error_queue;  // 404/410 and anything else without an outcome: protocol fault
    case verb::delete_:
      // 204 every time; 404 means the server does not know the id for us: nothing to delete.
      if (a.status == 204 || a.status == 404)
        return next::advance;
      return next::retry;
  }
  return next::retry;
}

}  // namespace exactly::client
