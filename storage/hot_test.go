package storage

import (
	"testing"

	"lockd/txn"
)

// hotEnv is a table of one row with one index entry naming it.
func hotEnv(t *testing.T) (*env, *session, RelID, RelID, TID) {
	e := newEnv(t, 64)
	const rel, idx = RelID(100), RelID(101)
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	root, err := e.s.Insert(bg, se.p, tx, rel, row(1, 100), 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.s.IndexInsert(se.p, idx, key(1), root); err != nil {
		t.Fatal(err)
	}
	se.commit()
	return e, se, rel, idx, root
}

// hotUpdate updates the version at tid into a row of size bytes, as a
// HOT update when the page has room, and commits.
func hotUpdate(t *testing.T, e *env, se *session, rel RelID, tid TID, size int) UpdateOutcome {
	t.Helper()
	tx := se.begin(txn.ReadCommitted)
	out, err := e.s.Update(bg, se.p, tx, rel, tid, row(1, size), 100, false, true, RowWait{})
	if err != nil || out.Result != txn.TMOk {
		t.Fatalf("Update %v: %+v %v", tid, out, err)
	}
	se.commit()
	return out
}

// fetchRoot fetches through the index entry: the version tx sees.
func fetchRoot(t *testing.T, e *env, se *session, tx *txn.Txn, rel RelID, root TID) (TID, int, bool) {
	t.Helper()
	size := 0
	at, vis, _, err := e.s.FetchJudged(se.p, tx, rel, root, 0, func(_ *txn.TupleHeader, data []byte) { size = len(data) })
	if err != nil {
		t.Fatal(err)
	}
	return at, size, vis
}

func lineFlags(e *env, se *session, rel RelID, blk uint32) map[int]int {
	r, _ := e.s.relation(rel)
	b, _ := e.s.backend(se.p)
	id, err := e.s.readBuffer(se.p, &b.stats, r, blk)
	if err != nil {
		e.t.Fatal(err)
	}
	d := e.s.pool.desc(id)
	defer d.unpin()
	pg := e.s.pool.page(id)
	out := map[int]int{}
	for off := 1; off <= pg.maxOffset(); off++ {
		_, f, _ := pg.itemID(off)
		out[off] = f
	}
	return out
}

// TestHotChain: updates that change no indexed column make heap-only
// versions on the root's page. A fetch through the root finds the
// version each snapshot sees and returns its TID; the chain's versions
// are linked by the HOT flags.
func TestHotChain(t *testing.T) {
	e, se, rel, _, root := hotEnv(t)
	old := e.session()
	oldTx := old.begin(txn.RepeatableRead)
	oldTx.StatementSnapshot()

	cur := root
	for i := 0; i < 5; i++ {
		out := hotUpdate(t, e, se, rel, cur, 101+i)
		if !out.HOT || out.NewTID.Block != root.Block {
			t.Fatalf("update %d: %+v, want a HOT update on block %d", i, out, root.Block)
		}
		var h txn.TupleHeader
		e.s.FetchAny(se.p, rel, cur, func(hh *txn.TupleHeader, _ TID, _ []byte) { h = *hh })
		if h.Flags2&txn.HotUpdated == 0 {
			t.Fatalf("version %v not flagged HOT-updated: %#x", cur, h.Flags2)
		}
		e.s.FetchAny(se.p, rel, out.NewTID, func(hh *txn.TupleHeader, _ TID, _ []byte) { h = *hh })
		if h.Flags2&txn.HeapOnly == 0 {
			t.Fatalf("new version %v not heap-only: %#x", out.NewTID, h.Flags2)
		}
		cur = out.NewTID
	}
	tx := se.begin(txn.ReadCommitted)
	at, size, vis := fetchRoot(t, e, se, tx, rel, root)
	if !vis || at != cur || size != 105 {
		t.Fatalf("new snapshot through the root: %v size %d visible %v, want %v size 105", at, size, vis, cur)
	}
	se.commit()
	at, size, vis = fetchRoot(t, e, old, oldTx, rel, root)
	if !vis || at != root || size != 100 {
		t.Fatalf("old snapshot through the root: %v size %d visible %v, want %v size 100", at, size, vis, root)
	}
	// a bitmap heap scan's exact page: the root's offset leads there too
	var got []TID
	tx = se.begin(txn.ReadCommitted)
	if err := e.s.ScanBlock(se.p, tx, rel, root.Block, []uint16{root.Offset}, func(tid TID, _ []byte) error {
		got = append(got, tid)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	se.commit()
	if len(got) != 1 || got[0] != cur {
		t.Fatalf("ScanBlock at the root's offset returned %v, want [%v]", got, cur)
	}
	// the chain's heap-only versions map back to the root
	tids := []TID{cur}
	if broken, err := e.s.RootTIDs(se.p, rel, tids); err != nil || tids[0] != root || !broken {
		t.Fatalf("RootTIDs(%v) = %v %v %v, want %v and broken (older versions still there)", cur, tids, broken, err, root)
	}
	old.commit()
}

// TestHotPruneAndVacuum: once no snapshot needs them, pruning frees the
// chain's dead heap-only versions at once and turns the root into a
// redirect, without touching the index; only a chain that died whole
// leaves an LP_DEAD root for VACUUM's index pass.
func TestHotPruneAndVacuum(t *testing.T) {
	e, se, rel, idx, root := hotEnv(t)
	cur := root
	for i := 0; i < 4; i++ {
		cur = hotUpdate(t, e, se, rel, cur, 100).NewTID
	}
	vs, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != 4 || vs.IndexEntriesRemoved != 0 {
		t.Fatalf("VACUUM: %+v, want 4 versions removed and no index entry", vs)
	}
	lf := lineFlags(e, se, rel, root.Block)
	if lf[int(root.Offset)] != lpRedirect || lf[int(cur.Offset)] != lpNormal {
		t.Fatalf("line pointers after pruning: %v, want %d redirected and %d normal", lf, root.Offset, cur.Offset)
	}
	for off, f := range lf {
		if off != int(root.Offset) && off != int(cur.Offset) && f != lpUnused {
			t.Fatalf("line pointer %d is %d after pruning, want unused", off, f)
		}
	}
	tx := se.begin(txn.ReadCommitted)
	if at, _, vis := fetchRoot(t, e, se, tx, rel, root); !vis || at != cur {
		t.Fatalf("through the redirect: %v visible %v, want %v", at, vis, cur)
	}
	se.commit()

	// The freed line pointers take the next versions: the page does
	// not grow however often the row is updated.
	for i := 0; i < 300; i++ {
		out := hotUpdate(t, e, se, rel, cur, 100)
		cur = out.NewTID
		if i%50 == 49 {
			if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, _ := e.s.RelationPages(rel); n != 1 {
		t.Fatalf("%d pages after 300 HOT updates with VACUUM, want 1", n)
	}

	// Delete the row: the whole chain dies, the root becomes LP_DEAD,
	// and VACUUM removes the index entry and frees the root.
	tx = se.begin(txn.ReadCommitted)
	if out, err := e.s.Delete(bg, se.p, tx, rel, cur, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("Delete: %+v %v", out, err)
	}
	se.commit()
	vs, err = e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if vs.IndexEntriesRemoved != 1 {
		t.Fatalf("VACUUM after the delete: %+v, want the index entry removed", vs)
	}
	if n, _ := e.s.IndexEntries(idx); n != 0 {
		t.Fatalf("%d index entries left", n)
	}
	for off, f := range lineFlags(e, se, rel, root.Block) {
		if f != lpUnused {
			t.Fatalf("line pointer %d is %d after VACUUM, want unused", off, f)
		}
	}
}

// TestHotAbortedUpdate: an aborted HOT update leaves the old version
// visible through the root, and its new version is pruned as an orphan.
func TestHotAbortedUpdate(t *testing.T) {
	e, se, rel, idx, root := hotEnv(t)
	tx := se.begin(txn.ReadCommitted)
	out, err := e.s.Update(bg, se.p, tx, rel, root, row(1, 90), 100, false, true, RowWait{})
	if err != nil || !out.HOT {
		t.Fatalf("Update: %+v %v", out, err)
	}
	se.abort()
	tx = se.begin(txn.ReadCommitted)
	if at, size, vis := fetchRoot(t, e, se, tx, rel, root); !vis || at != root || size != 100 {
		t.Fatalf("after the abort: %v size %d visible %v, want the root's version", at, size, vis)
	}
	se.commit()
	if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	lf := lineFlags(e, se, rel, root.Block)
	if lf[int(root.Offset)] != lpNormal || lf[int(out.NewTID.Offset)] != lpUnused {
		t.Fatalf("line pointers after VACUUM: %v, want the root normal and the orphan unused", lf)
	}
	// and the row can be HOT-updated again
	cur := hotUpdate(t, e, se, rel, root, 100).NewTID
	tx = se.begin(txn.ReadCommitted)
	if at, _, vis := fetchRoot(t, e, se, tx, rel, root); !vis || at != cur {
		t.Fatalf("after a new update: %v visible %v, want %v", at, vis, cur)
	}
	se.commit()
}

// TestPruneOnTheWay: a reader that finds a page nearly full prunes it
// when it can, so a row updated over and over stays on its page without
// VACUUM.
func TestPruneOnTheWay(t *testing.T) {
	e, se, rel, _, root := hotEnv(t)
	cur := root
	for i := 0; i < 2000; i++ {
		out := hotUpdate(t, e, se, rel, cur, 200)
		cur = out.NewTID
		tx := se.begin(txn.ReadCommitted)
		if at, _, vis := fetchRoot(t, e, se, tx, rel, root); !vis || at != cur {
			t.Fatalf("update %d: through the root %v visible %v, want %v", i, at, vis, cur)
		}
		se.commit()
	}
	if n, _ := e.s.RelationPages(rel); n != 1 {
		t.Fatalf("%d pages after 2000 HOT updates read through the index, want 1", n)
	}
}
