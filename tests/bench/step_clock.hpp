#pragma once
// exactly-bench's clock of a scenario's phases (requests, or the steps of a batch), whose means
// are printed under the scenario's row and written to its JSON.

#include "bench_types.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace exactly::bench {

// The protocol's requests, as a wire cycle makes them and as the client's are counted.
inline const std::vector<std::string> request_methods{"PUT", "POST", "GET", "DELETE"};

// The mean time of each named phase, over the measured time only: the requests of a wire
// cycle or of a client, or the steps of an outbox dispatcher's batch. An occurrence may carry a
// count of items (a batch's messages), reported as the mean of those carried.
struct step_clock {
  static constexpr std::size_t most = 6;
  // `key` names the figures in the JSON, `label` in the table, `items_key` the items' mean in
  // the JSON ("" if none are counted), `counts_key` the phases' counts per operation ("" if not
  // shown); at most `most` names.
  step_clock(std::string key, std::string label, std::vector<std::string> names,
             std::string items_key = "", std::string counts_key = "")
      : key(std::move(key)),
        label(std::move(label)),
        items_key(std::move(items_key)),
        counts_key(std::move(counts_key)),
        names(std::move(names)) {
    if (this->names.size() > most)
      throw std::logic_error("step_clock: more phases than it counts");
  }
  const std::string key, label, items_key, counts_key;
  const std::vector<std::string> names;
  std::atomic<bool> on{false};
  std::atomic<std::int64_t> us[most]{}, count[most]{}, items{0}, carriers{0};
  void add(std::size_t step, clock_type::duration d, std::int64_t carried = 0) {
    if (!on.load(std::memory_order_relaxed))
      return;
    us[step] += std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    ++count[step];
    if (carried > 0) {
      items += carried;
      ++carriers;
    }
  }
  step_figures figures() const {
    step_figures f{key, label, items_key, {}, 0};
    f.counts_key = counts_key;
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (count[k] == 0)
        continue;
      f.ms.emplace_back(names[k],
                        static_cast<double>(us[k]) / 1000.0 / static_cast<double>(count[k]));
      f.counts.emplace_back(names[k], count[k].load());
    }
    if (carriers > 0)
      f.items = static_cast<double>(items) / static_cast<double>(carriers);
    return f;
  }
};

}  // namespace exactly::bench
