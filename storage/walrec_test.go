package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"lockd/locks"
	"lockd/txn"
	"lockd/wal"
)

// walEnv is a store and transaction manager over a write-ahead log, as
// the server wires them.
type walEnv struct {
	t   *testing.T
	dir string
	lm  *locks.Manager
	w   *wal.WAL
	tm  *txn.Manager
	s   *Store
}

func newWALEnv(t *testing.T, dir string) (*walEnv, wal.RecoveryResult) {
	t.Helper()
	e := &walEnv{t: t, dir: dir}
	var err error
	if e.lm, err = locks.NewManager(locks.Config{MaxConnections: 20}); err != nil {
		t.Fatal(err)
	}
	if e.w, err = wal.Open(wal.Config{DataDir: dir, SegmentSize: 1 << 20, Buffers: 64, MaxProcs: 64,
		Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	e.w.SetFsync(false)
	if e.tm, err = txn.Open(txn.Config{Locks: e.lm, DataDir: dir, WAL: e.w, MaxProcs: 64}); err != nil {
		t.Fatal(err)
	}
	if e.s, err = Open(Config{DataDir: dir, SharedBuffers: 256, Locks: e.lm, Txns: e.tm, WAL: e.w, DatabaseOID: 5}); err != nil {
		t.Fatal(err)
	}
	var redo [256]wal.RedoFunc
	for _, r := range []wal.RmgrID{wal.RmgrHeap, wal.RmgrHeap2, wal.RmgrBtree, wal.RmgrStorage, wal.RmgrXLOG} {
		redo[r] = e.s.Redo
	}
	redo[wal.RmgrXact] = func(r *wal.Record) error {
		x, err := txn.DecodeXactRecord(r)
		if err == nil {
			e.tm.RedoXact(x)
		}
		return err
	}
	redo[wal.RmgrMultiXact] = e.tm.RedoMultiXact
	res, err := e.w.StartupXLOG(redo)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.tm.EndRecovery(e.tm.NextXid()); err != nil {
		t.Fatal(err)
	}
	return e, res
}

// maskedPages returns every page of rel with the tuples' hint bits and
// pd_prune_xid cleared — what a visibility check or a prune attempt sets
// without logging — and the
// unused space between pd_lower and pd_upper and after each tuple up to
// its alignment zeroed (after compaction it holds old bytes, which an
// image leaves out), as PostgreSQL's wal_consistency_checking masks them.
func (e *walEnv) maskedPages(rel RelID) [][]byte {
	e.t.Helper()
	r, err := e.s.relation(rel)
	if err != nil {
		e.t.Fatal(err)
	}
	var out [][]byte
	b, _ := e.s.backend(nil)
	for blk := uint32(0); blk < r.nblocks.Load(); blk++ {
		id, err := e.s.readBuffer(nil, &b.stats, r, blk)
		if err != nil {
			e.t.Fatal(err)
		}
		d := e.s.pool.desc(id)
		d.content.Acquire(nil, locks.LWShared)
		pg := page(append([]byte(nil), e.s.pool.page(id)...))
		d.content.Release(nil)
		d.unpin()
		if !pg.isNew() && pg.lower() < pg.upper() {
			clear(pg[pg.lower():pg.upper()])
		}
		if !pg.isNew() {
			pg.put32(pdPruneXid, 0) // a hint, as PostgreSQL's masking treats it
			pg.put16(pdFlags, pg.u16(pdFlags)&^pdPageFull)
		}
		for off := 1; off <= pg.maxOffset(); off++ {
			if o, f, l := pg.itemID(off); f == lpNormal {
				// the alignment padding after a tuple keeps whatever the
				// page held there before (old bytes after compaction)
				clear(pg[o+l : o+maxAligned(l)])
			}
			if t := pg.tuple(off); t != nil {
				f := binary.NativeEndian.Uint32(t[thFlags:])
				f &^= uint32(txn.XminCommitted | txn.XminInvalid | txn.XmaxCommitted | txn.XmaxInvalid)
				binary.NativeEndian.PutUint32(t[thFlags:], f)
			}
		}
		out = append(out, pg)
	}
	return out
}

// TestRedoRebuildsPages: a random mix of inserts (alone and in COPY's
// batches), updates (same page and
// other page), deletes, row locks, speculative insertions confirmed and
// killed, and VACUUM, then a crash with no data page written: replay must
// rebuild every page byte for byte (hint bits aside), every index entry
// and the visibility map.
func TestRedoRebuildsPages(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { redoRebuildsPages(t, seed) })
	}
}

func redoRebuildsPages(t *testing.T, seed uint64) {
	dir := t.TempDir()
	e, _ := newWALEnv(t, dir)
	const rel, idx = RelID(100), RelID(101)
	if err := e.s.CreateRelation(rel); err != nil {
		t.Fatal(err)
	}
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	p, _ := e.lm.NewProc(7)
	rng := rand.New(rand.NewPCG(11, seed))
	var live []TID
	var tx txn.Txn
	for round := range 400 {
		e.tm.Begin(&tx, p, txn.ReadCommitted)
		tx.StatementSnapshot()
		for range 1 + rng.IntN(5) {
			switch op := rng.IntN(11); {
			case op == 10: // COPY's batch: a page at a time
				batch := make([][]byte, 1+rng.IntN(150))
				for i := range batch {
					batch[i] = row(uint64(round), 20+rng.IntN(200))
				}
				tids := make([]TID, len(batch))
				if err := e.s.MultiInsert(bg, p, &tx, rel, batch, 90, tids, false); err != nil {
					t.Fatal(err)
				}
				for _, tid := range tids {
					live = append(live, tid)
					if err := e.s.IndexInsert(p, idx, key(uint64(round)), tid); err != nil {
						t.Fatal(err)
					}
				}
			case op < 4 || len(live) == 0:
				size := 20 + rng.IntN(300)
				if rng.IntN(20) == 0 {
					size = 3000 + rng.IntN(4000)
				}
				var tid TID
				var err error
				if rng.IntN(8) == 0 {
					tid, err = e.s.InsertSpeculative(bg, p, &tx, rel, row(uint64(round), size), 90, uint32(round))
					if err == nil {
						if rng.IntN(2) == 0 {
							err = e.s.FinishSpeculative(p, rel, tid)
						} else {
							err = e.s.AbortSpeculative(p, &tx, rel, tid)
						}
					}
				} else {
					tid, err = e.s.Insert(bg, p, &tx, rel, row(uint64(round), size), 90)
				}
				if err != nil {
					t.Fatal(err)
				}
				live = append(live, tid)
				if err := e.s.IndexInsert(p, idx, key(uint64(round)), tid); err != nil {
					t.Fatal(err)
				}
			case op < 7:
				i := rng.IntN(len(live))
				out, err := e.s.Update(bg, p, &tx, rel, live[i], row(uint64(round), 20+rng.IntN(500)), 100, rng.IntN(2) == 0, rng.IntN(2) == 0, RowWait{})
				if err != nil {
					t.Fatal(err)
				}
				if out.Result == txn.TMOk {
					live[i] = out.NewTID
					e.s.IndexInsert(p, idx, key(uint64(round)), out.NewTID)
				}
			case op < 8:
				i := rng.IntN(len(live))
				if _, err := e.s.LockTuple(bg, p, &tx, rel, live[i], txn.LockTupleShare, RowWait{}); err != nil {
					t.Fatal(err)
				}
			default:
				i := rng.IntN(len(live))
				if _, err := e.s.Delete(bg, p, &tx, rel, live[i], RowWait{}); err != nil {
					t.Fatal(err)
				}
				live = append(live[:i], live[i+1:]...)
			}
			tx.CommandCounterIncrement()
		}
		if rng.IntN(6) == 0 {
			tx.Abort()
		} else {
			tx.Commit()
		}
		e.lm.ReleaseTransactionLocks(p)
		if round%100 == 70 { // the last rounds leave some pages not all-visible
			if _, err := e.s.Vacuum(bg, p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.w.Flush(nil, e.w.InsertPosition())
	want := e.maskedPages(rel)
	wantEntries, _ := e.s.IndexEntries(idx)
	wantVM := e.vmBits(rel)
	p.Close()
	// The crash: nothing more is written (no data page reached its file).
	e.w.Abandon()
	e.s.Abandon()
	e.tm.WaitWrites()

	e2, res := newWALEnv(t, dir)
	if !res.Recovered || res.Records == 0 {
		t.Fatalf("no recovery: %+v", res)
	}
	got := e2.maskedPages(rel)
	if len(got) != len(want) {
		t.Fatalf("replay made %d pages, the run %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i][8:], want[i][8:]) { // pd_lsn aside: checked below
			w, g := page(want[i]), page(got[i])
			t.Fatalf("page %d differs after replay (run: %d line pointers, lower %d upper %d, lsn %s; replay: %d, %d, %d, %s):\n%s",
				i, w.maxOffset(), w.lower(), w.upper(), wal.PageLSN(w), g.maxOffset(), g.lower(), g.upper(), wal.PageLSN(g), pageDiff(want[i], got[i]))
		}
		if wal.PageLSN(got[i]) != wal.PageLSN(want[i]) {
			t.Fatalf("page %d: LSN %s after replay, %s in the run", i, wal.PageLSN(got[i]), wal.PageLSN(want[i]))
		}
	}
	if n, _ := e2.s.IndexEntries(idx); n != wantEntries {
		t.Fatalf("index has %d entries after replay, %d in the run", n, wantEntries)
	}
	if got := e2.vmBits(rel); fmt.Sprint(got) != fmt.Sprint(wantVM) {
		t.Fatalf("all-visible pages after replay %v, in the run %v", got, wantVM)
	}
	t.Logf("%d pages (%d all-visible) and %d index entries rebuilt from %d records", len(want), len(wantVM), wantEntries, res.Records)
	e2.w.Abandon()
	e2.s.Abandon()
	e2.tm.WaitWrites()
}

func pageDiff(a, b []byte) string {
	var out bytes.Buffer
	for i := 0; i < len(a) && out.Len() < 2000; i += 16 {
		if !bytes.Equal(a[i:i+16], b[i:i+16]) {
			fmt.Fprintf(&out, "%04x run % x\n     replay % x\n", i, a[i:i+16], b[i:i+16])
		}
	}
	return out.String()
}
