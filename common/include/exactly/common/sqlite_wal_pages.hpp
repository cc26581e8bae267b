#pragma once
// One knob for the size of a SQLite WAL: the three WAL settings of sqlite::options in the
// proportions of their defaults (which are those of 4000 pages).

#include <exactly/common/sqlite.hpp>

#include <cstdint>

namespace exactly::sqlite {

// `o` with checkpoint_pages = `pages`, finish_checkpoint_pages = 4 * `pages`, and
// wal_size_limit_bytes = `pages` * 16 MiB / 4000: a few frames above a WAL of `pages` pages of
// 4 KiB, so that a WAL that starts over soon after `pages` keeps one file.
inline options with_wal_pages(options o, int pages) {
  o.checkpoint_pages = pages;
  o.finish_checkpoint_pages = 4 * pages;
  o.wal_size_limit_bytes = static_cast<std::int64_t>(pages) * (std::int64_t{16} << 20) / 4000;
  return o;
}

}  // namespace exactly::sqlite
