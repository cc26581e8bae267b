#pragma once
// The PRAGMA statements that apply sqlite::options, shared by the connections and the checkpointer.

#include <exactly/common/sqlite.hpp>

namespace exactly::detail {

// "PRAGMA synchronous=..." for `s`.
const char* synchronous_pragma(sqlite::synchronous s);

}  // namespace exactly::detail
