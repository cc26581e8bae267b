#pragma once
// The steps the publishers of one runtime are sending now. On SQLite a publisher reads its due
// steps outside the write lock, so two of them would read and send the same ones; each claims
// the ids it read here first. Thread-safe.

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace exactly::client {

class publish_claims {
 public:
  // Taken before a turn reads its due steps.
  std::uint64_t mark() {
    std::lock_guard lock(mutex_);
    return turns_ended_;
  }
  // Those of `ids` no other turn is sending, now this turn's; nullopt when a turn ended since
  // `mark` (the read may show steps that turn completed: read again).
  std::optional<std::set<std::string>> claim(std::uint64_t mark,
                                             const std::vector<std::string>& ids) {
    std::lock_guard lock(mutex_);
    if (turns_ended_ != mark)
      return std::nullopt;
    std::set<std::string> mine;
    for (const std::string& id : ids) {
      if (sending_.insert(id).second)
        mine.insert(id);
    }
    return mine;
  }
  // Ends the turn that claimed `ids`, committed or not.
  void release(const std::set<std::string>& ids) {
    std::lock_guard lock(mutex_);
    for (const std::string& id : ids)
      sending_.erase(id);
    ++turns_ended_;
  }

 private:
  std::mutex mutex_;
  std::set<std::string> sending_;
  std::uint64_t turns_ended_ = 0;
};

}  // namespace exactly::client
