package locks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// shadow records which backend holds which modes, to check that the
// manager never grants conflicting modes to two backends at once. Entries
// are added after a grant and removed before a release, so the shadow may
// lag reality but never shows a holder that has gone.
type shadow struct {
	mu    sync.Mutex
	held  map[LockTag]map[*Proc]lockMask
	viols []string
}

func (s *shadow) grant(p *Proc, tag LockTag, mode LockMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.held[tag]
	if hs == nil {
		hs = map[*Proc]lockMask{}
		s.held[tag] = hs
	}
	for q, mask := range hs {
		if q != p && conflictTab[mode]&mask != 0 {
			s.viols = append(s.viols, fmt.Sprintf("%s: pid %d granted %v while pid %d holds %#x",
				tag.Describe(), p.pid, mode, q.pid, mask))
		}
	}
	hs[p] |= modeBit(mode)
}

func (s *shadow) releaseAll(p *Proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, hs := range s.held {
		delete(hs, p)
	}
}

func TestManagerStress(t *testing.T) {
	for _, c := range []struct {
		name       string
		slots      int
		partitions int
	}{
		{"fastpath", -1, 16},
		{"fastpath16-1partition", 16, 1},
		{"nofastpath", 0, 16},
	} {
		t.Run(c.name, func(t *testing.T) { managerStress(t, c.slots, c.partitions) })
	}
}

func managerStress(t *testing.T, slots, partitions int) {
	workers, txns := 12, 150
	if testing.Short() {
		txns = 40
	}
	if *long {
		workers, txns = 48, 3000
	}
	m := newTestManager(t, Config{MaxConnections: workers, Partitions: partitions})
	m.SetFastPathSlots(slots)
	m.SetDeadlockTimeout(2 * time.Millisecond)
	procs := newTestProcs(t, m, workers)
	sh := &shadow{held: map[LockTag]map[*Proc]lockMask{}}
	tags := []LockTag{
		RelationTag(1, 1), RelationTag(1, 2), RelationTag(1, 3), RelationTag(1, 4),
		TransactionTag(7), TransactionTag(8), AdvisoryTag64(1, 1), ObjectTag(1, 1259, 1, 0),
	}
	// Mostly weak relation locks, sometimes strong ones.
	modes := []LockMode{AccessShareLock, AccessShareLock, AccessShareLock, RowShareLock,
		RowExclusiveLock, RowExclusiveLock, ShareUpdateExclusiveLock, ShareLock,
		ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock}
	var (
		mu                           sync.Mutex
		granted, deadlocks, timeouts int
	)
	var wg sync.WaitGroup
	for w, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			var g, d, to int
			for txn := 0; txn < txns; txn++ {
				m.BeginVirtualXact(p, uint32(txn+1))
				n := 1 + rng.IntN(4)
				for i := 0; i < n; i++ {
					tag := tags[rng.IntN(len(tags))]
					mode := modes[rng.IntN(len(modes))]
					if tag.Type != LockTagRelation && mode < ShareLock {
						mode = ShareLock
					}
					if rng.IntN(20) == 0 {
						// Wait for another backend's transaction to end.
						q := procs[rng.IntN(len(procs))]
						num, lxid := q.VirtualXID()
						if q != p && lxid != 0 {
							tag, mode = VirtualXidTag(num, lxid), ShareLock
						}
					}
					opt := LockOptions{LockTimeout: 20 * time.Millisecond, NoWait: rng.IntN(10) == 0}
					err := m.Lock(context.Background(), p, tag, mode, opt)
					var e *Error
					switch {
					case err == nil:
						g++
						if tag.Type != LockTagVirtualTransaction {
							sh.grant(p, tag, mode)
						}
					case errors.Is(err, ErrLockNotAvailable):
					case errors.As(err, &e) && e.Code == CodeDeadlockDetected:
						d++
					case errors.As(err, &e) && e.Code == CodeLockNotAvailable:
						to++
					default:
						t.Errorf("unexpected error %v", err)
					}
					if err != nil {
						break // abort the transaction
					}
					if rng.IntN(4) == 0 {
						runtime.Gosched()
					}
				}
				sh.releaseAll(p)
				m.ReleaseTransactionLocks(p)
			}
			mu.Lock()
			granted, deadlocks, timeouts = granted+g, deadlocks+d, timeouts+to
			mu.Unlock()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(90 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("stress test hung\n%s", buf[:runtime.Stack(buf, true)])
	}
	if len(sh.viols) > 0 {
		t.Fatalf("%d conflicting grants, first: %s", len(sh.viols), sh.viols[0])
	}
	checkEmpty(t, m)
	st := m.Stats()
	t.Logf("granted %d, deadlocks %d, lock timeouts %d, fast path %d (full %d, strong %d, transfers %d)",
		granted, deadlocks, timeouts, st.FastPath.Acquisitions, st.FastPath.FallbacksFull,
		st.FastPath.FallbacksStrong, st.FastPath.TransfersDone)
	if slots == 0 && st.FastPath.Acquisitions != 0 {
		t.Fatal("fast path used while disabled")
	}
}
