// The PRAGMA statements that apply sqlite::options (sqlite_pragmas.hpp).
#include "sqlite_pragmas.hpp"

namespace exactly::detail {

const char* synchronous_pragma(sqlite::synchronous s) {
  switch (s) {
    case sqlite::synchronous::off:
      return "PRAGMA synchronous=OFF";
    case sqlite::synchronous::normal:
      return "PRAGMA synchronous=NORMAL";
    case sqlite::synchronous::full:
      return "PRAGMA synchronous=FULL";
    case sqlite::synchronous::extra:
      return "PRAGMA synchronous=EXTRA";
  }
  return "PRAGMA synchronous=FULL";
}

}  // namespace exactly::detail
