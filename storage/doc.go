// Package storage owns lockd's on-disk data and its caching: relation files
// of 8 kB pages (DataDir/base/<RelID>), the shared buffer pool, heap pages
// and tuples (PostgreSQL's page layout: page header, line pointers growing
// down, tuples growing up; tuples carry xmin, xmax, cmin, cmax, a ctid and
// flags, followed by opaque data bytes made by the SQL layer), the free
// space map, the visibility map (one all-visible bit per heap page, which
// index-only scans trust), relation extension, lazy VACUUM, and B-tree
// indexes mapping memcmp-ordered keys to tuple ids.
//
// # What it must not do
//
// storage imports only the standard library, lockd/locks, lockd/txn and
// lockd/pgerr. It knows nothing of SQL (tuple data and index keys are
// opaque bytes), of catalogs (relations are bare RelIDs) or of settings
// (sizes come in Config; the relation extension policy — the settings
// relation_extension_mode, _blocks, _max_blocks, _fallocate_threshold —
// through Store.SetExtensionPolicy, which the server's SIGHUP hooks call). It
// does not decide visibility itself — txn.Txn.Visible, SatisfiesUpdate,
// SatisfiesDirty and txn.Manager.SatisfiesVacuum do; uniqueness is the
// caller's judgement too (IndexInsertUnchanged inserts only if the
// entries it judged are unchanged); speculative insertion
// (speculative.go) keeps the caller's token
// in the tuple but the token's lock is the caller's — and the only
// heavyweight locks it takes
// are the relation extension lock and, while Update, Delete or LockTuple
// wait for a conflicting row locker or updater, the tuple lock and the
// transaction-id waits PostgreSQL's heap_update, heap_delete and
// heap_lock_tuple take (locktuple.go). Relation-level locks (RowExclusiveLock
// for DML, AccessExclusiveLock for DROP/TRUNCATE, ShareUpdateExclusiveLock
// for VACUUM) are the caller's job. It does not log in steady state and
// keeps its counters per backend (Stats sums them).
//
// # Durability
//
// Every change is logged in the write-ahead log (Config.WAL; walrec.go
// has the records and their replay, Redo): a page changes, its buffer is
// marked dirty, the record is inserted and the page gets the record's end
// as its LSN, all under the page's exclusive lock; a dirty page is written
// back only after the log is flushed to its LSN. A checkpoint's part
// (checkpoint.go: CheckpointBuffers, SyncFiles, SaveMaps) makes everything
// changed before the checkpoint's redo point durable; a failed fsync of a
// data file is a PANIC. Without a WAL (tests, benchmarks of storage
// alone) nothing is logged and only a clean Close is safe. All file I/O
// goes through Config.FS (vfs), so crash tests can drop or tear writes
// that were not synced.
//
// # Concurrency contract
//
// A Store is shared by all sessions; every method is safe for concurrent
// use. Methods taking a *locks.Proc must be called from that Proc's
// goroutine (its per-backend state — insertion target blocks, scratch
// headers, counters — is indexed by p.Number()); p may be nil for callers
// without a backend (checkpointer), which then share an overflow slot.
// Locking follows PostgreSQL:
//
//   - BufferMapping LWLocks (128 partitions): shared to look a page up,
//     exclusive to insert or evict a mapping.
//   - BufferContent LWLock per buffer: shared to read a page, exclusive to
//     change it; a cleanup lock (exclusive + the only pin) to move tuples
//     (VACUUM). Hint bits are set under a shared lock, atomically.
//   - Pins: a pinned buffer is never evicted and its tuples never move.
//     Fetch and Scan callbacks run with the page pinned but unlocked, so
//     they may call back into the Store (even for the same page); the data
//     slice they get is valid only until they return.
//   - Relation extension lock (heavyweight, ExtendTag(DatabaseOID, rel),
//     ExclusiveLock): held only while pages are added (zero-filled with
//     pwrite or fallocate, then published in the size and the free space
//     map); how many pages an extension adds depends on the extension
//     mode (single, fixed, group — group asks the lock manager for the
//     lock's WaiterCount); see extend.go. Store.SetExtensionPolicy may be
//     called at any time; each extension reads the policy once.
//   - One LWLock per index (tranche BufferContent): shared for lookups and
//     range scans, exclusive for changes. IndexLookup/IndexRange callbacks
//     run under it and must not call back into the same index.
//   - No buffer LWLock is held while waiting for a heavyweight lock, and
//     two buffers of one relation are locked in block order.
//
// DDL methods (CreateRelation, DropRelation, TruncateRelation and the index
// ones) expect the caller to hold the relation lock PostgreSQL holds; they
// wait out only transient pins (checkpoint, eviction).
//
// See bufmgr.go for the buffer pool design, extend.go for the extension
// path, fsm.go for the free space map, vismap.go for the visibility map
// (when a bit may be set, who clears it, why a reader needs no page lock,
// how it survives a crash), vacuum.go for VACUUM and index.go for the
// indexes; docs/storage.md summarises it all with the differences from
// PostgreSQL.
package storage
