package storage

import (
	"testing"

	"lockd/txn"
)

// BenchmarkUpdate is one session updating one row per transaction (the
// uncontended heap_update path: no lockers, same page), vacuuming when
// the page fills. It should not allocate.
func BenchmarkUpdate(b *testing.B) {
	e := newEnv(b, 256)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	se := e.session()
	tid := insertRow(b, e, se, rel, 1)
	data := row(1, 100)
	b.ReportAllocs()
	for b.Loop() {
		tx := se.begin(txn.ReadCommitted)
		out, err := e.s.Update(bg, se.p, tx, rel, tid, data, 100, false, false, RowWait{})
		if err != nil || out.Result != txn.TMOk {
			b.Fatal(out, err)
		}
		tid = out.NewTID
		se.commit()
		if tid.Offset > 60 {
			if _, err := e.s.Vacuum(bg, nil, rel, e.tm.OldestXmin(), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkLockTupleKeyShare is a foreign-key check's FOR KEY SHARE lock
// of an unlocked row, one per transaction. It should not allocate.
func BenchmarkLockTupleKeyShare(b *testing.B) {
	e := newEnv(b, 256)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	se := e.session()
	tid := insertRow(b, e, se, rel, 1)
	b.ReportAllocs()
	for b.Loop() {
		tx := se.begin(txn.ReadCommitted)
		out, err := e.s.LockTuple(bg, se.p, tx, rel, tid, txn.LockTupleKeyShare, RowWait{})
		if err != nil || out.Result != txn.TMOk {
			b.Fatal(out, err)
		}
		se.commit()
	}
}
