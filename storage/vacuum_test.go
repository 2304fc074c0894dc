package storage

import (
	"testing"
	"time"

	"lockd/txn"
)

// TestVacuumReclaimsSpace: a table filled, emptied by DELETE + VACUUM and
// filled again does not grow, under every extension policy.
func TestVacuumReclaimsSpace(t *testing.T) {
	for _, m := range extModes {
		t.Run(m.name, func(t *testing.T) {
			testVacuumReclaimsSpace(t, func(s *Store) { s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr) })
		})
	}
}

func testVacuumReclaimsSpace(t *testing.T, setPolicy func(*Store)) {
	e := newEnv(t, 64)
	setPolicy(e.s)
	const rel, idx = RelID(100), RelID(101)
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	se := e.session()
	const n = 2000
	fill := func(base uint64) []TID {
		tx := se.begin(txn.ReadCommitted)
		var tids []TID
		for i := uint64(0); i < n; i++ {
			tid, err := e.s.Insert(bg, se.p, tx, rel, row(base+i, 120), 100)
			if err != nil {
				t.Fatal(err)
			}
			e.s.IndexInsert(se.p, idx, key(base+i), tid)
			tids = append(tids, tid)
		}
		se.commit()
		return tids
	}
	tids := fill(0)
	pages, _ := e.s.RelationPages(rel)

	// A reader whose snapshot predates the delete keeps the rows alive.
	old := e.session()
	oldTx := old.begin(txn.RepeatableRead)
	oldTx.StatementSnapshot()

	tx := se.begin(txn.ReadCommitted)
	for _, tid := range tids {
		if out, err := e.s.Delete(bg, se.p, tx, rel, tid, RowWait{}); err != nil || out.Result != txn.TMOk {
			t.Fatalf("Delete %v: %+v %v", tid, out, err)
		}
	}
	se.commit()

	vs, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != 0 || vs.TuplesRemaining != n {
		t.Fatalf("vacuum with an old snapshot open: %+v", vs)
	}
	if got := scanAll(t, old, oldTx, rel); len(got) != n {
		t.Fatalf("old snapshot sees %d rows", len(got))
	}
	old.commit()

	vs, err = e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != n || vs.TuplesRemaining != 0 || vs.IndexEntriesRemoved != n || vs.PagesScanned != pages {
		t.Fatalf("vacuum: %+v (pages %d)", vs, pages)
	}
	if c, _ := e.s.IndexEntries(idx); c != 0 {
		t.Fatalf("%d index entries left", c)
	}
	// Refill: the table must not grow.
	fill(n)
	if p2, _ := e.s.RelationPages(rel); p2 != pages {
		t.Fatalf("table grew from %d to %d pages after DELETE+VACUUM+refill", pages, p2)
	}
	tx = se.begin(txn.ReadCommitted)
	if got := scanAll(t, se, tx, rel); len(got) != n {
		t.Fatalf("after refill %d rows", len(got))
	}
	se.commit()
	e.restart()
	se = e.session()
	tx = se.begin(txn.ReadCommitted)
	if got := scanAll(t, se, tx, rel); len(got) != n {
		t.Fatalf("after restart %d rows", len(got))
	}
	se.commit()
}

func TestVacuumUpdatedVersions(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(5)
	e.s.CreateRelation(rel)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var tids []TID
	for i := 0; i < 100; i++ {
		tid, _ := e.s.Insert(bg, se.p, tx, rel, row(uint64(i), 200), 50)
		tids = append(tids, tid)
	}
	se.commit()
	for round := 0; round < 20; round++ {
		tx := se.begin(txn.ReadCommitted)
		for i, tid := range tids {
			out, err := e.s.Update(bg, se.p, tx, rel, tid, row(uint64(i), 200), 50, false, false, RowWait{})
			if err != nil || out.Result != txn.TMOk {
				t.Fatalf("update: %+v %v", out, err)
			}
			tids[i] = out.NewTID
		}
		se.commit()
		if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), nil); err != nil {
			t.Fatal(err)
		}
	}
	pages, _ := e.s.RelationPages(rel)
	if pages > 12 {
		t.Fatalf("updated table with vacuum between rounds grew to %d pages", pages)
	}
	tx = se.begin(txn.ReadCommitted)
	if got := scanAll(t, se, tx, rel); len(got) != 100 {
		t.Fatalf("%d rows", len(got))
	}
	se.commit()
}

// The cost-based delay: with a limit of 20 and a dirtied page costing 20,
// VACUUM naps once per page it dirties, in each of its two heap passes,
// each nap Delay × balance / limit; without a delay it never naps.
func TestVacuumCostDelay(t *testing.T) {
	e := newEnv(t, 1024)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var tids []TID
	for i := range 400 {
		tid, err := e.s.Insert(bg, se.p, tx, rel, row(uint64(i), 200), 0)
		if err != nil {
			t.Fatal(err)
		}
		tids = append(tids, tid)
	}
	se.commit()
	pages := map[uint32]bool{}
	tx = se.begin(txn.ReadCommitted)
	for _, tid := range tids[:len(tids)/2] {
		if out, err := e.s.Delete(bg, se.p, tx, rel, tid, RowWait{}); err != nil || out.Result != txn.TMOk {
			t.Fatalf("delete %v: %v %v", tid, out.Result, err)
		}
		pages[tid.Block] = true
	}
	se.commit()
	// the pages are in the pool and clean: each costs a hit (1) and, once
	// dirtied, 20 more
	if err := e.s.Checkpoint(nil); err != nil {
		t.Fatal(err)
	}
	cost := VacuumCost{Delay: time.Millisecond, Limit: 20, PageHit: 1, PageMiss: 2, PageDirty: 20}
	vs, err := e.s.VacuumSkipping(bg, se.p, rel, e.tm.OldestXmin(), nil, 0, cost)
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != 200 {
		t.Fatalf("removed %d tuples, want 200", vs.TuplesRemoved)
	}
	// pass 1 dirties every page with a dead tuple, pass 3 finds them dirty
	// again (a checkpoint did not run between): at least one nap per
	// pruned page, each of 21/20 ms
	if int(vs.CostDelays) < len(pages) {
		t.Errorf("%d naps for %d pruned pages", vs.CostDelays, len(pages))
	}
	if min := time.Duration(vs.CostDelays) * time.Millisecond; vs.CostSlept < min {
		t.Errorf("slept %v in %d naps, want at least %v", vs.CostSlept, vs.CostDelays, min)
	}
	if vs.CostSlept > time.Duration(vs.CostDelays)*4*time.Millisecond {
		t.Errorf("slept %v in %d naps: a nap is at most 4 × the delay", vs.CostSlept, vs.CostDelays)
	}
	vs, err = e.s.VacuumSkipping(bg, se.p, rel, e.tm.OldestXmin(), nil, 0, VacuumCost{Limit: 20, PageHit: 1, PageDirty: 20})
	if err != nil || vs.CostDelays != 0 {
		t.Fatalf("without a delay: %d naps, err %v", vs.CostDelays, err)
	}
}
