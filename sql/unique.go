package sql

import (
	"lockd/locks"
	"lockd/storage"
	"lockd/txn"
)

// Unique checks. A new index entry of a unique index is checked against
// the entries already under its key and inserted in one step
// (storage.IndexInsertUnique), with a dirty snapshot (txn's
// SatisfiesDirty), as PostgreSQL's _bt_check_unique checks under the leaf
// page lock it inserts under:
//
//   - a committed live version, or one of this transaction's: a
//     duplicate (23505 for INSERT, UPDATE and COPY; a conflict for the
//     arbiter indexes of INSERT ... ON CONFLICT, upsert.go);
//   - a version another transaction is inserting or deleting: wait for
//     that transaction (ShareLock on its transactionid) — or, while its
//     insertion is speculative, for its speculative insertion token
//     (ShareLock on the spectoken) — and check again;
//   - anything else (dead, aborted, deleted by a committed transaction):
//     no conflict.

// dirtyFind is what a unique check found under a key.
type dirtyFind struct {
	found bool        // a live or own version: a duplicate
	tid   storage.TID // that version
	wait  txn.Xid     // a running inserter or deleter to wait for
	token uint32      // wait's speculative insertion token, if any
}

// dirtyProbe classifies the version at tid of t into f and reports
// whether the check can stop there.
func (s *Session) dirtyProbe(t *TableDef, tid storage.TID, f *dirtyFind) (bool, error) {
	_, err := s.eng.store.FetchAny(s.proc, storage.RelID(t.RelFile), tid, func(h *txn.TupleHeader, ctid storage.TID, _ []byte) {
		visible, w := s.txn.SatisfiesDirty(h)
		switch {
		case w != 0:
			f.wait = w
			if tok, ok := storage.SpeculativeToken(ctid); ok && w == h.Xmin {
				f.token = tok
			}
		case visible:
			f.found, f.tid = true, tid
		}
	})
	return err != nil || f.found || f.wait != 0, err
}

// insertUnique adds the entry (key, tid) of unique index ix, waiting for
// running inserters and deleters of the key, or fails with 23505
// (UNIQUE_CHECK_YES).
func (s *Session) insertUnique(ec *evalCtx, t *TableDef, ix *IndexDef, row []Datum, key []byte, tid storage.TID) error {
	for {
		var f dirtyFind
		var ferr error
		ok, err := s.eng.store.IndexInsertUnique(s.proc, storage.RelID(ix.RelFile), key, tid, func(other storage.TID) bool {
			var stop bool
			stop, ferr = s.dirtyProbe(t, other, &f)
			return stop
		})
		if err = firstErr(err, ferr); err != nil || ok {
			return err
		}
		if f.found {
			return s.uniqueViolation(t, ix, row)
		}
		if err := s.waitInserter(ec, f.wait, f.token); err != nil {
			return err
		}
	}
}

// waitInserter waits for a transaction that inserts or deletes a version
// under a unique key: for its speculative insertion token if it has one
// (SpeculativeInsertionWait), else for the transaction
// (XactLockTableWait).
func (s *Session) waitInserter(ec *evalCtx, xid txn.Xid, token uint32) error {
	if token == 0 {
		return s.txn.WaitForOptions(ec.ctx, xid, s.lockOptions(false, false))
	}
	tag := locks.SpeculativeTokenTag(uint32(xid), token)
	if err := s.eng.locks.Lock(ec.ctx, s.proc, tag, locks.ShareLock, s.lockOptions(false, false)); err != nil {
		return err
	}
	s.eng.locks.Unlock(s.proc, tag, locks.ShareLock, false)
	return nil
}
