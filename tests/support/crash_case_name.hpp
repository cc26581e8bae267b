#pragma once
// The name of a crash-matrix case in a test's name: its crash point with '_' for '.', and the
// client's modes it runs in.

#include <string>

namespace exactly::test {

inline std::string crash_case_name(std::string point, bool put_in_handler, bool queued_follow_up,
                                   bool put_never = false) {
  if (put_in_handler)
    point += "_put_in_handler";
  if (put_never)
    point += "_put_never";
  if (queued_follow_up)
    point += "_queued_follow_up";
  for (char& ch : point) {
    if (ch == '.')
      ch = '_';
  }
  return point;
}

}  // namespace exactly::test
