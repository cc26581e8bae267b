// The storage threads of a server, one per connection (see storage_lanes.hpp).
#include "storage_lanes.hpp"

#include <algorithm>
#include <string>

namespace exactly::server {

storage_lanes::storage_lanes(connector& c, bool group_commit, bool flush_every_commit,
                             bool background_sync)
    : connector_(c),
      // With every commit flushed nothing may go unflushed: no lane of its own then.
      flushed_lanes_(c.unflushed_lane() && !flush_every_commit ? c.connections() - 1
                                                               : c.connections()) {
  for (std::size_t i = 0; i < c.connections(); ++i) {
    lanes_.push_back(std::make_unique<storage_executor>(c.storage(i), group_commit,
                                                        flush_every_commit, background_sync));
  }
  if (c.reads_take_a_round_trip())
    reads_ = std::make_unique<storage_executor>(c.storage(0), false);  // run() only: no group
}

storage_executor& storage_lanes::for_id(std::string_view route, std::string_view id,
                                        bool unflushed) {
  if (unflushed && flushed_lanes_ < lanes_.size())
    return *lanes_.back();
  if (flushed_lanes_ == 1)
    return first();
  std::string key(route);
  key += ' ';
  key += id;
  return *lanes_[std::hash<std::string>{}(key) % flushed_lanes_];
}

storage_executor& storage_lanes::next() {
  next_ = (next_ + 1) % flushed_lanes_;
  return *lanes_[next_];
}

group_stats storage_lanes::group_counts() const {
  group_stats sum;
  for (const auto& lane : lanes_) {
    const group_stats s = lane->group_counts();
    sum.groups += s.groups;
    sum.unflushed += s.unflushed;
    sum.requests += s.requests;
    sum.failures += s.failures;
    sum.largest = std::max(sum.largest, s.largest);
    sum.flushed_times += s.flushed_times;
    sum.unflushed_times += s.unflushed_times;
  }
  return sum;
}

void storage_lanes::start() {
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    lanes_[i]->start([this, i] { connector_.use_connection_on_this_thread(i); });
  if (reads_)
    reads_->start();
}

void storage_lanes::stop(std::function<void()> last) {
  for (std::size_t i = lanes_.size(); i-- > 1;)
    lanes_[i]->stop([] {});
  if (reads_)
    reads_->stop([] {});  // once the GETs under way are answered
  first().stop(std::move(last));
}

}  // namespace exactly::server
