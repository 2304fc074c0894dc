package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockd/locks"
	"lockd/txn"
)

// rowOp is one thing a transaction does to a row: a row lock of some
// strength, an UPDATE that changes a key column or not, or a DELETE.
type rowOp struct {
	name   string
	mode   txn.TupleLockMode // strength (also of the update or delete)
	lock   bool
	update bool
}

var rowOps = []rowOp{
	{"FOR KEY SHARE", txn.LockTupleKeyShare, true, false},
	{"FOR SHARE", txn.LockTupleShare, true, false},
	{"FOR NO KEY UPDATE", txn.LockTupleNoKeyExclusive, true, false},
	{"FOR UPDATE", txn.LockTupleExclusive, true, false},
	{"UPDATE", txn.LockTupleNoKeyExclusive, false, true},
	{"UPDATE of a key", txn.LockTupleExclusive, false, true},
	{"DELETE", txn.LockTupleExclusive, false, false},
}

func (o rowOp) do(e *env, se *session, rel RelID, tid TID, wait RowWait) (UpdateOutcome, error) {
	switch {
	case o.lock:
		return e.s.LockTuple(bg, se.p, &se.tx, rel, tid, o.mode, wait)
	case o.update:
		return e.s.Update(bg, se.p, &se.tx, rel, tid, row(99, 64), 100, o.mode == txn.LockTupleExclusive, false, wait)
	}
	return e.s.Delete(bg, se.p, &se.tx, rel, tid, wait)
}

func header(t *testing.T, e *env, se *session, rel RelID, tid TID) txn.TupleHeader {
	t.Helper()
	var h txn.TupleHeader
	if ok, err := e.s.FetchAny(se.p, rel, tid, func(hh *txn.TupleHeader, _ TID, _ []byte) { h = *hh }); !ok || err != nil {
		t.Fatalf("no tuple at %v: %v", tid, err)
	}
	return h
}

func insertRow(t testing.TB, e *env, se *session, rel RelID, id uint64) TID {
	t.Helper()
	tx := se.begin(txn.ReadCommitted)
	tid, err := e.s.Insert(bg, se.p, tx, rel, row(id, 64), 100)
	if err != nil {
		t.Fatal(err)
	}
	se.commit()
	return tid
}

// TestRowLockConflicts runs every pair of row operations of two
// transactions on one row: the second one is granted at once exactly when
// the strengths do not conflict (PostgreSQL's "Conflicting Row-Level
// Locks" table, with an UPDATE of no key column at FOR NO KEY UPDATE
// strength and a key UPDATE or DELETE at FOR UPDATE strength), and the
// row then names both transactions in a multixact.
func TestRowLockConflicts(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	a, b := e.session(), e.session()
	id := uint64(0)
	for _, held := range rowOps {
		for _, req := range rowOps {
			t.Run(held.name+"/"+req.name, func(t *testing.T) {
				id++
				tid := insertRow(t, e, a, rel, id)
				a.begin(txn.ReadCommitted)
				if out, err := held.do(e, a, rel, tid, RowWait{}); err != nil || out.Result != txn.TMOk {
					t.Fatalf("%s: %+v %v", held.name, out, err)
				}
				b.begin(txn.ReadCommitted)
				out, err := req.do(e, b, rel, tid, RowWait{Policy: WaitError})
				if err != nil {
					t.Fatal(err)
				}
				if req.mode.Conflicts(held.mode) {
					want := txn.TMBeingModified
					if req.lock {
						want = txn.TMWouldBlock
					}
					if out.Result != want || out.WaitXid != a.tx.CurrentXid() {
						t.Fatalf("%s after %s: %+v, want %v waiting for %d", req.name, held.name, out, want, a.tx.CurrentXid())
					}
				} else {
					if out.Result != txn.TMOk {
						t.Fatalf("%s after %s: %+v, want TM_Ok at once", req.name, held.name, out)
					}
					h := header(t, e, a, rel, tid)
					if !h.XmaxIsMulti() {
						t.Fatalf("xmax %d flags %#x: not a multixact", h.Xmax, h.Flags)
					}
					mems := e.tm.MultiMembers(txn.MultiXactID(h.Xmax), nil)
					if len(mems) != 2 || mems[0].Xid != a.tx.CurrentXid() || mems[1].Xid != b.tx.CurrentXid() {
						t.Fatalf("members %v, want the holder %d and %d", mems, a.tx.CurrentXid(), b.tx.CurrentXid())
					}
				}
				b.abort()
				a.abort()
			})
		}
	}
}

// TestKeyShareOnNonKeyUpdate is the pgbench --foreign-keys case: T1 has
// updated a tellers row without touching its key and still runs; T2
// inserts a history row referencing it and so locks the version it sees
// FOR KEY SHARE. That is granted at once, as a multixact {T1 no-key
// update, T2 key share}; the version T1 made is locked by T2 too, so a key
// change of it waits for T2.
func TestKeyShareOnNonKeyUpdate(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	t1, t2, t3 := e.session(), e.session(), e.session()
	tid := insertRow(t, e, t1, rel, 7)

	t1.begin(txn.ReadCommitted)
	up, err := e.s.Update(bg, t1.p, &t1.tx, rel, tid, row(7, 64), 100, false, false, RowWait{})
	if err != nil || up.Result != txn.TMOk {
		t.Fatalf("T1 update: %+v %v", up, err)
	}
	t2.begin(txn.ReadCommitted)
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	out, err := e.s.LockTuple(ctx, t2.p, &t2.tx, rel, tid, txn.LockTupleKeyShare, RowWait{})
	if err != nil || out.Result != txn.TMOk {
		t.Fatalf("T2 FOR KEY SHARE: %+v %v", out, err)
	}
	h := header(t, e, t2, rel, tid)
	mems := e.tm.MultiMembers(txn.MultiXactID(h.Xmax), nil)
	want := []txn.MultiMember{{Xid: t1.tx.Xid(), Status: txn.MultiNoKeyUpdate}, {Xid: t2.tx.Xid(), Status: txn.MultiForKeyShare}}
	if !h.XmaxIsMulti() || h.XmaxLockedOnly() || fmt.Sprint(mems) != fmt.Sprint(want) {
		t.Fatalf("old version xmax %d flags %#x members %v, want a multixact %v", h.Xmax, h.Flags, mems, want)
	}
	if nh := header(t, e, t2, rel, up.NewTID); nh.Xmax != t2.tx.Xid() || nh.Flags&txn.XmaxLockMask != txn.XmaxKeyShrLock {
		t.Fatalf("new version xmax %d flags %#x: not key-share locked by T2", nh.Xmax, nh.Flags)
	}
	// Readers still see the old version; T1's update stays T1's.
	t3.begin(txn.ReadCommitted)
	if vis, _ := e.s.Fetch(t3.p, &t3.tx, rel, tid, nil); !vis {
		t.Fatal("old version invisible to a reader while T1 runs")
	}
	t3.commit()
	t1.commit()
	// After T1 commits, a key update of the new version waits for T2.
	t3.begin(txn.ReadCommitted)
	done := make(chan UpdateOutcome, 1)
	go func() {
		out, err := e.s.Update(bg, t3.p, &t3.tx, rel, up.NewTID, row(8, 64), 100, true, false, RowWait{})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	eventually(t, "key update to wait for the key-share locker", func() bool { _, n := t3.p.WaitEvent(); return n == "transactionid" })
	t2.commit()
	if out := <-done; out.Result != txn.TMOk {
		t.Fatalf("key update after T2 ended: %+v", out)
	}
	t3.commit()
	r := e.session()
	r.begin(txn.ReadCommitted)
	if got := scanAll(t, r, &r.tx, rel); len(got) != 1 || got[8] == (TID{}) {
		t.Fatalf("rows %v, want only id 8", got)
	}
	r.commit()
}

// TestKeyUpdateWaitsForKeyShare: a key update (and a delete) waits for a
// FOR KEY SHARE locker, holding the tuple lock in AccessExclusiveLock mode
// meanwhile (a second one queues behind it on that lock); a non-key update
// does not wait and keeps the locker.
func TestKeyUpdateWaitsForKeyShare(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	locker, w1, w2, nk := e.session(), e.session(), e.session(), e.session()
	tid := insertRow(t, e, locker, rel, 1)
	locker.begin(txn.ReadCommitted)
	if out, err := e.s.LockTuple(bg, locker.p, &locker.tx, rel, tid, txn.LockTupleKeyShare, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("FOR KEY SHARE: %+v %v", out, err)
	}
	results := make(chan UpdateOutcome, 2)
	w1.begin(txn.ReadCommitted)
	go func() {
		out, err := e.s.Update(bg, w1.p, &w1.tx, rel, tid, row(2, 64), 100, true, false, RowWait{})
		if err != nil {
			t.Error(err)
		}
		results <- out
	}()
	eventually(t, "w1 to wait for the locker's xid", func() bool { _, n := w1.p.WaitEvent(); return n == "transactionid" })
	w2.begin(txn.ReadCommitted)
	go func() {
		out, err := e.s.Delete(bg, w2.p, &w2.tx, rel, tid, RowWait{})
		if err != nil {
			t.Error(err)
		}
		results <- out
	}()
	eventually(t, "w2 to queue on the tuple lock", func() bool { _, n := w2.p.WaitEvent(); return n == "tuple" })
	var tupleLocks []string
	for _, st := range e.lm.Status() {
		if st.Tag.Type == locks.LockTagTuple {
			tupleLocks = append(tupleLocks, fmt.Sprintf("%d %s %v", st.PID, st.Mode, st.Granted))
		}
	}
	want := fmt.Sprintf("[%d AccessExclusiveLock true %d AccessExclusiveLock false]", w1.p.PID(), w2.p.PID())
	if fmt.Sprint(tupleLocks) != want {
		t.Fatalf("tuple locks %v, want %s", tupleLocks, want)
	}

	// A non-key update goes ahead at once and keeps the key-share lock.
	other := insertRow(t, e, nk, rel, 3)
	locker2 := e.session()
	locker2.begin(txn.ReadCommitted)
	if out, _ := e.s.LockTuple(bg, locker2.p, &locker2.tx, rel, other, txn.LockTupleKeyShare, RowWait{}); out.Result != txn.TMOk {
		t.Fatal(out)
	}
	nk.begin(txn.ReadCommitted)
	out, err := e.s.Update(bg, nk.p, &nk.tx, rel, other, row(3, 64), 100, false, false, RowWait{Policy: WaitError})
	if err != nil || out.Result != txn.TMOk {
		t.Fatalf("non-key update beside a key-share lock: %+v %v", out, err)
	}
	if nh := header(t, e, nk, rel, out.NewTID); nh.Xmax != locker2.tx.Xid() || nh.Flags&txn.XmaxLockMask != txn.XmaxKeyShrLock {
		t.Fatalf("new version xmax %d flags %#x: the key-share lock was not carried over", nh.Xmax, nh.Flags)
	}
	nk.commit()
	locker2.commit()

	locker.commit()
	if out := <-results; out.Result != txn.TMOk {
		t.Fatalf("w1 after the locker ended: %+v", out)
	}
	w1.commit()
	if out := <-results; out.Result != txn.TMUpdated {
		t.Fatalf("w2 after w1 committed: %+v, want TM_Updated", out)
	}
	w2.abort()
}

// TestRowLockNoWaitSkip: a conflicting lock with WaitError or WaitSkip
// reports TMWouldBlock naming the holders, without waiting; so does a
// tuple lock that another waiter holds.
func TestRowLockNoWaitSkip(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	a, b, c := e.session(), e.session(), e.session()
	tid := insertRow(t, e, a, rel, 1)
	a.begin(txn.ReadCommitted)
	b.begin(txn.ReadCommitted)
	for _, se := range []*session{a, b} {
		if out, err := e.s.LockTuple(bg, se.p, &se.tx, rel, tid, txn.LockTupleShare, RowWait{}); err != nil || out.Result != txn.TMOk {
			t.Fatalf("FOR SHARE: %+v %v", out, err)
		}
	}
	c.begin(txn.ReadCommitted)
	for _, pol := range []WaitPolicy{WaitError, WaitSkip} {
		out, err := e.s.LockTuple(bg, c.p, &c.tx, rel, tid, txn.LockTupleExclusive, RowWait{Policy: pol})
		if err != nil || out.Result != txn.TMWouldBlock || out.WaitMulti == 0 || len(out.WaitMembers) != 2 {
			t.Fatalf("policy %d: %+v %v", pol, out, err)
		}
	}
	if n, _ := e.lm.Holds(c.p, locks.TupleTag(5, uint32(rel), tid.Block, tid.Offset), locks.AccessExclusiveLock); n != 0 {
		t.Fatal("tuple lock kept after TM_WouldBlock")
	}
	// FOR SHARE is compatible with FOR SHARE: granted, the multixact grows.
	if out, _ := e.s.LockTuple(bg, c.p, &c.tx, rel, tid, txn.LockTupleShare, RowWait{Policy: WaitError}); out.Result != txn.TMOk {
		t.Fatalf("third FOR SHARE: %+v", out)
	}
	h := header(t, e, c, rel, tid)
	if mems := e.tm.MultiMembers(txn.MultiXactID(h.Xmax), nil); len(mems) != 3 {
		t.Fatalf("members %v", mems)
	}
	// Locking again at the same or a weaker strength changes nothing.
	if out, _ := e.s.LockTuple(bg, c.p, &c.tx, rel, tid, txn.LockTupleKeyShare, RowWait{Policy: WaitError}); out.Result != txn.TMOk || header(t, e, c, rel, tid).Xmax != h.Xmax {
		t.Fatalf("weaker lock by a member: %+v", out)
	}
	a.commit()
	b.commit()
	c.commit()
}

// TestRowLockSubxact: a row lock taken before a savepoint survives a
// rolled-back update in the subtransaction (the update's multixact keeps
// the top level's lock), and a row lock taken inside one goes with it.
func TestRowLockSubxact(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	a, b := e.session(), e.session()
	tid := insertRow(t, e, a, rel, 1)
	a.begin(txn.ReadCommitted)
	if out, _ := e.s.LockTuple(bg, a.p, &a.tx, rel, tid, txn.LockTupleExclusive, RowWait{}); out.Result != txn.TMOk {
		t.Fatal(out)
	}
	a.tx.BeginSub()
	if out, err := e.s.Update(bg, a.p, &a.tx, rel, tid, row(1, 64), 100, false, false, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("update in subtransaction: %+v %v", out, err)
	}
	a.tx.AbortSub()
	b.begin(txn.ReadCommitted)
	out, _ := e.s.LockTuple(bg, b.p, &b.tx, rel, tid, txn.LockTupleKeyShare, RowWait{Policy: WaitError})
	if out.Result != txn.TMWouldBlock {
		t.Fatalf("FOR KEY SHARE against the surviving FOR UPDATE: %+v", out)
	}
	a.commit()
	b.commit()

	a.begin(txn.ReadCommitted)
	a.tx.BeginSub()
	if out, _ := e.s.LockTuple(bg, a.p, &a.tx, rel, tid, txn.LockTupleExclusive, RowWait{}); out.Result != txn.TMOk {
		t.Fatal(out)
	}
	a.tx.AbortSub()
	b.begin(txn.ReadCommitted)
	if out, _ := e.s.LockTuple(bg, b.p, &b.tx, rel, tid, txn.LockTupleExclusive, RowWait{Policy: WaitError}); out.Result != txn.TMOk {
		t.Fatalf("lock of a rolled-back subtransaction still holds: %+v", out)
	}
	b.commit()
	a.commit()
}

// TestMultixactRestart: a multixact with an updater survives a clean
// restart and a checkpoint followed by a crash; lock-only ones read as
// unlocked after a restart.
func TestMultixactRestart(t *testing.T) {
	for _, how := range []string{"clean restart", "checkpoint and crash"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, 64)
			const rel = RelID(1)
			e.s.CreateRelation(rel)
			t1, t2 := e.session(), e.session()
			tid := insertRow(t, e, t1, rel, 1)
			locked := insertRow(t, e, t1, rel, 2)
			t1.begin(txn.ReadCommitted)
			up, err := e.s.Update(bg, t1.p, &t1.tx, rel, tid, row(10, 64), 100, false, false, RowWait{})
			if err != nil || up.Result != txn.TMOk {
				t.Fatal(up, err)
			}
			t2.begin(txn.ReadCommitted)
			for _, x := range []TID{tid, locked} {
				if out, _ := e.s.LockTuple(bg, t2.p, &t2.tx, rel, x, txn.LockTupleKeyShare, RowWait{}); out.Result != txn.TMOk {
					t.Fatal(out)
				}
			}
			t1.tx.BeginSub() // t1 locks row 2 too, from a subtransaction
			if out, _ := e.s.LockTuple(bg, t1.p, &t1.tx, rel, locked, txn.LockTupleShare, RowWait{}); out.Result != txn.TMOk {
				t.Fatal(out)
			}
			t1.tx.CommitSub()
			t1.commit()
			t2.commit()
			oldXmax := header(t, e, t1, rel, tid).Xmax
			if how == "clean restart" {
				e.restart()
			} else {
				if err := e.s.Checkpoint(nil); err != nil {
					t.Fatal(err)
				}
				if err := e.tm.Checkpoint(); err != nil {
					t.Fatal(err)
				}
				// Abandon both without closing, as a crash would.
				tm, err := txn.Open(txn.Config{Locks: e.lm, DataDir: e.dir})
				if err != nil {
					t.Fatal(err)
				}
				e.tm = tm
				e.open()
			}
			r := e.session()
			r.begin(txn.ReadCommitted)
			if got := scanAll(t, r, &r.tx, rel); len(got) != 2 || got[10] != up.NewTID || got[2] != locked {
				t.Fatalf("after %s: rows %v", how, got)
			}
			h := header(t, e, r, rel, tid)
			if !h.XmaxIsMulti() || h.Xmax != oldXmax || e.tm.UpdateXid(&h) != t1.tx.Xid() {
				t.Fatalf("old version xmax %d flags %#x updater %d, want multixact %d updated by %d", h.Xmax, h.Flags, e.tm.UpdateXid(&h), oldXmax, t1.tx.Xid())
			}
			for _, x := range []TID{tid, up.NewTID, locked} {
				if out, _ := e.s.LockTuple(bg, r.p, &r.tx, rel, x, txn.LockTupleExclusive, RowWait{Policy: WaitError}); x != tid && out.Result != txn.TMOk || x == tid && out.Result != txn.TMUpdated {
					t.Errorf("FOR UPDATE of %v after %s: %+v", x, how, out)
				}
			}
			r.commit()
			if e.tm.NextMultiXactID() <= txn.MultiXactID(oldXmax) {
				t.Fatalf("multixact ids reused: next %d", e.tm.NextMultiXactID())
			}
		})
	}
}

// TestVacuumMultis: VACUUM replaces a finished multixact xmax by its
// committed updater, clears a lock-only one, keeps one with a running
// member, and then forgets the multixacts no tuple names any more.
func TestVacuumMultis(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	a, b, c := e.session(), e.session(), e.session()
	updated := insertRow(t, e, a, rel, 1)
	shared := insertRow(t, e, a, rel, 2)
	running := insertRow(t, e, a, rel, 3)
	a.begin(txn.ReadCommitted)
	b.begin(txn.ReadCommitted)
	if out, _ := e.s.Update(bg, a.p, &a.tx, rel, updated, row(1, 64), 100, false, false, RowWait{}); out.Result != txn.TMOk {
		t.Fatal(out)
	}
	for _, x := range []TID{updated, shared} {
		if out, _ := e.s.LockTuple(bg, b.p, &b.tx, rel, x, txn.LockTupleKeyShare, RowWait{}); out.Result != txn.TMOk {
			t.Fatal(out)
		}
	}
	if out, _ := e.s.LockTuple(bg, a.p, &a.tx, rel, shared, txn.LockTupleShare, RowWait{}); out.Result != txn.TMOk {
		t.Fatal(out)
	}
	// A snapshot from before the commit keeps the old version (recently dead).
	r := e.session()
	r.begin(txn.RepeatableRead)
	r.tx.StatementSnapshot()
	a.commit()
	b.commit()
	a.begin(txn.ReadCommitted)
	c.begin(txn.ReadCommitted)
	for _, se := range []*session{a, c} {
		if out, _ := e.s.LockTuple(bg, se.p, &se.tx, rel, running, txn.LockTupleShare, RowWait{}); out.Result != txn.TMOk {
			t.Fatal(out)
		}
	}
	a.commit() // c still runs
	runningMulti := txn.MultiXactID(header(t, e, a, rel, running).Xmax)

	vs, err := e.s.Vacuum(bg, nil, rel, e.tm.OldestXmin(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs.MultisResolved != 2 {
		t.Fatalf("resolved %d multixacts, want 2 (%+v)", vs.MultisResolved, vs)
	}
	if h := header(t, e, a, rel, updated); h.XmaxIsMulti() || h.Flags&txn.XmaxCommitted == 0 {
		t.Fatalf("updated row: xmax %d flags %#x, want the committed updater", h.Xmax, h.Flags)
	}
	if h := header(t, e, a, rel, shared); h.XmaxIsMulti() || h.Flags&txn.XmaxInvalid == 0 {
		t.Fatalf("shared row: xmax %d flags %#x, want no xmax", h.Xmax, h.Flags)
	}
	if h := header(t, e, a, rel, running); !h.XmaxIsMulti() || txn.MultiXactID(h.Xmax) != runningMulti {
		t.Fatalf("running row lost its multixact: xmax %d flags %#x", h.Xmax, h.Flags)
	}
	if got := e.tm.OldestMultiXactID(); got != runningMulti {
		t.Fatalf("oldest multixact kept %d, want %d (the one still named)", got, runningMulti)
	}
	if got := scanAll(t, r, &r.tx, rel); len(got) != 3 || got[1] != updated {
		t.Fatalf("rows after vacuum for the old snapshot: %v", got)
	}
	r.commit()
	c.commit()
	if _, err := e.s.Vacuum(bg, nil, rel, e.tm.OldestXmin(), nil); err != nil {
		t.Fatal(err)
	}
	if got, next := e.tm.OldestMultiXactID(), e.tm.NextMultiXactID(); got != next {
		t.Fatalf("after the last member ended: oldest multixact %d, next %d", got, next)
	}
	e.restart()
	r = e.session()
	r.begin(txn.ReadCommitted)
	if got := scanAll(t, r, &r.tx, rel); len(got) != 3 {
		t.Fatalf("rows after vacuum and restart: %v", got)
	}
	r.commit()
}

// TestRowLockStress: goroutines mix FOR KEY SHARE locks (as foreign-key
// checks) with non-key updates of a few rows, some in the same
// transaction. Nothing deadlocks, no lock wait fails, and every update
// counts.
func TestRowLockStress(t *testing.T) {
	e := newEnv(t, 128)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	const rows, workers = 3, 6
	perWorker := 150
	if testing.Short() {
		perWorker = 40
	}
	mk := func(id, n uint64) []byte {
		b := make([]byte, 32)
		binary.BigEndian.PutUint64(b, id)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	init := e.session()
	tx := init.begin(txn.ReadCommitted)
	for id := uint64(0); id < rows; id++ {
		if _, err := e.s.Insert(bg, init.p, tx, rel, mk(id, 0), 100); err != nil {
			t.Fatal(err)
		}
	}
	init.commit()

	// find returns the version of row id visible to a new snapshot.
	find := func(se *session, id uint64) (TID, uint64) {
		se.tx.StatementSnapshot()
		var tid TID
		var n uint64
		e.s.Scan(bg, se.p, &se.tx, rel, func(x TID, d []byte) error {
			if binary.BigEndian.Uint64(d) == id {
				tid, n = x, binary.BigEndian.Uint64(d[8:])
			}
			return nil
		})
		return tid, n
	}
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	var updates atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			se := e.session()
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < perWorker && ctx.Err() == nil; i++ {
				// Key-share locks around one non-key update: the locks
				// never wait, so only updates of one row queue and no
				// wait can close a cycle. Any deadlock is a bug.
				se.begin(txn.ReadCommitted)
				ok := true
				steps := 1 + rnd.IntN(3)
				upd := rnd.IntN(steps)
				for step := 0; step < steps && ok; step++ {
					id := uint64(rnd.IntN(rows))
					if step != upd {
						tid, _ := find(se, id)
						out, err := e.s.LockTuple(ctx, se.p, &se.tx, rel, tid, txn.LockTupleKeyShare, RowWait{})
						if err != nil {
							t.Errorf("FOR KEY SHARE: %v", err)
							ok = false
						} else if out.Result != txn.TMOk && out.Result != txn.TMUpdated {
							t.Errorf("FOR KEY SHARE: %+v", out)
						}
						continue
					}
					for {
						tid, n := find(se, id)
						out, err := e.s.Update(ctx, se.p, &se.tx, rel, tid, mk(id, n+1), 100, false, false, RowWait{})
						if err != nil {
							var le *locks.Error
							if errors.As(err, &le) {
								t.Errorf("update wait failed: %v", err)
							} else {
								t.Error(err)
							}
							ok = false
							break
						}
						if out.Result == txn.TMOk {
							updates.Add(1)
							break
						}
						if out.Result != txn.TMUpdated && out.Result != txn.TMSelfModified {
							t.Errorf("update: %+v", out)
							ok = false
							break
						}
						if out.Result == txn.TMSelfModified {
							// Updated by our own earlier step: count it again
							// on the newest version.
							se.tx.CommandCounterIncrement()
						}
					}
					se.tx.CommandCounterIncrement()
				}
				if ok {
					se.commit()
				} else {
					se.abort()
					return
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("stress test timed out: deadlock?")
	}
	r := e.session()
	r.begin(txn.ReadCommitted)
	var sum uint64
	n := 0
	e.s.Scan(bg, r.p, &r.tx, rel, func(_ TID, d []byte) error {
		sum += binary.BigEndian.Uint64(d[8:])
		n++
		return nil
	})
	r.commit()
	if n != rows || sum != uint64(updates.Load()) {
		t.Fatalf("%d rows, counter sum %d, %d updates", n, sum, updates.Load())
	}
	t.Logf("%d updates, %d multixacts", updates.Load(), e.tm.Stats().MultisCreated)
}

// eventually polls cond until it holds or 10s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
