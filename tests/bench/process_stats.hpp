#pragma once
// CPU time and memory of a process, read from /proc (Linux).

#include <sys/types.h>

#include <cstdint>

namespace exactly::bench {

double cpu_seconds(pid_t pid);         // user + system time so far
std::int64_t rss_kib(pid_t pid);       // resident set now (VmRSS)
std::int64_t peak_rss_kib(pid_t pid);  // high-water mark (VmHWM)
std::int64_t anon_kib(pid_t pid);      // resident private memory (RssAnon), no shared pages
void reset_peak_rss(pid_t pid);        // VmHWM := VmRSS (clear_refs 5)

}  // namespace exactly::bench
