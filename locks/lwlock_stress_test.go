package locks

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The LWLock stress tests hammer one lock from many backends under every
// wake-up rule, alone and with wake_up_all_waiters and the valve, and check
// the invariants no rule may break: no two conflicting holders, no lost
// wake-up (a backend left asleep hangs the test, which then fails with
// every goroutine's stack), every call's result consistent with what the
// holders did, and a clean lock at the end. Run them with
// -race -tags invariants (which also checks the queue on every wake-up);
// -long makes them longer.

type lwPolicy struct {
	rule    WakeRule
	wakeAll bool
	limit   int
}

func (p lwPolicy) String() string {
	s := p.rule.String()
	if p.wakeAll {
		s += "-wakeall"
	}
	if p.limit > 0 {
		s += fmt.Sprintf("-limit%d", p.limit)
	}
	return s
}

// lwPolicies is every rule, alone and with wake-all, each without a valve
// and with valves of 1 and 3.
func lwPolicies() []lwPolicy {
	var out []lwPolicy
	for _, rule := range []WakeRule{WakePG95, WakePG84} {
		for _, all := range []bool{false, true} {
			for _, limit := range []int{0, 1, 3} {
				out = append(out, lwPolicy{rule, all, limit})
			}
		}
	}
	return out
}

// lwStressSize is the number of backends and of iterations per backend.
func lwStressSize() (workers, iters int) {
	workers, iters = 12, 1000
	if testing.Short() {
		iters = 100
	}
	if *long {
		workers, iters = 64, 20000
	}
	return workers, iters
}

// holderCheck counts the holders of one lock and records conflicts.
type holderCheck struct {
	excl, shared atomic.Int32
	violations   atomic.Int64
}

func (h *holderCheck) enter(mode LWMode) {
	if mode == LWExclusive {
		if h.excl.Add(1) != 1 || h.shared.Load() != 0 {
			h.violations.Add(1)
		}
		return
	}
	h.shared.Add(1)
	if h.excl.Load() != 0 {
		h.violations.Add(1)
	}
}

func (h *holderCheck) leave(mode LWMode) {
	if mode == LWExclusive {
		h.excl.Add(-1)
	} else {
		h.shared.Add(-1)
	}
}

// runLWStress runs body on each of ps concurrently and fails the test if
// they have not all finished within a minute.
func runLWStress(t *testing.T, l *LWLock, ps []*Proc, body func(p *Proc, w int)) {
	t.Helper()
	var wg sync.WaitGroup
	for w, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(p, w)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("stress test hung (lost wake-up?), state %+v\n%s", l.State(), buf[:runtime.Stack(buf, true)])
	}
}

// lwSum adds f over the modes of tranche tr.
func lwSum(st *Stats, tr Tranche, f func(*LWLockStats) uint64) uint64 {
	var n uint64
	for mode := range NumLWModes {
		n += f(&st.LWLock[tr][mode])
	}
	return n
}

// checkLWClean fails unless l is free with nobody queued.
func checkLWClean(t *testing.T, l *LWLock) {
	t.Helper()
	if s := l.State(); s.Exclusive || s.Shared != 0 || s.HasWaiters || l.queueLen() != 0 {
		t.Fatalf("final state %+v, queue %d", s, l.queueLen())
	}
}

// TestLWLockStressRules: shared and exclusive acquirers and AcquireOrWait
// callers on one lock, under each policy. An AcquireOrWait that returns
// true holds the lock (and is checked as a holder); one that returns false
// holds nothing.
func TestLWLockStressRules(t *testing.T) {
	for _, pol := range lwPolicies() {
		t.Run(pol.String(), func(t *testing.T) {
			withWakePolicy(t, pol.rule, pol.wakeAll, pol.limit)
			workers, iters := lwStressSize()
			m := newTestManager(t, Config{MaxConnections: workers})
			ps := newTestProcs(t, m, workers)
			l := NewLWLock(TrancheBufferContent)
			var h holderCheck
			var bad atomic.Int64
			runLWStress(t, l, ps, func(p *Proc, seed int) {
				for i := range iters {
					mode := LWShared
					if (i+seed)%4 == 0 {
						mode = LWExclusive
					}
					if seed%3 == 0 || (i+seed)%5 == 0 { // a third are group committers
						held := p.HeldLWLocks()
						if !l.AcquireOrWait(p, LWExclusive) {
							if p.HeldLWLocks() != held {
								bad.Add(1)
							}
							continue
						}
						mode = LWExclusive
					} else {
						l.Acquire(p, mode)
					}
					h.enter(mode)
					if i%2 == 0 {
						runtime.Gosched() // let others queue up behind us
					}
					h.leave(mode)
					l.Release(p)
				}
			})
			if v := h.violations.Load(); v != 0 {
				t.Fatalf("%d mutual-exclusion violations", v)
			}
			if b := bad.Load(); b != 0 {
				t.Fatalf("%d AcquireOrWait calls returned false holding the lock", b)
			}
			checkLWClean(t, l)
			st := m.Stats()
			o := st.LWLockOutcomes[TrancheBufferContent]
			var acq uint64
			for mode := range NumLWModes {
				acq += st.LWLock[TrancheBufferContent][mode].Acquisitions
			}
			calls := uint64(workers * iters)
			if acq+o.AcquireOrWaitFreed != calls {
				t.Fatalf("acquisitions %d + AcquireOrWait freed %d != %d calls", acq, o.AcquireOrWaitFreed, calls)
			}
			t.Logf("waits %d, futile wake-ups %d; AcquireOrWait acquired %d, freed %d",
				lwSum(st, TrancheBufferContent, func(s *LWLockStats) uint64 { return s.Waits }),
				lwSum(st, TrancheBufferContent, func(s *LWLockStats) uint64 { return s.FutileWakeups }),
				o.AcquireOrWaitAcquired, o.AcquireOrWaitFreed)
		})
	}
}

// TestLWLockStressVar: WAL-insertion-lock users under each policy.
// Exclusive holders advance the lock's variable a few times and clear it
// on release; WaitForVar callers wait for progress as
// WaitXLogInsertionsToFinish does; shared acquirers and AcquireOrWait
// callers (who then act as holders) mix the queue.
//
// xgen is bumped by every exclusive holder right after it acquires and
// right before it releases, so it is odd while somebody holds the lock
// exclusively; a holder's values carry the odd xgen it had. Then:
//   - WaitForVar may report "free" only if no single holder held the lock
//     from before the call to after it (xgen odd and unchanged);
//   - a value it reports changed is 0 (a new holder has not set it yet) or
//     was set by the holder at the call's start (or by the one that had
//     just bumped xgen on its way out) or a later one, and before the end.
func TestLWLockStressVar(t *testing.T) {
	for _, pol := range lwPolicies() {
		t.Run(pol.String(), func(t *testing.T) {
			withWakePolicy(t, pol.rule, pol.wakeAll, pol.limit)
			workers, iters := lwStressSize()
			m := newTestManager(t, Config{MaxConnections: workers})
			ps := newTestProcs(t, m, workers)
			l := NewLWLock(TrancheWALInsert)
			var (
				v        LWLockVar
				h        holderCheck
				xgen     atomic.Uint64
				bad      atomic.Int64
				badMu    sync.Mutex
				firstBad string
			)
			report := func(format string, args ...any) {
				if bad.Add(1) == 1 {
					badMu.Lock()
					firstBad = fmt.Sprintf(format, args...)
					badMu.Unlock()
				}
			}
			insert := func(p *Proc, i int) {
				h.enter(LWExclusive)
				id := xgen.Add(1)
				for k := range uint64(3) {
					l.UpdateVar(p, &v, id<<8|(k+1))
					if (i+int(k))%2 == 0 {
						runtime.Gosched() // let waiters see the progress
					}
				}
				xgen.Add(1)
				h.leave(LWExclusive)
				l.ReleaseClearVar(p, &v, 0)
			}
			runLWStress(t, l, ps, func(p *Proc, seed int) {
				var seen uint64
				for i := range iters {
					switch (i + seed) % 6 {
					case 0, 1:
						l.Acquire(p, LWExclusive)
						insert(p, i)
					case 2:
						if l.AcquireOrWait(p, LWExclusive) {
							insert(p, i)
						}
					case 3:
						l.Acquire(p, LWShared)
						h.enter(LWShared)
						runtime.Gosched()
						h.leave(LWShared)
						l.Release(p)
					default:
						xs := xgen.Load()
						free, nv := l.WaitForVar(p, &v, seen)
						xe := xgen.Load()
						switch {
						case free:
							if xs == xe && xs%2 == 1 {
								report("WaitForVar free while holder %d held the lock throughout", xs)
							}
							seen = 0
						case nv == seen:
							report("WaitForVar returned the old value %#x as new", nv)
						case nv != 0 && (nv>>8%2 == 0 || nv>>8+1 < xs || nv>>8 > xe):
							report("WaitForVar returned %#x, holder %d, outside [%d, %d]", nv, nv>>8, xs, xe)
						default:
							seen = nv
						}
					}
				}
			})
			if v := h.violations.Load(); v != 0 {
				t.Fatalf("%d mutual-exclusion violations", v)
			}
			if b := bad.Load(); b != 0 {
				t.Fatalf("%d inconsistent WaitForVar results; first: %s", b, firstBad)
			}
			checkLWClean(t, l)
			if v.Load() != 0 {
				t.Fatalf("variable %#x after the last ReleaseClearVar", v.Load())
			}
			st := m.Stats()
			o := st.LWLockOutcomes[TrancheWALInsert]
			t.Logf("waits %d; WaitForVar free %d, updated %d; AcquireOrWait acquired %d, freed %d",
				lwSum(st, TrancheWALInsert, func(s *LWLockStats) uint64 { return s.Waits }),
				o.WaitForVarFree, o.WaitForVarUpdated, o.AcquireOrWaitAcquired, o.AcquireOrWaitFreed)
		})
	}
}
