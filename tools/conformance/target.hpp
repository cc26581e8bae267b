#pragma once
// The server under test as the runner sees it: where it listens, and optionally the controls of
// proto-spec §12 (clock, sweeper, row counts, executions), in-process or over HTTP.

#include "http_connection.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace exactly::conformance {

struct row_counts {
  std::int64_t staged = 0, executed = 0, tombstone = 0;
};

// What the runner may ask of the server beyond HTTP. nullopt / false: not available or failed.
class controls {
 public:
  virtual ~controls() = default;
  virtual std::optional<std::int64_t> now_ms() = 0;
  virtual bool advance_seconds(std::int64_t seconds) = 0;
  virtual bool sweep() = 0;
  virtual std::optional<row_counts> rows() = 0;
  // Committed executions of `id`; nullopt when the server cannot count them.
  virtual std::optional<std::int64_t> executions(const std::string& id) = 0;
};

// One server for one or more cases. Subclasses own what they start.
struct target {
  virtual ~target() = default;
  endpoint at{};
  controls* control = nullptr;  // nullptr: cases that need controls are skipped
  bool fresh = false;           // a new server for this case: no rows, no staged requests
};

// A target per case: the in-process transport starts a fresh server each time, the HTTP one
// hands out the one running server.
using target_factory = std::function<std::unique_ptr<target>()>;

// The controls of proto-spec §12 over HTTP (/_exactly/test/), authorized by `key`.
class http_controls final : public controls {
 public:
  http_controls(endpoint at, std::string key);
  std::optional<std::int64_t> now_ms() override;
  bool advance_seconds(std::int64_t seconds) override;
  bool sweep() override;
  std::optional<row_counts> rows() override;
  std::optional<std::int64_t> executions(const std::string& id) override;
  // Whether the server answers the interface for this key (GET /_exactly/test/clock); `why`
  // says what went wrong otherwise.
  bool available(std::string& why);

 private:
  // The JSON body of a 200 to `method` `path`, or nullopt.
  std::optional<std::string> call(const std::string& method, const std::string& path);

  http_connection conn_;
  std::string key_;
  answer last_{};
};

}  // namespace exactly::conformance
