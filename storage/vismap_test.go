package storage

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockd/txn"
	"lockd/wal"
)

func TestVisibilityMapBits(t *testing.T) {
	var v visibilityMap
	if v.allVisible(0) || v.clear(5) || v.count(100) != 0 {
		t.Fatal("an empty map has a bit set")
	}
	if v.dirty.Load() {
		t.Fatal("clearing a clear bit marked the map changed")
	}
	blks := []uint32{0, 1, 63, 64, 65, vmChunkPages - 1, vmChunkPages, 3*vmChunkPages + 7}
	for _, b := range blks {
		if !v.set(b) {
			t.Fatalf("set(%d) found the bit set", b)
		}
		if v.set(b) {
			t.Fatalf("set(%d) twice changed it twice", b)
		}
	}
	for _, b := range blks {
		if !v.allVisible(b) {
			t.Fatalf("bit %d not set", b)
		}
	}
	if v.allVisible(2) || v.allVisible(vmChunkPages+1) {
		t.Fatal("a bit never set is set")
	}
	for n, want := range map[uint32]uint32{0: 0, 1: 1, 2: 2, 64: 3, 65: 4, 66: 5, vmChunkPages: 6, vmChunkPages + 1: 7, 4 * vmChunkPages: 8} {
		if got := v.count(n); got != want {
			t.Errorf("count(%d) = %d, want %d", n, got, want)
		}
	}
	if !v.clear(64) || v.clear(64) || v.allVisible(64) || v.count(1<<30) != 7 {
		t.Fatal("clear(64) did not clear exactly one bit once")
	}
	v.dirty.Store(false)
	v.clear(2)
	if v.dirty.Load() {
		t.Fatal("clearing a clear bit marked the map changed")
	}
	v.reset()
	if v.count(1<<30) != 0 || v.allVisible(0) {
		t.Fatal("reset left bits")
	}
}

// vmPages returns the all-visible pages of rel.
func vmPages(e *env, rel RelID) []uint32 {
	n, _ := e.s.RelationPages(rel)
	var out []uint32
	for b := uint32(0); b < n; b++ {
		if e.s.PageAllVisible(rel, b) {
			out = append(out, b)
		}
	}
	return out
}

// TestVacuumSetsAllVisible: VACUUM marks the pages whose tuples are all
// visible to everyone; an insert, update or delete on a page clears its
// bit, a row lock does not; an open snapshot older than a tuple keeps its
// page out; pass 3 marks a page once its dead tuples are gone; the map
// survives a restart and TRUNCATE empties it.
func TestVacuumSetsAllVisible(t *testing.T) {
	e := newEnv(t, 64)
	const rel, idx = RelID(100), RelID(101)
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var tids []TID
	for i := uint64(0); i < 500; i++ {
		tid, err := e.s.Insert(bg, se.p, tx, rel, row(i, 200), 100)
		if err != nil {
			t.Fatal(err)
		}
		e.s.IndexInsert(se.p, idx, key(i), tid)
		tids = append(tids, tid)
	}
	// Uncommitted: VACUUM marks nothing.
	if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	if got := vmPages(e, rel); len(got) != 0 {
		t.Fatalf("pages %v all-visible with their inserter running", got)
	}
	se.commit()
	pages, _ := e.s.RelationPages(rel)
	if pages < 10 {
		t.Fatalf("only %d pages", pages)
	}
	// A horizon that does not pass the inserter: nothing.
	if _, err := e.s.Vacuum(bg, se.p, rel, tx.Xid(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	if got := vmPages(e, rel); len(got) != 0 {
		t.Fatalf("pages %v all-visible to a horizon at their inserter", got)
	}
	vs, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.AllVisiblePages(rel); n != pages || vs.PagesSetAllVisible != pages {
		t.Fatalf("after VACUUM %d of %d pages all-visible (%d set by it)", n, pages, vs.PagesSetAllVisible)
	}

	// A snapshot from before the changes below.
	old := e.session()
	oldTx := old.begin(txn.RepeatableRead)
	oldTx.StatementSnapshot()

	// A row lock keeps the bit; a delete, an update (both pages) and an
	// insert clear theirs.
	tx = se.begin(txn.ReadCommitted)
	if out, err := e.s.LockTuple(bg, se.p, tx, rel, tids[0], txn.LockTupleExclusive, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("lock: %+v %v", out, err)
	}
	if !e.s.PageAllVisible(rel, tids[0].Block) {
		t.Fatal("a row lock cleared the page's bit")
	}
	del := tids[len(tids)/2]
	if out, err := e.s.Delete(bg, se.p, tx, rel, del, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("delete: %+v %v", out, err)
	}
	upd := tids[len(tids)/4]
	big := row(9999, 3000) // does not fit the full page: goes to another
	out, err := e.s.Update(bg, se.p, tx, rel, upd, big, 100, false, false, RowWait{})
	if err != nil || out.Result != txn.TMOk {
		t.Fatalf("update: %+v %v", out, err)
	}
	newTID := out.NewTID
	se.commit()
	want := map[uint32]bool{}
	for b := uint32(0); b < pages; b++ {
		want[b] = true
	}
	delete(want, del.Block)
	delete(want, upd.Block)
	delete(want, newTID.Block)
	for b := uint32(0); b < pages; b++ {
		if e.s.PageAllVisible(rel, b) != want[b] {
			t.Fatalf("page %d all-visible %v, want %v (delete on %d, update %d -> %d)", b, !want[b], want[b], del.Block, upd.Block, newTID.Block)
		}
	}

	// The old snapshot sees the deleted and the updated row: VACUUM keeps
	// their pages out, and the new version's, which it does not see.
	if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []uint32{del.Block, upd.Block, newTID.Block} {
		if e.s.PageAllVisible(rel, b) {
			t.Fatalf("page %d marked all-visible while a snapshot from before its change is open", b)
		}
	}
	old.commit()
	// Now the dead versions go (pass 3 marks their pages).
	vs, err = e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), []RelID{idx})
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != 2 {
		t.Fatalf("VACUUM removed %d tuples, want 2", vs.TuplesRemoved)
	}
	pages, _ = e.s.RelationPages(rel)
	if n, _ := e.s.AllVisiblePages(rel); n != pages {
		t.Fatalf("after the dead tuples went %d of %d pages all-visible: %v", n, pages, vmPages(e, rel))
	}

	// An insert onto an all-visible page clears it.
	tx = se.begin(txn.ReadCommitted)
	tid, err := e.s.Insert(bg, se.p, tx, rel, row(7777, 20), 100)
	if err != nil {
		t.Fatal(err)
	}
	if e.s.PageAllVisible(rel, tid.Block) {
		t.Fatal("insert left its page all-visible")
	}
	se.commit()
	before := vmPages(e, rel)
	e.restart()
	if after := vmPages(e, rel); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("visibility map after restart %v, before %v", after, before)
	}
	if err := e.s.TruncateRelation(rel); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.AllVisiblePages(rel); n != 0 || e.s.PageAllVisible(rel, 0) {
		t.Fatal("TRUNCATE left pages all-visible")
	}
}

// TestInsertLeavesClearBitAlone: an insert on a page whose bit is clear
// writes nothing to the map.
func TestInsertLeavesClearBitAlone(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(100)
	e.s.CreateRelation(rel)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	r, _ := e.s.relation(rel)
	for i := uint64(0); i < 200; i++ {
		if _, err := e.s.Insert(bg, se.p, tx, rel, row(i, 100), 100); err != nil {
			t.Fatal(err)
		}
		if r.vm.dirty.Load() {
			t.Fatal("an insert on a page that is not all-visible changed the map")
		}
	}
	se.commit()
}

// TestAllVisibleMeansVisible: after a random mix of inserts, updates,
// deletes and locks, some committed, some aborted, some in progress, with
// VACUUMs in between, every page the map calls all-visible holds only
// tuples every snapshot sees — a new one, and one taken before the mix.
func TestAllVisibleMeansVisible(t *testing.T) {
	e := newEnv(t, 128)
	const rel = RelID(100)
	e.s.CreateRelation(rel)
	se := e.session()
	other := e.session()
	rng := rand.New(rand.NewPCG(3, 4))
	var live []TID
	otherOpen := false
	for round := range 300 {
		tx := se.begin(txn.ReadCommitted)
		tx.StatementSnapshot()
		for range 1 + rng.IntN(4) {
			switch op := rng.IntN(10); {
			case op < 4 || len(live) == 0:
				tid, err := e.s.Insert(bg, se.p, tx, rel, row(uint64(round), 50+rng.IntN(400)), 100)
				if err != nil {
					t.Fatal(err)
				}
				live = append(live, tid)
			case op < 7:
				i := rng.IntN(len(live))
				out, err := e.s.Update(bg, se.p, tx, rel, live[i], row(uint64(round), 50+rng.IntN(600)), 100, false, false, RowWait{})
				if err != nil {
					t.Fatal(err)
				}
				if out.Result == txn.TMOk {
					live[i] = out.NewTID
				}
			case op < 8:
				i := rng.IntN(len(live))
				if _, err := e.s.LockTuple(bg, se.p, tx, rel, live[i], txn.LockTupleShare, RowWait{}); err != nil {
					t.Fatal(err)
				}
			default:
				i := rng.IntN(len(live))
				if _, err := e.s.Delete(bg, se.p, tx, rel, live[i], RowWait{}); err != nil {
					t.Fatal(err)
				}
				live = append(live[:i], live[i+1:]...)
			}
			tx.CommandCounterIncrement()
		}
		if rng.IntN(5) == 0 {
			se.abort()
		} else {
			se.commit()
		}
		switch {
		case !otherOpen && rng.IntN(20) == 0:
			ot := other.begin(txn.RepeatableRead)
			ot.StatementSnapshot()
			otherOpen = true
		case otherOpen && rng.IntN(10) == 0:
			checkAllVisible(t, e, rel, &other.tx)
			other.commit()
			otherOpen = false
		}
		if rng.IntN(15) == 0 {
			if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), nil); err != nil {
				t.Fatal(err)
			}
			now := e.session()
			checkAllVisible(t, e, rel, now.begin(txn.ReadCommitted))
			now.commit()
		}
	}
	if otherOpen {
		other.commit()
	}
	if _, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), nil); err != nil {
		t.Fatal(err)
	}
	now := e.session()
	checkAllVisible(t, e, rel, now.begin(txn.ReadCommitted))
	now.commit()
	if n, _ := e.s.AllVisiblePages(rel); n == 0 {
		t.Fatal("no page all-visible after the last VACUUM")
	}
}

// checkAllVisible fails if an all-visible page of rel holds a tuple that
// tx's snapshot does not see.
func checkAllVisible(t *testing.T, e *env, rel RelID, tx *txn.Txn) {
	t.Helper()
	tx.StatementSnapshot()
	n, _ := e.s.RelationPages(rel)
	r, _ := e.s.relation(rel)
	b, _ := e.s.backend(nil)
	for blk := uint32(0); blk < n; blk++ {
		if !e.s.PageAllVisible(rel, blk) {
			continue
		}
		id, err := e.s.readBuffer(nil, &b.stats, r, blk)
		if err != nil {
			t.Fatal(err)
		}
		pg := e.s.pool.page(id)
		for off := 1; off <= pg.maxOffset(); off++ {
			tup := pg.tuple(off)
			if tup == nil {
				if _, f, _ := pg.itemID(off); f == lpDead {
					t.Fatalf("all-visible page %d has a dead line pointer %d", blk, off)
				}
				continue
			}
			var h txn.TupleHeader
			readHeader(tup, &h)
			if !tx.Visible(&h) {
				t.Fatalf("all-visible page %d: tuple %d (xmin %d xmax %d flags %#x) invisible to a snapshot", blk, off, h.Xmin, h.Xmax, h.Flags)
			}
		}
		e.s.pool.desc(id).unpin()
	}
}

// checkpoint runs a whole checkpoint as the server's checkpointer does.
func (e *walEnv) checkpoint() {
	e.t.Helper()
	c, ok := e.w.BeginCheckpoint(nil, wal.CkptForce|wal.CkptImmediate)
	if !ok {
		e.t.Fatal("checkpoint skipped")
	}
	if err := e.tm.Checkpoint(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Checkpoint(nil); err != nil {
		e.t.Fatal(err)
	}
	e.w.EndCheckpoint(nil, c, wal.CheckpointInfo{NextXid: uint32(e.tm.NextXid())})
}

// crash stops everything as a crash would, after the log is flushed.
func (e *walEnv) crash() {
	e.w.Flush(nil, e.w.InsertPosition())
	e.w.Abandon()
	e.s.Abandon()
	e.tm.WaitWrites()
}

// vmBits returns the all-visible pages of rel.
func (e *walEnv) vmBits(rel RelID) []uint32 {
	n, _ := e.s.RelationPages(rel)
	var out []uint32
	for b := uint32(0); b < n; b++ {
		if e.s.PageAllVisible(rel, b) {
			out = append(out, b)
		}
	}
	return out
}

// TestVisibilityMapCrash: VACUUM marks every page, a checkpoint saves the
// map; then rows on some pages are updated, deleted and inserted and the
// server crashes: after recovery exactly those pages have lost their bit.
// A second round crashes in the middle of a checkpoint that had saved the
// map already (an image newer than the redo point recovery starts from).
func TestVisibilityMapCrash(t *testing.T) {
	dir := t.TempDir()
	e, _ := newWALEnv(t, dir)
	const rel, idx = RelID(100), RelID(101)
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	p, _ := e.lm.NewProc(7)
	var tx txn.Txn
	e.tm.Begin(&tx, p, txn.ReadCommitted)
	var tids []TID
	for i := uint64(0); i < 1000; i++ {
		tid, err := e.s.Insert(bg, p, &tx, rel, row(i, 200), 100)
		if err != nil {
			t.Fatal(err)
		}
		e.s.IndexInsert(p, idx, key(i), tid)
		tids = append(tids, tid)
	}
	tx.Commit()
	e.lm.ReleaseTransactionLocks(p)
	if _, err := e.s.Vacuum(bg, p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	pages, _ := e.s.RelationPages(rel)
	if n, _ := e.s.AllVisiblePages(rel); n != pages {
		t.Fatalf("%d of %d pages all-visible", n, pages)
	}
	e.checkpoint()

	// Changes on pages 2 (update in place) and 5 (delete), a row lock on
	// page 6 (which leaves its bit), a batch insert on the last page.
	firstOn := func(blk uint32) TID {
		for _, tid := range tids {
			if tid.Block == blk {
				return tid
			}
		}
		t.Fatalf("no row on page %d", blk)
		return TID{}
	}
	e.tm.Begin(&tx, p, txn.ReadCommitted)
	if out, err := e.s.Update(bg, p, &tx, rel, firstOn(2), row(1, 20), 100, false, false, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("update: %+v %v", out, err)
	}
	if out, err := e.s.Delete(bg, p, &tx, rel, firstOn(5), RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("delete: %+v %v", out, err)
	}
	if out, err := e.s.LockTuple(bg, p, &tx, rel, firstOn(6), txn.LockTupleShare, RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("lock: %+v %v", out, err)
	}
	// and COPY's batch lands on the last page, which has room
	batch := [][]byte{row(2000, 20), row(2001, 20), row(2002, 20)}
	batchTIDs := make([]TID, len(batch))
	if err := e.s.MultiInsert(bg, p, &tx, rel, batch, 100, batchTIDs, false); err != nil {
		t.Fatal(err)
	}
	landed := batchTIDs[0].Block
	tx.Commit()
	e.lm.ReleaseTransactionLocks(p)
	want := e.vmBits(rel)
	if landed == 2 || landed == 5 || landed == 6 || len(want) != int(pages)-3 || e.s.PageAllVisible(rel, 2) || e.s.PageAllVisible(rel, 5) ||
		e.s.PageAllVisible(rel, landed) || !e.s.PageAllVisible(rel, 6) {
		t.Fatalf("before the crash all-visible: %v (the batch went to page %d)", want, landed)
	}
	p.Close()
	e.crash()

	e, res := newWALEnv(t, dir)
	if !res.Recovered {
		t.Fatal("no recovery")
	}
	if got := e.vmBits(rel); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after recovery all-visible %v, want %v", got, want)
	}

	// Round two: VACUUM marks pages 2 and 5 again (their dead versions go
	// in pass 3), a checkpoint completes, page 9 changes, and the next
	// checkpoint saves the map (page 9 clear) but crashes before its record.
	p, _ = e.lm.NewProc(8)
	if _, err := e.s.Vacuum(bg, p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.AllVisiblePages(rel); n != pages {
		t.Fatalf("after the second VACUUM %d of %d pages all-visible: %v", n, pages, e.vmBits(rel))
	}
	e.checkpoint()
	e.tm.Begin(&tx, p, txn.ReadCommitted)
	if out, err := e.s.Delete(bg, p, &tx, rel, firstOn(9), RowWait{}); err != nil || out.Result != txn.TMOk {
		t.Fatalf("delete: %+v %v", out, err)
	}
	tx.Commit()
	e.lm.ReleaseTransactionLocks(p)
	if _, ok := e.w.BeginCheckpoint(nil, wal.CkptForce|wal.CkptImmediate); !ok {
		t.Fatal("checkpoint skipped")
	}
	if err := e.s.SaveMaps(nil); err != nil {
		t.Fatal(err)
	}
	want = e.vmBits(rel)
	p.Close()
	e.crash()
	e, _ = newWALEnv(t, dir)
	if got := e.vmBits(rel); fmt.Sprint(got) != fmt.Sprint(want) || e.s.PageAllVisible(rel, 9) {
		t.Fatalf("after the second recovery all-visible %v, want %v", got, want)
	}
	e.crash()
}

// TestAsyncCommitNotAllVisible: rows whose asynchronous commit record is
// not yet flushed are not all-visible (their commit hint waits for the
// flush), so a crash that loses the commit cannot leave a bit set over
// rows that are then aborted.
func TestAsyncCommitNotAllVisible(t *testing.T) {
	dir := t.TempDir()
	e, _ := newWALEnv(t, dir)
	const rel = RelID(100)
	e.s.CreateRelation(rel)
	p, _ := e.lm.NewProc(7)
	defer p.Close()
	var tx txn.Txn
	e.tm.Begin(&tx, p, txn.ReadCommitted)
	tx.SetCommitOptions(txn.CommitOptions{Sync: txn.SyncCommitOff})
	for i := uint64(0); i < 100; i++ {
		if _, err := e.s.Insert(bg, p, &tx, rel, row(i, 200), 100); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	e.lm.ReleaseTransactionLocks(p)
	if _, err := e.s.Vacuum(bg, p, rel, e.tm.OldestXmin(), nil); err != nil {
		t.Fatal(err)
	}
	if got := e.vmBits(rel); len(got) != 0 {
		t.Fatalf("pages %v all-visible before their commit record was flushed", got)
	}
	e.w.Flush(nil, e.w.InsertPosition())
	if _, err := e.s.Vacuum(bg, p, rel, e.tm.OldestXmin(), nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.RelationPages(rel); len(e.vmBits(rel)) != int(n) {
		t.Fatalf("after the flush %v of %d pages all-visible", e.vmBits(rel), n)
	}
	e.crash()
}

// TestIndexOnlyConcurrent: readers that answer from index entries on
// all-visible pages (fetching the heap tuple only elsewhere, as an
// index-only scan does, with no page lock for the map) count exactly the
// rows a sequential scan with the same snapshot counts, while writers
// insert, update and delete (some aborting) and VACUUM marks pages.
func TestIndexOnlyConcurrent(t *testing.T) {
	e := newEnv(t, 256)
	const rel, idx = RelID(100), RelID(101)
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	const writers, readers = 3, 2
	deadline := time.Now().Add(2 * time.Second)
	if testing.Short() {
		deadline = time.Now().Add(300 * time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers+1)
	for w := range writers {
		se := e.session()
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var mine []TID
			for id := uint64(w) << 32; time.Now().Before(deadline); id++ {
				tx := se.begin(txn.ReadCommitted)
				tx.StatementSnapshot()
				tid, err := e.s.Insert(bg, se.p, tx, rel, row(id, 40+rng.IntN(200)), 100)
				if err == nil {
					err = e.s.IndexInsert(se.p, idx, key(id), tid)
				}
				if err != nil {
					errs <- err
					return
				}
				if len(mine) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(mine))
					if rng.IntN(2) == 0 {
						_, err = e.s.Delete(bg, se.p, tx, rel, mine[i], RowWait{})
					} else {
						var out UpdateOutcome
						out, err = e.s.Update(bg, se.p, tx, rel, mine[i], row(id, 40+rng.IntN(400)), 100, false, false, RowWait{})
						if err == nil && out.Result == txn.TMOk {
							err = e.s.IndexInsert(se.p, idx, key(id), out.NewTID)
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
				if rng.IntN(5) == 0 {
					se.abort()
					continue
				}
				se.commit()
				// what this writer may touch next: its live rows, as a
				// fresh scan of its own keys would find them
				mine = mine[:0]
				tx = se.begin(txn.ReadCommitted)
				tx.StatementSnapshot()
				e.s.Scan(bg, se.p, tx, rel, func(tid TID, data []byte) error {
					if rowID(data)>>32 == uint64(w) {
						mine = append(mine, tid)
					}
					return nil
				})
				se.commit()
			}
		})
	}
	vse := e.session()
	wg.Go(func() {
		for time.Now().Before(deadline) {
			if _, err := e.s.Vacuum(bg, vse.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
				errs <- err
				return
			}
		}
	})
	var checks, fromIndex atomic.Int64
	// check counts the rows as an index-only scan does and as a
	// sequential scan does, with one snapshot.
	check := func(se *session) error {
		tx := se.begin(txn.RepeatableRead)
		defer se.commit()
		tx.StatementSnapshot()
		n, alone := 0, 0
		sc := e.s.IndexScan(idx, nil, nil, true, true, false).WithVisibility(rel)
		for {
			batch, err := sc.Next(se.p, 64)
			if err != nil {
				return err
			}
			if len(batch) == 0 {
				break
			}
			for _, ent := range batch {
				if ent.AllVisible {
					n++
					alone++
					continue
				}
				ok, err := e.s.Fetch(se.p, tx, rel, ent.TID, nil)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
		}
		seq := 0
		e.s.Scan(bg, se.p, tx, rel, func(TID, []byte) error { seq++; return nil })
		if n != seq {
			return fmt.Errorf("an index-only count found %d rows (%d from the index alone), a sequential scan %d", n, alone, seq)
		}
		checks.Add(1)
		fromIndex.Add(int64(alone))
		return nil
	}
	for range readers {
		se := e.session()
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := check(se); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Quiet now: VACUUM marks pages, and most rows come from the index.
	if _, err := e.s.Vacuum(bg, vse.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
		t.Fatal(err)
	}
	before := fromIndex.Load()
	if err := check(e.session()); err != nil {
		t.Fatal(err)
	}
	if fromIndex.Load() == before {
		t.Fatal("after a quiet VACUUM no row came from the index alone")
	}
	t.Logf("%d checks, %d rows answered from the index alone", checks.Load(), fromIndex.Load())
}
