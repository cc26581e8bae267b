#pragma once
// exactly-bench stopped by SIGINT, SIGTERM or SIGHUP: the first one is only noted, so the run
// stops where it checks, and its server processes and cluster are stopped as it unwinds; a second
// one ends the process at once, leaving them running.

namespace exactly::bench {

// Installs the handlers. Call once, before the first child process or thread.
void note_interrupts();

// Whether one of those signals came.
bool interrupted();

// The exit status of a run stopped by one (128 + its number), 0 if none came.
int interrupted_status();

}  // namespace exactly::bench
