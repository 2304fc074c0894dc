package storage

import (
	"runtime"
	"testing"

	"lockd/txn"
)

// The pages of shared_buffers are not Go heap: a pool of 64 MB leaves the
// heap (and so the collector's goal) about where it was, and its pages
// hold what was written to them.
func TestBufferPagesOutsideHeap(t *testing.T) {
	const buffers = 8192 // 64 MB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := newEnv(t, buffers)
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapSys) - int64(before.HeapSys); grew > buffers*PageSize/4 {
		t.Errorf("opening a store of %d buffers grew the Go heap by %d bytes", buffers, grew)
	}

	e.s.CreateRelation(1)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var tids []TID
	for i := range 3000 {
		tid, err := e.s.Insert(bg, se.p, tx, 1, row(uint64(i), 100), 0)
		if err != nil {
			t.Fatal(err)
		}
		tids = append(tids, tid)
	}
	se.commit()
	tx = se.begin(txn.ReadCommitted)
	for i, tid := range tids {
		var got []byte
		ok, err := e.s.Fetch(se.p, tx, 1, tid, func(_ *txn.TupleHeader, data []byte) { got = append(got, data...) })
		if err != nil || !ok {
			t.Fatalf("row %d at %v: ok %v, err %v", i, tid, ok, err)
		}
		if want := row(uint64(i), 100); string(got) != string(want) {
			t.Fatalf("row %d at %v reads back differently", i, tid)
		}
	}
	se.commit()
}
