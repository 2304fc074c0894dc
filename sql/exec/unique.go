package exec

import (
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// Unique checks. The entries already under a new entry's key in a unique
// index are judged with a dirty snapshot (txn's SatisfiesDirty), as
// PostgreSQL's _bt_check_unique judges them:
//
//   - a committed live version, or one of this transaction's: a
//     duplicate (23505 for INSERT, UPDATE and COPY; a conflict for the
//     arbiter indexes of INSERT ... ON CONFLICT, upsert.go);
//   - a version another transaction is inserting or deleting: wait for
//     that transaction (ShareLock on its transactionid) — or, while its
//     insertion is speculative, for its speculative insertion token
//     (ShareLock on the spectoken) — and check again;
//   - anything else (dead, aborted, deleted by a committed transaction):
//     no conflict, and one that will not become one.
//
// The entries are read under the index's shared lock and the heap
// versions after it; the new entry then goes in under the exclusive lock
// only if the entries under the key are still the ones judged and no
// VACUUM pass (which may hand a TID seen to a new tuple) ran meanwhile
// (storage.IndexInsertUnchanged), else the check runs again — so check
// and insertion act as one step without heap reads under the exclusive
// lock. The check removes the entries whose version is dead to every
// transaction as it meets them (as _bt_check_unique marks them dead;
// ON CONFLICT's pre-check too), so a key updated or upserted again and
// again does not make every check, and every scan of the key, walk all
// its old versions: without HOT every UPDATE adds an entry under the
// key, and a plan that does not clean up after itself (a bitmap scan,
// which a bloated heap makes the cheaper plan) would otherwise leave
// them all to VACUUM.

// dirtyFind is what a unique check found under a key.
type dirtyFind struct {
	found bool        // a live or own version: a duplicate
	tid   storage.TID // that version
	wait  txn.Xid     // a running inserter or deleter to wait for
	token uint32      // wait's speculative insertion token, if any
}

// uniqueScan judges the entries under key in unique index ix of t, but
// self, until a duplicate or a running inserter or deleter is met (f). If
// none is, seen lists the entries judged (valid until the next call) and
// vacuums the index's VACUUM count before the look, for
// IndexInsertUnchanged. With kill, entries dead to every transaction are
// removed.
func (s *Executor) uniqueScan(t *catalog.TableDef, ix *catalog.IndexDef, key []byte, self storage.TID, kill bool) (f dirtyFind, seen []storage.TID, vacuums uint64, err error) {
	st := s.Store
	irel := storage.RelID(ix.RelFile)
	vacuums = st.IndexVacuums(irel)
	seen = s.uniqueTIDs[:0]
	defer func() { s.uniqueTIDs = seen[:0] }()
	if err := st.IndexLookup(s.Proc, irel, key, func(tid storage.TID) bool {
		if tid != self {
			seen = append(seen, tid)
		}
		return true
	}); err != nil {
		return f, nil, 0, err
	}
	var horizon txn.Xid
	if kill && len(seen) > 1 {
		horizon = s.Txns.OldestXmin()
	}
	kept := seen[:0]
	for _, tid := range seen {
		dead, err := s.dirtyProbe(t, tid, &f, horizon)
		if err != nil {
			return f, nil, 0, err
		}
		if f.found || f.wait != 0 {
			return f, nil, 0, nil
		}
		if !dead {
			kept = append(kept, tid)
			continue
		}
		if err := st.IndexDelete(s.Proc, irel, key, tid); err != nil {
			return f, nil, 0, err
		}
	}
	return f, kept, vacuums, nil
}

// dirtyProbe judges the versions of the chain the index entry tid names
// into f (SnapshotDirty through heap_hot_search_buffer: the first version
// that is live or being changed decides); with a horizon it also reports
// whether every version is dead to every transaction, or the chain was
// pruned away.
func (s *Executor) dirtyProbe(t *catalog.TableDef, tid storage.TID, f *dirtyFind, horizon txn.Xid) (dead bool, err error) {
	dead = horizon != 0
	found, gone, err := s.Store.FetchVersions(s.Proc, storage.RelID(t.RelFile), tid, func(at storage.TID, h *txn.TupleHeader, ctid storage.TID, _ []byte) bool {
		hv := *h
		visible, w := s.Txn.SatisfiesDirty(h)
		switch {
		case w != 0:
			f.wait = w
			if tok, ok := storage.SpeculativeToken(ctid); ok && w == h.Xmin {
				f.token = tok
			}
		case visible:
			f.found, f.tid = true, at
		default:
			dead = dead && s.Txns.SatisfiesVacuum(&hv, horizon) == txn.HeapTupleDead
			return true
		}
		dead = false
		return false
	})
	if err == nil && !found {
		dead = horizon != 0 && gone
	}
	return dead, err
}

// insertUnique adds the entry (key, tid) of unique index ix, waiting for
// running inserters and deleters of the key, or fails with 23505
// (UNIQUE_CHECK_YES).
func (s *Executor) insertUnique(ec *expr.EvalCtx, t *catalog.TableDef, ix *catalog.IndexDef, row []types.Datum, key []byte, tid storage.TID) error {
	for {
		f, seen, vacuums, err := s.uniqueScan(t, ix, key, tid, true)
		switch {
		case err != nil:
			return err
		case f.found:
			return s.UniqueViolation(t, ix, row)
		case f.wait != 0:
			if err := s.waitInserter(ec, f.wait, f.token); err != nil {
				return err
			}
			continue
		}
		if ok, err := s.Store.IndexInsertUnchanged(s.Proc, storage.RelID(ix.RelFile), key, tid, seen, vacuums); err != nil || ok {
			return err
		}
	}
}

// insertArbiter adds the entry (key, tid) of an arbiter index of a
// speculative insertion unless the key is taken or being taken
// (UNIQUE_CHECK_PARTIAL: no wait); inserted false is a conflict.
func (s *Executor) insertArbiter(t *catalog.TableDef, ix *catalog.IndexDef, key []byte, tid storage.TID) (inserted bool, err error) {
	for {
		f, seen, vacuums, err := s.uniqueScan(t, ix, key, tid, false)
		if err != nil || f.found || f.wait != 0 {
			return false, err
		}
		if ok, err := s.Store.IndexInsertUnchanged(s.Proc, storage.RelID(ix.RelFile), key, tid, seen, vacuums); err != nil || ok {
			return ok, err
		}
	}
}

// waitInserter waits for a transaction that inserts or deletes a version
// under a unique key: for its speculative insertion token if it has one
// (SpeculativeInsertionWait), else for the transaction
// (XactLockTableWait).
func (s *Executor) waitInserter(ec *expr.EvalCtx, xid txn.Xid, token uint32) error {
	if token == 0 {
		return s.Txn.WaitForOptions(ec.Ctx, xid, s.LockOptions(false, false))
	}
	tag := locks.SpeculativeTokenTag(uint32(xid), token)
	if err := s.Locks.Lock(ec.Ctx, s.Proc, tag, locks.ShareLock, s.LockOptions(false, false)); err != nil {
		return err
	}
	s.Locks.Unlock(s.Proc, tag, locks.ShareLock, false)
	return nil
}
