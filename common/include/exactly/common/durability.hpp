#pragma once
// Whether a transaction's COMMIT waits for the disk, chosen when it begins.

namespace exactly {

enum class durability {
  // COMMIT returns once the commit is on disk (SQLite synchronous FULL or EXTRA as configured,
  // PostgreSQL synchronous_commit=on): the default, and the only choice unless a crash may
  // take the commit back without harm.
  flushed,
  // COMMIT returns before the commit is on disk: SQLite in WAL mode runs it at synchronous=NORMAL
  // (its WAL frames written, not synced), PostgreSQL with SET LOCAL synchronous_commit = off.
  // The next flushed commit makes it durable with itself (both engines' logs are flushed in
  // order); a crash of the machine (SQLite) or of the database server (PostgreSQL) may take it
  // back, and with it every unflushed commit after the last flushed one.
  unflushed,
};

}  // namespace exactly
