package storage

import (
	"fmt"
	"testing"

	"lockd/txn"
)

// TestMultiInsertFrozen: COPY FREEZE's batches leave every page they fill
// from empty all-visible, with frozen tuples, and the pages and bits come
// back the same from the log after a crash; a page the batch only adds to
// keeps its bit clear. VACUUM then passes over the all-visible run and
// reads the rest.
func TestMultiInsertFrozen(t *testing.T) {
	dir := t.TempDir()
	e, _ := newWALEnv(t, dir)
	const rel = RelID(100)
	e.s.CreateRelation(rel)
	p, _ := e.lm.NewProc(7)
	var tx txn.Txn
	e.tm.Begin(&tx, p, txn.ReadCommitted)
	// One ordinary row first: page 0 is not empty when the batch comes.
	if _, err := e.s.Insert(bg, p, &tx, rel, row(0, 200), 100); err != nil {
		t.Fatal(err)
	}
	var batch [][]byte
	for i := uint64(1); i <= 2000; i++ {
		batch = append(batch, row(i, 200))
	}
	tids := make([]TID, len(batch))
	if err := e.s.MultiInsert(bg, p, &tx, rel, batch, 100, tids, true); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	e.lm.ReleaseTransactionLocks(p)
	pages, _ := e.s.RelationPages(rel)
	if pages < skipPagesThreshold+2 {
		t.Fatalf("only %d pages", pages)
	}
	want := e.vmBits(rel)
	if len(want) != int(pages)-1 || e.s.PageAllVisible(rel, 0) {
		t.Fatalf("all-visible pages %v of %d: want all but page 0", want, pages)
	}
	frozen := 0
	var h txn.TupleHeader
	for _, tid := range tids {
		ok, err := e.s.FetchAny(p, rel, tid, func(th *txn.TupleHeader, _ TID, _ []byte) { h = *th })
		if !ok || err != nil {
			t.Fatalf("tuple %v: %v %v", tid, ok, err)
		}
		if h.Flags&txn.XminFrozen == txn.XminFrozen {
			frozen++
		}
	}
	if frozen != len(tids) {
		t.Fatalf("%d of %d tuples frozen", frozen, len(tids))
	}
	before := e.maskedPages(rel)
	p.Close()
	e.crash()

	e, res := newWALEnv(t, dir)
	if !res.Recovered {
		t.Fatal("no recovery")
	}
	if got := e.vmBits(rel); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after recovery all-visible %v, want %v", got, want)
	}
	after := e.maskedPages(rel)
	for i := range before {
		if string(before[i]) != string(after[i]) {
			t.Fatalf("page %d differs after recovery", i)
		}
	}

	// The first VACUUM after a restart does not know the relation's
	// multixact floor: it reads every page. The next passes over the
	// all-visible run (all but the last page, which is always read); with
	// DISABLE_PAGE_SKIPPING (multiAge 0) it reads them all again.
	p, _ = e.lm.NewProc(8)
	vacuum := func(multiAge uint32) VacuumStats {
		t.Helper()
		vs, err := e.s.VacuumSkipping(bg, p, rel, e.tm.OldestXmin(), nil, multiAge, VacuumCost{})
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if vs := vacuum(150_000_000); vs.PagesScanned != pages || vs.PagesAllVisible != 0 {
		t.Fatalf("first VACUUM after restart: %+v, want all %d pages read", vs, pages)
	}
	// That one marked page 0 too: now only the last page is read.
	if vs := vacuum(150_000_000); vs.PagesScanned != 1 || vs.PagesAllVisible != pages-1 || vs.TuplesLive != uint64(countOn(tids, pages-1)) {
		t.Fatalf("second VACUUM: %+v, want the last page read, %d passed over", vs, pages-1)
	}
	if vs := vacuum(0); vs.PagesScanned != pages {
		t.Fatalf("VACUUM (DISABLE_PAGE_SKIPPING): %+v, want all %d pages read", vs, pages)
	}
	p.Close()
	e.crash()
}

func countOn(tids []TID, blk uint32) int {
	n := 0
	for _, tid := range tids {
		if tid.Block == blk {
			n++
		}
	}
	return n
}
