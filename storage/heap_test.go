package storage

import (
	"errors"
	"os"
	"sync"
	"testing"

	"lockd/txn"
)

func scanAll(t testing.TB, se *session, tx *txn.Txn, rel RelID) map[uint64]TID {
	t.Helper()
	got := map[uint64]TID{}
	err := se.e.s.Scan(bg, se.p, tx, rel, func(tid TID, data []byte) error {
		if err := checkRow(data); err != nil {
			return err
		}
		id := rowID(data)
		if _, dup := got[id]; dup {
			t.Errorf("row %d seen twice", id)
		}
		got[id] = tid
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestInsertFetchScanRestart(t *testing.T) {
	e := newEnv(t, 64)
	const rel, idx = RelID(16384), RelID(16385)
	if err := e.s.CreateRelation(rel); err != nil {
		t.Fatal(err)
	}
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	if err := e.s.CreateRelation(rel); !errors.Is(err, ErrRelationExists) {
		t.Fatalf("second CreateRelation: %v", err)
	}
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	const n = 3000
	tids := map[uint64]TID{}
	for i := uint64(0); i < n; i++ {
		tid, err := e.s.Insert(bg, se.p, tx, rel, row(i, 50+int(i%200)), 100)
		if err != nil {
			t.Fatal(err)
		}
		tids[i] = tid
		if err := e.s.IndexInsert(se.p, idx, key(i), tid); err != nil {
			t.Fatal(err)
		}
	}
	// Own inserts are invisible to the command that made them.
	if got := scanAll(t, se, tx, rel); len(got) != 0 {
		t.Fatalf("scan in inserting command saw %d rows", len(got))
	}
	tx.CommandCounterIncrement()
	if got := scanAll(t, se, tx, rel); len(got) != n {
		t.Fatalf("scan after CommandCounterIncrement saw %d rows, want %d", len(got), n)
	}
	se.commit()
	pages, _ := e.s.RelationPages(rel)
	if pages < 20 {
		t.Fatalf("only %d pages for %d rows", pages, n)
	}

	check := func() {
		t.Helper()
		se := e.session()
		tx := se.begin(txn.ReadCommitted)
		got := scanAll(t, se, tx, rel)
		if len(got) != n {
			t.Fatalf("scan saw %d rows, want %d", len(got), n)
		}
		for id, tid := range tids {
			if got[id] != tid {
				t.Fatalf("row %d at %v, want %v", id, got[id], tid)
			}
			var seen bool
			vis, err := e.s.Fetch(se.p, tx, rel, tid, func(h *txn.TupleHeader, data []byte) {
				seen = rowID(data) == id
			})
			if err != nil || !vis || !seen {
				t.Fatalf("Fetch %v: visible=%v seen=%v err=%v", tid, vis, seen, err)
			}
			var found []TID
			if err := e.s.IndexLookup(se.p, idx, key(id), func(t TID) bool { found = append(found, t); return true }); err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 || found[0] != tid {
				t.Fatalf("IndexLookup(%d) = %v, want [%v]", id, found, tid)
			}
		}
		se.commit()
	}
	check()
	r, _ := e.s.relation(rel)
	var cats []uint8
	for b := uint32(0); b < pages; b++ {
		cats = append(cats, r.fsm.get(b))
	}
	e.restart()
	if p2, _ := e.s.RelationPages(rel); p2 != pages {
		t.Fatalf("after restart %d pages, want %d", p2, pages)
	}
	r, _ = e.s.relation(rel)
	for b := uint32(0); b < pages; b++ {
		if c := r.fsm.get(b); c != cats[b] {
			t.Fatalf("fsm of block %d after restart = %d, want %d", b, c, cats[b])
		}
	}
	check()

	// Without the FSM file it is rebuilt from the pages.
	e.restart()
	if err := os.Remove(e.s.fsmPath(rel)); err != nil {
		t.Fatal(err)
	}
	e.s.Close(nil)
	e.open()
	r, _ = e.s.relation(rel)
	for b := uint32(0); b < pages; b++ {
		if c := r.fsm.get(b); c > cats[b]+1 || c+1 < cats[b] && cats[b] != 0 {
			t.Fatalf("rebuilt fsm of block %d = %d, recorded %d", b, c, cats[b])
		}
	}
	check()
}

func TestUpdateChain(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(1)
	e.s.CreateRelation(rel)
	a, b := e.session(), e.session()
	tx := a.begin(txn.ReadCommitted)
	tid, err := e.s.Insert(bg, a.p, tx, rel, row(1, 100), 100)
	if err != nil {
		t.Fatal(err)
	}
	a.commit()

	// b holds a REPEATABLE READ snapshot from before the update.
	old := b.begin(txn.RepeatableRead)
	old.StatementSnapshot()

	tx = a.begin(txn.ReadCommitted)
	out, err := e.s.Update(bg, a.p, tx, rel, tid, row(2, 100), 100, false, false, RowWait{})
	if err != nil || out.Result != txn.TMOk {
		t.Fatalf("Update: %+v %v", out, err)
	}
	newTID := out.NewTID
	if newTID == tid || newTID.Block != tid.Block {
		t.Fatalf("new version at %v (old %v): want same page", newTID, tid)
	}
	// A second updater sees the first still running.
	c := e.session()
	tx2 := c.begin(txn.ReadCommitted)
	out2, err := e.s.Update(bg, c.p, tx2, rel, tid, row(3, 100), 100, false, false, RowWait{Policy: WaitError})
	if err != nil || out2.Result != txn.TMBeingModified || out2.WaitXid != tx.Xid() {
		t.Fatalf("concurrent Update: %+v %v (updater xid %v)", out2, err, tx.Xid())
	}
	a.commit()
	out2, err = e.s.Update(bg, c.p, tx2, rel, tid, row(3, 100), 100, false, false, RowWait{})
	if err != nil || out2.Result != txn.TMUpdated || out2.NextTID != newTID {
		t.Fatalf("Update after commit: %+v %v, want TMUpdated → %v", out2, err, newTID)
	}
	c.abort()

	// ctid chain
	var ctid TID
	if ok, _ := e.s.FetchAny(a.p, rel, tid, func(h *txn.TupleHeader, c TID, _ []byte) {
		ctid = c
		if h.Flags&txn.Updated == 0 {
			t.Errorf("old version not flagged Updated: %#x", h.Flags)
		}
	}); !ok || ctid != newTID {
		t.Fatalf("old ctid = %v, want %v", ctid, newTID)
	}

	// The old snapshot sees the old version only; a new one the new only.
	got := scanAll(t, b, old, rel)
	if len(got) != 1 || got[1] != tid {
		t.Fatalf("old snapshot sees %v", got)
	}
	b.commit()
	tx = b.begin(txn.ReadCommitted)
	got = scanAll(t, b, tx, rel)
	if len(got) != 1 || got[2] != newTID {
		t.Fatalf("new snapshot sees %v", got)
	}
	if vis, _ := e.s.Fetch(b.p, tx, rel, tid, nil); vis {
		t.Fatal("old version visible to new snapshot")
	}
	b.commit()

	// Updates that do not fit the page go elsewhere, keeping the chain.
	// A snapshot from before them keeps the old versions from being
	// pruned while the chain is walked.
	hold := b.begin(txn.RepeatableRead)
	hold.StatementSnapshot()
	tx = a.begin(txn.ReadCommitted)
	cur := newTID
	for i := 0; i < 200; i++ {
		out, err := e.s.Update(bg, a.p, tx, rel, cur, row(2, 1000), 100, false, false, RowWait{})
		if err != nil || out.Result != txn.TMOk {
			t.Fatalf("update %d: %+v %v", i, out, err)
		}
		tx.CommandCounterIncrement()
		cur = out.NewTID
	}
	a.commit()
	if cur.Block == 0 {
		t.Fatal("chain never left page 0")
	}
	// walk the chain from the root
	at, steps := tid, 0
	for {
		var next TID
		e.s.FetchAny(a.p, rel, at, func(_ *txn.TupleHeader, c TID, _ []byte) { next = c })
		if next == at {
			break
		}
		at = next
		steps++
	}
	if at != cur || steps != 201 {
		t.Fatalf("chain ends at %v after %d steps, want %v after 201", at, steps, cur)
	}
	b.commit()

	// Delete; a second delete sees TMDeleted... after commit.
	tx = a.begin(txn.ReadCommitted)
	if out, err := e.s.Delete(bg, a.p, tx, rel, cur, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("Delete: %+v %v", out, err)
	}
	a.commit()
	tx = b.begin(txn.ReadCommitted)
	if out, _ := e.s.Delete(bg, b.p, tx, rel, cur, RowWait{}); out.Result != txn.TMDeleted || out.NextTID != cur {
		t.Fatalf("second Delete: %+v", out)
	}
	if got := scanAll(t, b, tx, rel); len(got) != 0 {
		t.Fatalf("rows after delete: %v", got)
	}
	b.commit()
}

func TestAbortedInsertInvisible(t *testing.T) {
	e := newEnv(t, 32)
	e.s.CreateRelation(7)
	a := e.session()
	tx := a.begin(txn.ReadCommitted)
	tid, _ := e.s.Insert(bg, a.p, tx, 7, row(1, 10), 0)
	a.abort()
	tx = a.begin(txn.ReadCommitted)
	if vis, err := e.s.Fetch(a.p, tx, 7, tid, nil); vis || err != nil {
		t.Fatalf("aborted insert: visible=%v err=%v", vis, err)
	}
	a.commit()
	if _, err := e.s.Insert(bg, a.p, tx, 7, make([]byte, MaxTupleData+1), 0); err == nil {
		t.Fatal("oversized row accepted")
	}
}

func TestConcurrentInserters(t *testing.T) {
	e := newEnv(t, 256)
	const rel = RelID(42)
	e.s.CreateRelation(rel)
	r, _ := e.s.relation(rel)
	const workers, per = 8, 600
	var wg sync.WaitGroup
	tids := make([][]TID, workers)
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() { // the FSM never names a page past the end of the file
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := r.fsm.npages.Load()
			st, err := os.Stat(r.path)
			if err != nil {
				t.Error(err)
				return
			}
			if int64(n)*PageSize > st.Size() {
				t.Errorf("fsm covers %d pages, file has %d bytes", n, st.Size())
				return
			}
		}
	}()
	for w := 0; w < workers; w++ {
		se := e.session()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				tx := se.begin(txn.ReadCommitted)
				id := uint64(w*per + i)
				tid, err := e.s.Insert(bg, se.p, tx, rel, row(id, 40+int(id%300)), 90)
				if err != nil {
					t.Error(err)
					return
				}
				tids[w] = append(tids[w], tid)
				se.commit()
			}
		}()
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	seen := map[TID]bool{}
	for _, l := range tids {
		for _, tid := range l {
			if seen[tid] {
				t.Fatalf("TID %v handed out twice", tid)
			}
			seen[tid] = true
		}
	}
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	got := scanAll(t, se, tx, rel)
	se.commit()
	if len(got) != workers*per {
		t.Fatalf("scan found %d rows, want %d", len(got), workers*per)
	}
	n := r.nblocks.Load()
	for b := uint32(0); b < r.fsm.npages.Load(); b++ {
		if r.fsm.get(b) != 0 && b >= n {
			t.Fatalf("fsm names block %d past %d", b, n)
		}
	}
	st := e.s.Stats()
	if st.Extensions == 0 || st.PagesAdded != uint64(n) {
		t.Fatalf("stats %+v, %d pages", st, n)
	}
	t.Logf("pages=%d extensions=%d lock waits=%d", n, st.Extensions, st.ExtensionLockWaits)
}

func TestTinyPoolEviction(t *testing.T) {
	e := newEnv(t, 16)
	const rel = RelID(9)
	e.s.CreateRelation(rel)
	const workers, per = 4, 800
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		se := e.session()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				tx := se.begin(txn.ReadCommitted)
				id := uint64(w*per + i)
				if _, err := e.s.Insert(bg, se.p, tx, rel, row(id, 200), 100); err != nil {
					t.Error(err)
					return
				}
				se.commit()
				if i%50 == 0 {
					tx := se.begin(txn.ReadCommitted)
					n := 0
					e.s.Scan(bg, se.p, tx, rel, func(TID, []byte) error { n++; return nil })
					se.commit()
				}
			}
		}()
	}
	wg.Wait()
	st := e.s.Stats()
	if st.BufferEvictions == 0 || st.BufferWrites == 0 {
		t.Fatalf("no eviction with 16 buffers: %+v", st)
	}
	pages, _ := e.s.RelationPages(rel)
	if pages < 64 {
		t.Fatalf("only %d pages", pages)
	}
	check := func() {
		se := e.session()
		tx := se.begin(txn.ReadCommitted)
		if got := scanAll(t, se, tx, rel); len(got) != workers*per {
			t.Fatalf("found %d rows, want %d", len(got), workers*per)
		}
		se.commit()
	}
	check()
	// Dirty write-back: every page read back from the files matches.
	e.restart()
	check()
}

func TestTruncateDrop(t *testing.T) {
	e := newEnv(t, 32)
	e.s.CreateRelation(3)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	for i := 0; i < 500; i++ {
		e.s.Insert(bg, se.p, tx, 3, row(uint64(i), 100), 0)
	}
	se.commit()
	if err := e.s.TruncateRelation(3); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.RelationPages(3); n != 0 {
		t.Fatalf("%d pages after truncate", n)
	}
	tx = se.begin(txn.ReadCommitted)
	tid, err := e.s.Insert(bg, se.p, tx, 3, row(1, 100), 0)
	if err != nil || tid.Block != 0 {
		t.Fatalf("insert after truncate: %v %v", tid, err)
	}
	se.commit()
	if err := e.s.DropRelation(3); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.RelationPages(3); !errors.Is(err, ErrNoRelation) {
		t.Fatalf("after drop: %v", err)
	}
	e.restart()
	if _, err := e.s.RelationPages(3); !errors.Is(err, ErrNoRelation) {
		t.Fatalf("after drop and restart: %v", err)
	}
}
