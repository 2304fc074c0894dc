package locks

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// benchProcs hands each RunParallel goroutine its own Proc.
type benchProcs struct {
	m    *Manager
	next atomic.Int32
	ps   []*Proc
}

func newBenchProcs(b *testing.B, n int, slots int) *benchProcs {
	m := newTestManager(b, Config{MaxConnections: n, MaxLocksPerTransaction: 128})
	m.SetFastPathSlots(slots)
	bp := &benchProcs{m: m}
	for i := 0; i < n; i++ {
		p, err := m.NewProc(int32(i + 1))
		if err != nil {
			b.Fatal(err)
		}
		bp.ps = append(bp.ps, p)
	}
	b.Cleanup(func() {
		for _, p := range bp.ps {
			p.Close()
		}
	})
	return bp
}

func (bp *benchProcs) get() *Proc { return bp.ps[int(bp.next.Add(1)-1)%len(bp.ps)] }

// paddedLWLock keeps the benchmarked lock on its own cache lines.
type paddedLWLock struct {
	_ [cacheLine]byte
	l LWLock
	_ [cacheLine]byte
}

type paddedRWMutex struct {
	_  [cacheLine]byte
	mu sync.RWMutex
	_  [cacheLine]byte
}

// BenchmarkLWLockUncontended compares one backend's acquire+release with
// sync.RWMutex in the same run.
func BenchmarkLWLockUncontended(b *testing.B) {
	bp := newBenchProcs(b, 1, -1)
	p := bp.ps[0]
	b.Run("LWLock/exclusive", func(b *testing.B) {
		var l paddedLWLock
		b.ReportAllocs()
		for b.Loop() {
			l.l.Acquire(p, LWExclusive)
			l.l.Release(p)
		}
	})
	b.Run("LWLock/shared", func(b *testing.B) {
		var l paddedLWLock
		b.ReportAllocs()
		for b.Loop() {
			l.l.Acquire(p, LWShared)
			l.l.Release(p)
		}
	})
	b.Run("LWLock/exclusive-nilproc", func(b *testing.B) {
		var l paddedLWLock
		b.ReportAllocs()
		for b.Loop() {
			l.l.Acquire(nil, LWExclusive)
			l.l.Release(nil)
		}
	})
	b.Run("LWLock/acquire-or-wait", func(b *testing.B) {
		var l paddedLWLock
		b.ReportAllocs()
		for b.Loop() {
			l.l.AcquireOrWait(p, LWExclusive)
			l.l.Release(p)
		}
	})
	b.Run("LWLock/update-var+wait-for-var", func(b *testing.B) {
		// A WAL insertion: the holder advances its position; another
		// backend's WaitForVar on a free lock returns at once.
		var l paddedLWLock
		var v LWLockVar
		b.ReportAllocs()
		for b.Loop() {
			l.l.Acquire(p, LWExclusive)
			l.l.UpdateVar(p, &v, v.Load()+1)
			l.l.ReleaseClearVar(p, &v, 0)
			l.l.WaitForVar(p, &v, 0)
		}
	})
	b.Run("RWMutex/Lock", func(b *testing.B) {
		var mu paddedRWMutex
		b.ReportAllocs()
		for b.Loop() {
			mu.mu.Lock()
			mu.mu.Unlock()
		}
	})
	b.Run("RWMutex/RLock", func(b *testing.B) {
		var mu paddedRWMutex
		b.ReportAllocs()
		for b.Loop() {
			mu.mu.RLock()
			mu.mu.RUnlock()
		}
	})
}

var workSink atomic.Uint64

// work burns roughly n×1ns of CPU while a lock is held, or yields the
// processor if n is workYield.
func work(n int) {
	if n == workYield {
		runtime.Gosched()
		return
	}
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		workSink.Add(1)
	}
}

// workYield as the work in the lock makes the holder yield its processor
// (runtime.Gosched) while it holds the lock, as a PostgreSQL backend is
// descheduled holding an LWLock: with only two cores this is what builds
// queues of mixed shared and exclusive waiters, where the rules differ.
const workYield = -1

func workName(n int) string {
	if n == workYield {
		return "yield"
	}
	return fmt.Sprint(n)
}

// BenchmarkLWLockContended runs G goroutines (each its own backend) on one
// lock, one acquisition in four exclusive, under each wake-up rule and
// policy, with no work, with ~200 loop iterations of work and with a yield
// while holding the lock. sync.RWMutex is the baseline. The policies of one (G, work)
// run back to back, so that one pass over the matrix measures them at
// nearly the same time; compare them with
// benchstat -col /policy (pg95, the default, is the first column).
func BenchmarkLWLockContended(b *testing.B) {
	policies := []struct {
		name    string
		rule    WakeRule
		wakeAll bool
		limit   int
	}{
		{"pg95", WakePG95, false, 0},
		{"pg84", WakePG84, false, 0},
		{"wakeall", WakePG95, true, 0},
		{"wakeall-limit4", WakePG95, true, 4},
		{"rwmutex", WakePG95, false, 0},
	}
	for _, g := range []int{2, 8, 64, 512} {
		for _, w := range []int{0, 200, workYield} {
			for _, pol := range policies {
				b.Run(fmt.Sprintf("g=%d/work=%s/policy=%s", g, workName(w), pol.name), func(b *testing.B) {
					withWakePolicy(b, pol.rule, pol.wakeAll, pol.limit)
					bp := newBenchProcs(b, g, -1)
					var l paddedLWLock
					l.l.Init(TrancheProcArray)
					var mu paddedRWMutex
					b.SetParallelism((g + 1) / 2) // RunParallel starts GOMAXPROCS×this goroutines
					b.ReportAllocs()
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						p := bp.get()
						i := 0
						for pb.Next() {
							i++
							excl := i%4 == 0
							if pol.name == "rwmutex" {
								if excl {
									mu.mu.Lock()
									work(w)
									mu.mu.Unlock()
								} else {
									mu.mu.RLock()
									work(w)
									mu.mu.RUnlock()
								}
								continue
							}
							mode := LWShared
							if excl {
								mode = LWExclusive
							}
							l.l.Acquire(p, mode)
							work(w)
							l.l.Release(p)
						}
					})
					b.StopTimer()
					if pol.name != "rwmutex" {
						st := bp.m.Stats()
						var waits, wakeups, futile uint64
						for mode := range NumLWModes {
							c := st.LWLock[TrancheProcArray][mode]
							waits += c.Waits
							wakeups += c.Wakeups
							futile += c.FutileWakeups
						}
						b.ReportMetric(float64(waits)/float64(b.N), "waits/op")
						b.ReportMetric(float64(wakeups)/float64(b.N), "wakeups/op")
						b.ReportMetric(float64(futile)/float64(max(wakeups, 1)), "futile/wakeup")
					}
				})
			}
		}
	}
}
