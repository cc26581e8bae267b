// The signals that stop exactly-bench, noted in a flag (see interrupt.hpp).
#include "interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace exactly::bench {
namespace {

std::atomic<int> signal_seen{0};
static_assert(std::atomic<int>::is_always_lock_free, "read and written in a signal handler");

void on_signal(int number) {
  if (signal_seen.exchange(number) != 0) {  // the second: as if no handler had been installed
    signal(number, SIG_DFL);
    raise(number);
    return;
  }
  constexpr char message[] =
      "exactly-bench: stopping (the server and cluster are stopped on the way out; a second "
      "signal ends it at once)\n";
  [[maybe_unused]] const auto written = write(STDERR_FILENO, message, sizeof message - 1);
}

}  // namespace

void note_interrupts() {
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // the calls it lands in go on; the run checks the flag
  for (const int number : {SIGINT, SIGTERM, SIGHUP})
    sigaction(number, &action, nullptr);
}

bool interrupted() {
  return signal_seen.load() != 0;
}

int interrupted_status() {
  const int number = signal_seen.load();
  return number == 0 ? 0 : 128 + number;
}

}  // namespace exactly::bench
