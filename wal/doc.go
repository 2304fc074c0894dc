// Package wal is lockd's write-ahead log: records with CRCs in 16 MB
// segment files under pg_wal, the insertion locks and WAL buffers they are
// copied through, writing and flushing under WALWrite with group commit,
// the WAL writer, segment recycling, the checkpoint's bookkeeping, the
// control file, and crash recovery — PostgreSQL 15's design, with its
// compile-time NUM_XLOGINSERT_LOCKS made the setting wal_insert_locks.
//
// See insert.go for insertion, buffers.go for the WAL buffers, write.go for
// writes, flushes and group commit, writer.go for the WAL writer,
// checkpoint.go for checkpoints, recovery.go and reader.go for recovery,
// record.go for the record format; docs/wal.md describes it all with the
// measured effect of the locks.
//
// # What it must not do
//
// wal imports only the standard library, lockd/locks and lockd/vfs. It
// knows nothing of pages, tuples, transactions or the catalog: records are
// built by their resource managers (storage, txn, sql/catalog) and
// replayed by the redo functions the server hands to StartupXLOG. It
// neither reads settings (the server's hooks call its setters) nor keeps a
// shared counter on a hot path (procStats are per backend).
//
// # Concurrency contract
//
// A WAL is shared by every backend. Its locks, in the order they nest:
//
//   - a WALInsert LWLock (one of wal_insert_locks), exclusive, for the
//     copy of one record; all of them, in order, to move the redo pointer
//     or change full_page_writes;
//   - insertPosMu, a spinlock, for the few instructions of reserving space;
//   - WALBufMapping (LWLock) to initialise a buffer page;
//   - WALWrite (LWLock) to write and flush; taken only after
//     waitInsertionsToFinish, never while waiting for an insertion.
//
// An inserter may hold a buffer content lock of its own (storage does:
// the page it changed), never the other way round. A backend that must
// write out a buffer page while holding an insertion lock first
// advertises its progress (insertingAt), so that the flush it then waits
// for does not wait for it.
package wal
