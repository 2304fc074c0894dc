package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/txn"
	"lockd/vfs"
)

// extModes are the extension policies the tests run under.
var extModes = []struct {
	name                   string
	mode                   ExtensionMode
	blocks, maxBlocks, thr int
}{
	{"single", ExtendSingle, 20, 512, 8},
	{"fixed", ExtendFixed, 20, 512, 8},  // 20 pages > threshold: fallocate
	{"fixed4", ExtendFixed, 4, 512, 8},  // pwrite of zeroes
	{"group", ExtendGroup, 20, 512, 8},  // PostgreSQL 9.6 defaults
	{"group-cap", ExtendGroup, 3, 5, 0}, // always fallocate, cap reached
}

// extRowSize makes 7 rows per page (1000 + 28 header, aligned, + 4).
const (
	extRowSize     = 1000
	extRowsPerPage = 7
)

// fsmWithinFile checks that the free space map covers no page beyond the
// file and names (category > 0) no page beyond the relation's size.
func fsmWithinFile(r *relation) error {
	npages := r.fsm.npages.Load()
	var last uint32
	found := false
	for blk := uint32(0); blk < npages; blk++ {
		if r.fsm.get(blk) > 0 {
			last, found = blk, true
		}
	}
	// nblocks and the file only grow in these tests, so reading them after
	// the map makes the check race-free.
	if nb := r.nblocks.Load(); found && last >= nb {
		return fmt.Errorf("FSM names block %d, relation has %d pages", last, nb)
	}
	fi, err := os.Stat(r.path)
	if err != nil {
		return err
	}
	if int64(npages)*PageSize > fi.Size() {
		return fmt.Errorf("FSM covers %d pages, file has %d bytes", npages, fi.Size())
	}
	return nil
}

// concurrentFill inserts workers × perWorker rows (ids from base) into
// rel from as many sessions at once, checking fsmWithinFile meanwhile, and
// returns the TIDs by row id. during, if set, runs in its own goroutine
// until the inserters are done.
func concurrentFill(t *testing.T, e *env, rel RelID, base uint64, workers, perWorker int, during func(stop <-chan struct{})) map[uint64]TID {
	t.Helper()
	r, err := e.s.relation(rel)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var bg2 sync.WaitGroup
	bg2.Add(1)
	go func() {
		defer bg2.Done()
		for {
			if err := fsmWithinFile(r); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	if during != nil {
		bg2.Add(1)
		go func() { defer bg2.Done(); during(stop) }()
	}
	tids := make([][]TID, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		se := e.session()
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx := se.begin(txn.ReadCommitted)
			for i := 0; i < perWorker; i++ {
				id := base + uint64(w*perWorker+i)
				tid, err := e.s.Insert(bg, se.p, tx, rel, row(id, extRowSize), 100)
				if err != nil {
					t.Error(err)
					break
				}
				tids[w] = append(tids[w], tid)
			}
			se.commit()
		}()
	}
	wg.Wait()
	close(stop)
	bg2.Wait()
	out := make(map[uint64]TID, workers*perWorker)
	seen := make(map[TID]uint64, workers*perWorker)
	for w := range tids {
		for i, tid := range tids[w] {
			id := base + uint64(w*perWorker+i)
			if other, dup := seen[tid]; dup {
				t.Fatalf("rows %d and %d both got TID %v", other, id, tid)
			}
			seen[tid] = id
			out[id] = tid
		}
	}
	if err := fsmWithinFile(r); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRows scans rel and checks that it holds exactly the rows in want,
// intact, at their TIDs.
func checkRows(t *testing.T, e *env, rel RelID, want map[uint64]TID) {
	t.Helper()
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	got := make(map[uint64]TID, len(want))
	err := e.s.Scan(bg, se.p, tx, rel, func(tid TID, data []byte) error {
		if err := checkRow(data); err != nil {
			return err
		}
		id := rowID(data)
		if _, dup := got[id]; dup {
			return fmt.Errorf("row %d seen twice", id)
		}
		got[id] = tid
		return nil
	})
	se.commit()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("scan found %d rows, want %d", len(got), len(want))
	}
	for id, tid := range want {
		if got[id] != tid {
			t.Fatalf("row %d at %v, inserted at %v", id, got[id], tid)
		}
	}
}

func relExt(t *testing.T, s *Store, rel RelID) RelExtensionStats {
	t.Helper()
	for _, rs := range s.ExtensionStats() {
		if rs.Rel == rel {
			return rs
		}
	}
	t.Fatalf("no extension stats for %d", rel)
	return RelExtensionStats{}
}

// checkExtensionStats checks the counters after inserts rows into the
// only relation rel of a fresh store, with no VACUUM.
func checkExtensionStats(t *testing.T, e *env, rel RelID, inserts int) Stats {
	t.Helper()
	st := e.s.Stats()
	rs := relExt(t, e.s, rel)
	nb, _ := e.s.RelationPages(rel)
	if st.PagesAdded != uint64(nb) || rs.PagesAdded != uint64(nb) || rs.Extensions != st.Extensions {
		t.Errorf("pages %d, stats %+v, relation %+v", nb, st, rs)
	}
	if rs.Waits != st.ExtensionLockWaits || rs.WaitTime != st.ExtensionLockWaitTime {
		t.Errorf("waits: store %d/%v, relation %d/%v", st.ExtensionLockWaits, st.ExtensionLockWaitTime, rs.Waits, rs.WaitTime)
	}
	if st.ExtensionLockWaits > 0 && st.ExtensionLockWaitTime <= 0 {
		t.Errorf("%d waits took no time", st.ExtensionLockWaits)
	}
	var sum uint64
	for _, c := range st.ExtensionSizes {
		sum += c
	}
	if sum != st.Extensions {
		t.Errorf("size histogram %v sums to %d, %d extensions", st.ExtensionSizes, sum, st.Extensions)
	}
	if got := st.TargetBlockHits + st.FSMHits + st.FSMMisses; got != uint64(inserts) {
		t.Errorf("placements %d+%d+%d, want %d", st.TargetBlockHits, st.FSMHits, st.FSMMisses, inserts)
	}
	// Without VACUUM nobody can fill a new page before its extender locks
	// it, so every extension serves exactly one placement.
	if st.FSMMisses != st.Extensions {
		t.Errorf("FSM misses %d, extensions %d", st.FSMMisses, st.Extensions)
	}
	if st.ExtensionWaitFSMHits > st.ExtensionLockWaits {
		t.Errorf("wait FSM hits %d > waits %d", st.ExtensionWaitFSMHits, st.ExtensionLockWaits)
	}
	return st
}

func TestExtensionModesConcurrent(t *testing.T) {
	const workers, perWorker = 8, 120
	for _, m := range extModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, 64) // small pool: new pages get evicted and re-read
			e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
			const rel = RelID(40)
			e.s.CreateRelation(rel)
			want := concurrentFill(t, e, rel, 0, workers, perWorker, nil)
			checkRows(t, e, rel, want)
			st := checkExtensionStats(t, e, rel, workers*perWorker)
			nb, _ := e.s.RelationPages(rel)
			need := uint64((workers*perWorker + extRowsPerPage - 1) / extRowsPerPage)
			var slack uint64
			switch m.mode {
			case ExtendSingle:
				if st.ExtensionSizes[0] != st.Extensions || st.ExtensionWaitFSMHits != 0 {
					t.Errorf("single: %+v", st)
				}
				// Every page but the workers' current targets is full.
				slack = workers
			case ExtendFixed:
				if st.PagesAdded != st.Extensions*uint64(m.blocks) ||
					st.ExtensionSizes[extensionSizeBucket(uint32(m.blocks))] != st.Extensions {
					t.Errorf("fixed: %+v", st)
				}
				slack = uint64(workers * (1 + m.blocks))
			case ExtendGroup:
				// Only an extension after a wait that found no room adds
				// more than one page, at most 1 + maxBlocks.
				big := st.Extensions - st.ExtensionSizes[0]
				if big > st.ExtensionLockWaits-st.ExtensionWaitFSMHits {
					t.Errorf("group: %d multi-page extensions, %d waits, %d wait FSM hits",
						big, st.ExtensionLockWaits, st.ExtensionWaitFSMHits)
				}
				if st.PagesAdded > st.ExtensionSizes[0]+big*uint64(1+m.maxBlocks) {
					t.Errorf("group: extensions larger than 1+%d: %+v", m.maxBlocks, st)
				}
				slack = uint64(workers * (1 + min(m.maxBlocks, m.blocks*workers)))
			}
			if uint64(nb) < need || uint64(nb) > need+slack {
				t.Errorf("%d pages for %d rows (need %d, slack %d)", nb, workers*perWorker, need, slack)
			}
			t.Logf("%s: %d pages, %d extensions (sizes %v), %d waits (%v), %d wait FSM hits, placements target %d fsm %d extend %d",
				m.name, nb, st.Extensions, st.ExtensionSizes, st.ExtensionLockWaits, st.ExtensionLockWaitTime,
				st.ExtensionWaitFSMHits, st.TargetBlockHits, st.FSMHits, st.FSMMisses)
		})
	}
}

// TestExtensionGroupWaiters makes the extension lock contended on purpose:
// K inserters queue behind a holder, then the holder lets go.
func TestExtensionGroupWaiters(t *testing.T) {
	const k = 4
	for _, m := range extModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, 256)
			e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
			const rel = RelID(41)
			e.s.CreateRelation(rel)
			holder := e.session()
			tag := locks.ExtendTag(5, uint32(rel))
			if err := e.lm.Lock(bg, holder.p, tag, locks.ExclusiveLock, locks.LockOptions{}); err != nil {
				t.Fatal(err)
			}
			want := make(map[uint64]TID)
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := uint64(0); i < k; i++ {
				se := e.session()
				wg.Add(1)
				go func() {
					defer wg.Done()
					tx := se.begin(txn.ReadCommitted)
					tid, err := e.s.Insert(bg, se.p, tx, rel, row(i, extRowSize), 100)
					if err != nil {
						t.Error(err)
					}
					se.commit()
					mu.Lock()
					want[i] = tid
					mu.Unlock()
				}()
			}
			deadline := time.Now().Add(10 * time.Second)
			for e.lm.WaiterCount(tag) != k+1 {
				if time.Now().After(deadline) {
					t.Fatalf("waiters: %d", e.lm.WaiterCount(tag))
				}
				time.Sleep(100 * time.Microsecond)
			}
			e.lm.Unlock(holder.p, tag, locks.ExclusiveLock, false)
			wg.Wait()
			checkRows(t, e, rel, want)
			st := checkExtensionStats(t, e, rel, k)
			nb, _ := e.s.RelationPages(rel)
			if st.ExtensionLockWaits != k {
				t.Errorf("%d waits, want %d", st.ExtensionLockWaits, k)
			}
			var wantPages, wantExt uint64
			switch m.mode {
			case ExtendSingle:
				wantPages, wantExt = k, k // each waiter extends by one
			case ExtendFixed:
				wantPages, wantExt = uint64(m.blocks), 1
				if m.blocks-1 < k-1 {
					t.Fatal("test needs blocks ≥ k")
				}
			case ExtendGroup:
				// The first one granted counts itself and k-1 waiters.
				wantPages, wantExt = uint64(1+min(m.maxBlocks, m.blocks*k)), 1
			}
			if uint64(nb) != wantPages || st.Extensions != wantExt || st.ExtensionWaitFSMHits != k-wantExt {
				t.Errorf("%d pages, %d extensions, %d wait FSM hits; want %d, %d, %d",
					nb, st.Extensions, st.ExtensionWaitFSMHits, wantPages, wantExt, k-wantExt)
			}
			if e.lm.WaiterCount(tag) != 0 {
				t.Errorf("extension lock still requested")
			}
		})
	}
}

// TestExtensionRestart: rows, sizes and the free space of extra pages
// survive a restart, with and without the saved free space map.
func TestExtensionRestart(t *testing.T) {
	for _, m := range extModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, 64)
			e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
			const rel = RelID(42)
			e.s.CreateRelation(rel)
			want := concurrentFill(t, e, rel, 0, 4, 50, nil)
			nb, _ := e.s.RelationPages(rel)
			used := make(map[uint32]bool)
			for _, tid := range want {
				used[tid.Block] = true
			}
			var empty []uint32 // pages extended but never used
			for blk := uint32(0); blk < nb; blk++ {
				if !used[blk] {
					empty = append(empty, blk)
				}
			}
			var r *relation
			for round := 0; round < 2; round++ {
				if round == 1 {
					// Lose the saved map: it is rebuilt from the pages,
					// where the unused ones are still all zero.
					e.s.Close(nil)
					os.Remove(e.s.fsmPath(rel))
					e.s = nil
					e.open()
				} else {
					e.restart()
				}
				e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
				if nb2, _ := e.s.RelationPages(rel); nb2 != nb {
					t.Fatalf("round %d: %d pages, had %d", round, nb2, nb)
				}
				checkRows(t, e, rel, want)
				r, _ = e.s.relation(rel)
				for _, blk := range empty {
					if c := r.fsm.get(blk); c != emptyPageCat {
						t.Fatalf("round %d: empty page %d has FSM category %d", round, blk, c)
					}
				}
				if err := fsmWithinFile(r); err != nil {
					t.Fatal(err)
				}
			}
			// The empty pages take new rows without extending.
			se := e.session()
			tx := se.begin(txn.ReadCommitted)
			for i := 0; i < len(empty)*extRowsPerPage; i++ {
				id := uint64(1000 + i)
				tid, err := e.s.Insert(bg, se.p, tx, rel, row(id, extRowSize), 100)
				if err != nil {
					t.Fatal(err)
				}
				want[id] = tid
			}
			se.commit()
			if nb2, _ := e.s.RelationPages(rel); nb2 != nb {
				t.Fatalf("grew from %d to %d pages with %d empty pages to fill", nb, nb2, len(empty))
			}
			e.restart()
			checkRows(t, e, rel, want)
			t.Logf("%s: %d pages, %d left empty by extension", m.name, nb, len(empty))
		})
	}
}

// TestExtensionPolicySwitch changes the policy in a loop while inserters
// run (as SIGHUP hooks do).
func TestExtensionPolicySwitch(t *testing.T) {
	e := newEnv(t, 64)
	const rel = RelID(43)
	e.s.CreateRelation(rel)
	var switches atomic.Int64
	want := concurrentFill(t, e, rel, 0, 8, 120, func(stop <-chan struct{}) {
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			m := extModes[rng.IntN(len(extModes))]
			e.s.SetExtensionPolicy(m.mode, 1+rng.IntN(30), 1+rng.IntN(100), rng.IntN(20))
			switches.Add(1)
			select {
			case <-stop:
				return
			default:
				time.Sleep(50 * time.Microsecond)
			}
		}
	})
	checkRows(t, e, rel, want)
	checkExtensionStats(t, e, rel, len(want))
	if switches.Load() < 2 {
		t.Fatalf("only %d switches", switches.Load())
	}
	e.restart()
	checkRows(t, e, rel, want)
}

func TestExtensionPolicySetting(t *testing.T) {
	e := newEnv(t, 16)
	if m, b, mx, thr := e.s.ExtensionPolicy(); m != ExtendGroup || b != 20 || mx != 512 || thr != 8 {
		t.Fatalf("defaults: %v %d %d %d", m, b, mx, thr)
	}
	e.s.SetExtensionPolicy(ExtensionMode(99), 0, -3, -1)
	if m, b, mx, thr := e.s.ExtensionPolicy(); m != ExtendGroup || b != 1 || mx != 1 || thr != 0 {
		t.Fatalf("clamped: %v %d %d %d", m, b, mx, thr)
	}
	for _, s := range []string{"single", "fixed", "group"} {
		m, ok := ParseExtensionMode(s)
		if !ok || m.String() != s {
			t.Errorf("%q: %v %v", s, m, ok)
		}
	}
	if _, ok := ParseExtensionMode("bulk"); ok {
		t.Error("bulk accepted")
	}
	for n, want := range map[uint32]int{1: 0, 2: 1, 3: 2, 8: 3, 9: 4, 21: 5, 81: 7, 512: 9, 513: 10, 100000: 10} {
		if got := extensionSizeBucket(n); got != want {
			t.Errorf("bucket(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestExtensionFallocateFallback: a filesystem without fallocate gets
// zeroes written instead; other fallocate errors fail the insert.
func TestExtensionFallocateFallback(t *testing.T) {
	old := fallocateFile
	t.Cleanup(func() { fallocateFile = old })
	var calls atomic.Int64
	fallocateFile = func(vfs.File, int64, int64) error { calls.Add(1); return syscall.EOPNOTSUPP }

	e := newEnv(t, 64)
	e.s.SetExtensionPolicy(ExtendFixed, 16, 512, 8)
	const rel = RelID(44)
	e.s.CreateRelation(rel)
	want := concurrentFill(t, e, rel, 0, 2, 100, nil)
	if calls.Load() != 1 || !e.s.noFallocate.Load() {
		t.Fatalf("fallocate called %d times, disabled %v", calls.Load(), e.s.noFallocate.Load())
	}
	nb, _ := e.s.RelationPages(rel)
	r, _ := e.s.relation(rel)
	if fi, err := os.Stat(r.path); err != nil || fi.Size() != int64(nb)*PageSize {
		t.Fatalf("file %v %v, %d pages", fi.Size(), err, nb)
	}
	e.restart()
	checkRows(t, e, rel, want)

	// A real error (disk full, I/O) reaches the inserter; nothing moves.
	fallocateFile = func(vfs.File, int64, int64) error { return syscall.ENOSPC }
	e.s.SetExtensionPolicy(ExtendFixed, 16, 512, 8)
	const rel2 = RelID(45)
	e.s.CreateRelation(rel2)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var pe *pgerr.Error
	if _, err := e.s.Insert(bg, se.p, tx, rel2, row(1, 100), 100); !errors.As(err, &pe) || pe.Code != pgerr.DiskFull ||
		pe.Message != `could not extend file "base/45": No space left on device` {
		t.Fatalf("insert: %v", err)
	}
	se.abort()
	if nb, _ := e.s.RelationPages(rel2); nb != 0 {
		t.Fatalf("%d pages after a failed extension", nb)
	}
}

// TestExtensionVacuumRefill: concurrent fill, DELETE + VACUUM, concurrent
// refill of as many rows — the table must not grow, whatever the policy
// (the extra pages of the first fill are reused, not added again).
func TestExtensionVacuumRefill(t *testing.T) {
	const workers, perWorker = 6, 80
	for _, m := range extModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, 64)
			e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
			const rel = RelID(46)
			e.s.CreateRelation(rel)
			first := concurrentFill(t, e, rel, 0, workers, perWorker, nil)
			nb, _ := e.s.RelationPages(rel)
			se := e.session()
			tx := se.begin(txn.ReadCommitted)
			for _, tid := range first {
				if out, err := e.s.Delete(bg, se.p, tx, rel, tid, RowWait{}); err != nil || out.Result != txn.TMOk {
					t.Fatalf("delete %v: %+v %v", tid, out, err)
				}
			}
			se.commit()
			vs, err := e.s.Vacuum(bg, se.p, rel, e.tm.OldestXmin(), nil)
			if err != nil || vs.TuplesRemoved != uint64(len(first)) {
				t.Fatalf("vacuum: %+v %v", vs, err)
			}
			before := e.s.Stats()
			second := concurrentFill(t, e, rel, 10000, workers, perWorker, nil)
			if nb2, _ := e.s.RelationPages(rel); nb2 != nb {
				t.Fatalf("grew from %d to %d pages after DELETE+VACUUM+refill", nb, nb2)
			}
			if st := e.s.Stats(); st.FSMMisses != before.FSMMisses || st.Extensions != before.Extensions {
				t.Fatalf("refill extended: %+v", st)
			}
			checkRows(t, e, rel, second)
		})
	}
}
