package locks

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLWLockZeroValue(t *testing.T) {
	var l LWLock
	if l.Tranche() != TrancheOther || l.Tranche().String() != "Other" {
		t.Fatalf("zero tranche = %v", l.Tranche())
	}
	l.Acquire(nil, LWExclusive)
	if s := l.State(); !s.Exclusive || s.Shared != 0 || !s.ReleaseOK {
		t.Fatalf("state after exclusive acquire: %+v", s)
	}
	if l.ConditionalAcquire(nil, LWShared) {
		t.Fatal("shared acquired while exclusively held")
	}
	l.Release(nil)
	l.Acquire(nil, LWShared)
	l.Acquire(nil, LWShared)
	if s := l.State(); s.Shared != 2 || s.Exclusive {
		t.Fatalf("state with two sharers: %+v", s)
	}
	if l.ConditionalAcquire(nil, LWExclusive) {
		t.Fatal("exclusive acquired while shared held")
	}
	l.Release(nil)
	l.Release(nil)
	if s := l.State(); s != (LWLockState{ReleaseOK: true}) {
		t.Fatalf("state after releases: %+v", s)
	}
}

func TestLWLockReleaseNotHeldPanics(t *testing.T) {
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	l := NewLWLock(TrancheXidGen)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	l.Release(p)
}

func TestLWLockStatsAndHeldList(t *testing.T) {
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	a, b := NewLWLock(TrancheProcArray), NewLWLock(TrancheXidGen)
	a.Acquire(p, LWShared)
	b.Acquire(p, LWExclusive)
	if !a.ConditionalAcquire(p, LWShared) {
		t.Fatal("conditional shared failed")
	}
	if p.HeldLWLocks() != 3 {
		t.Fatalf("held = %d", p.HeldLWLocks())
	}
	a.Release(p) // releases in any order
	p.ReleaseAllLWLocks()
	if p.HeldLWLocks() != 0 || a.State().Shared != 0 || b.State().Exclusive {
		t.Fatal("ReleaseAllLWLocks left locks held")
	}
	st := p.Stats()
	if got := st.LWLock[TrancheProcArray][LWShared].Acquisitions; got != 2 {
		t.Errorf("ProcArray shared acquisitions = %d", got)
	}
	if got := st.LWLock[TrancheXidGen][LWExclusive].Acquisitions; got != 1 {
		t.Errorf("XidGen exclusive acquisitions = %d", got)
	}
}

func TestLWLockWaitEvent(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	l := NewLWLock(TrancheBufferMapping)
	l.Acquire(ps[0], LWExclusive)
	done := make(chan struct{})
	go func() {
		l.Acquire(ps[1], LWShared)
		l.Release(ps[1])
		close(done)
	}()
	eventually(t, "waiter queued", func() bool { return l.queueLen() == 1 })
	eventually(t, "wait event", func() bool {
		typ, name := ps[1].WaitEvent()
		return typ == "LWLock" && name == "BufferMapping"
	})
	l.Release(ps[0])
	<-done
	if typ, name := ps[1].WaitEvent(); typ != "" || name != "" {
		t.Fatalf("wait event after wait: %q %q", typ, name)
	}
	st := ps[1].Stats().LWLock[TrancheBufferMapping][LWShared]
	if st.Waits != 1 || st.Acquisitions != 1 || st.Wakeups < 1 || st.WaitTimeNs == 0 {
		t.Fatalf("stats %+v", st)
	}
	if b := waitBucket(time.Duration(st.WaitTimeNs)); st.WaitBuckets[b] != 1 {
		t.Fatalf("wait of %v not in bucket %d: %v", time.Duration(st.WaitTimeNs), b, st.WaitBuckets)
	}
}

// lwTestWaiter queues a backend on l in mode and reports when it has the lock.
type lwTestWaiter struct {
	p    *Proc
	mode LWMode
	got  atomic.Bool
	rel  chan struct{}
	done chan struct{}
}

func startWaiter(t *testing.T, l *LWLock, p *Proc, mode LWMode) *lwTestWaiter {
	w := &lwTestWaiter{p: p, mode: mode, rel: make(chan struct{}), done: make(chan struct{})}
	n := l.queueLen()
	go func() {
		l.Acquire(p, mode)
		w.got.Store(true)
		<-w.rel
		l.Release(p)
		close(w.done)
	}()
	eventually(t, "waiter queued", func() bool { return l.queueLen() == n+1 })
	return w
}

func (w *lwTestWaiter) release() { close(w.rel); <-w.done }

// TestLWLockWakeClassic checks the 8.4 rule: the leading run of shared
// waiters is woken, an exclusive waiter alone, and waiters behind stay queued.
func TestLWLockWakeClassic(t *testing.T) {
	withWakePolicy(t, WakePG84, false, 0)
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 5)
	l := NewLWLock(TrancheLockManager)
	l.Acquire(ps[0], LWExclusive)
	s1 := startWaiter(t, l, ps[1], LWShared)
	s2 := startWaiter(t, l, ps[2], LWShared)
	x3 := startWaiter(t, l, ps[3], LWExclusive)
	s4 := startWaiter(t, l, ps[4], LWShared)
	l.Release(ps[0])
	eventually(t, "s1 and s2 granted", func() bool { return s1.got.Load() && s2.got.Load() })
	time.Sleep(5 * time.Millisecond)
	if x3.got.Load() || s4.got.Load() || l.queueLen() != 2 {
		t.Fatalf("x3=%v s4=%v queue=%d; want x3 and s4 still queued", x3.got.Load(), s4.got.Load(), l.queueLen())
	}
	s1.release()
	if l.queueLen() != 2 {
		t.Fatal("partial release woke somebody")
	}
	s2.release()
	eventually(t, "x3 granted", x3.got.Load)
	time.Sleep(5 * time.Millisecond)
	if s4.got.Load() {
		t.Fatal("s4 woken together with an exclusive waiter")
	}
	x3.release()
	eventually(t, "s4 granted", s4.got.Load)
	s4.release()
	if s := l.State(); s.HasWaiters || s.Exclusive || s.Shared != 0 {
		t.Fatalf("final state %+v", s)
	}
}

// TestLWLockWakePG95 checks the 9.5+ rule on the same queue as
// TestLWLockWakeClassic: every shared waiter is woken, the exclusive one
// between them stays queued, and is then woken alone.
func TestLWLockWakePG95(t *testing.T) {
	withWakePolicy(t, WakePG95, false, 0)
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 6)
	l := NewLWLock(TrancheLockManager)
	l.Acquire(ps[0], LWExclusive)
	s1 := startWaiter(t, l, ps[1], LWShared)
	s2 := startWaiter(t, l, ps[2], LWShared)
	x3 := startWaiter(t, l, ps[3], LWExclusive)
	s4 := startWaiter(t, l, ps[4], LWShared)
	x5 := startWaiter(t, l, ps[5], LWExclusive)
	l.Release(ps[0])
	eventually(t, "s1, s2 and s4 granted", func() bool { return s1.got.Load() && s2.got.Load() && s4.got.Load() })
	time.Sleep(5 * time.Millisecond)
	if x3.got.Load() || x5.got.Load() || l.queueLen() != 2 {
		t.Fatalf("x3=%v x5=%v queue=%d; want x3 and x5 still queued", x3.got.Load(), x5.got.Load(), l.queueLen())
	}
	s1.release()
	s2.release()
	if l.queueLen() != 2 {
		t.Fatal("partial release woke somebody")
	}
	s4.release()
	eventually(t, "x3 granted", x3.got.Load)
	time.Sleep(5 * time.Millisecond)
	if x5.got.Load() || l.queueLen() != 1 {
		t.Fatal("x5 woken together with x3")
	}
	x3.release()
	eventually(t, "x5 granted", x5.got.Load)
	x5.release()
	if s := l.State(); s.HasWaiters || s.Exclusive || s.Shared != 0 {
		t.Fatalf("final state %+v", s)
	}
}

// TestLWLockWakeAll checks wake_up_all_waiters: one release wakes everyone.
func TestLWLockWakeAll(t *testing.T) {
	withWakePolicy(t, WakePG95, true, 0)
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 5)
	l := NewLWLock(TrancheLockManager)
	l.Acquire(ps[0], LWExclusive)
	var ws []*lwTestWaiter
	for i, mode := range []LWMode{LWShared, LWExclusive, LWShared, LWExclusive} {
		ws = append(ws, startWaiter(t, l, ps[i+1], mode))
	}
	l.Release(ps[0])
	// Every waiter was dequeued and woken; whoever lost the race queued again.
	for _, w := range ws {
		eventually(t, "wake-up received", func() bool {
			return w.p.stats.lw[TrancheLockManager][w.mode].wakeups.Load() >= 1
		})
	}
	// Release whoever holds the lock until everybody has had it.
	released := make([]bool, len(ws))
	eventually(t, "all granted", func() bool {
		all := true
		for i, w := range ws {
			if !released[i] && w.got.Load() {
				w.release()
				released[i] = true
			}
			all = all && released[i]
		}
		return all
	})
}

// TestLWLockWakeLimit checks lwlock_wakeup_limit under each rule.
func TestLWLockWakeLimit(t *testing.T) {
	for _, rule := range []WakeRule{WakePG84, WakePG95} {
		t.Run(rule.String(), func(t *testing.T) {
			withWakePolicy(t, rule, false, 1)
			m := newTestManager(t, Config{})
			ps := newTestProcs(t, m, 4)
			l := NewLWLock(TrancheLockManager)
			l.Acquire(ps[0], LWExclusive)
			s1 := startWaiter(t, l, ps[1], LWShared)
			s2 := startWaiter(t, l, ps[2], LWShared)
			s3 := startWaiter(t, l, ps[3], LWShared)
			l.Release(ps[0])
			eventually(t, "s1 granted", s1.got.Load)
			time.Sleep(5 * time.Millisecond)
			if s2.got.Load() || s3.got.Load() {
				t.Fatal("more than one waiter woken with limit 1")
			}
			s1.release()
			eventually(t, "s2 granted", s2.got.Load)
			s2.release()
			eventually(t, "s3 granted", s3.got.Load)
			s3.release()
		})
	}
}

// TestWakeRuleSetting checks the setters and that the rule and the two
// switches are independent bits of one word.
func TestWakeRuleSetting(t *testing.T) {
	t.Cleanup(saveWakePolicy())
	SetWakeupRule(WakePG95)
	SetWakePolicy(false, 0)
	if WakeupRule() != WakePG95 || WakeupRule().String() != "pg95" {
		t.Fatalf("rule %v", WakeupRule())
	}
	SetWakeupRule(WakePG84)
	SetWakePolicy(true, 1<<31-1)
	if all, limit := WakePolicy(); !all || limit != wakeLimitMax || WakeupRule() != WakePG84 {
		t.Fatalf("wakeAll %v limit %d rule %v", all, limit, WakeupRule())
	}
	SetWakePolicy(false, -3)
	if all, limit := WakePolicy(); all || limit != 0 || WakeupRule() != WakePG84 {
		t.Fatalf("wakeAll %v limit %d rule %v", all, limit, WakeupRule())
	}
	for _, c := range []struct {
		s    string
		r    WakeRule
		okay bool
	}{{"pg95", WakePG95, true}, {"pg84", WakePG84, true}, {"PG84", 0, false}, {"", 0, false}} {
		if r, ok := ParseWakeRule(c.s); r != c.r || ok != c.okay {
			t.Errorf("ParseWakeRule(%q) = %v, %v", c.s, r, ok)
		}
	}
}

// TestLWLockStress hammers one lock from many goroutines while the wake
// rule and policy change underneath, checking mutual exclusion and that
// nobody is left sleeping (a lost wake-up would hang the test). The
// stress tests in lwlock_stress_test.go hold each policy still instead.
func TestLWLockStress(t *testing.T) {
	t.Cleanup(saveWakePolicy())
	workers, iters := 16, 2000
	if testing.Short() {
		iters = 300
	}
	if *long {
		workers, iters = 64, 50000
	}
	m := newTestManager(t, Config{MaxConnections: workers})
	ps := newTestProcs(t, m, workers)
	l := NewLWLock(TrancheBufferContent)
	var excl, shared atomic.Int32
	var violations atomic.Int64
	stop := make(chan struct{})
	var switcher sync.WaitGroup
	switcher.Add(1)
	go func() {
		defer switcher.Done()
		policies := []struct {
			all   bool
			limit int
		}{{false, 0}, {true, 0}, {false, 1}, {true, 2}, {false, 3}, {true, 1}, {false, 0}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
				pol := policies[i%len(policies)]
				SetWakePolicy(pol.all, pol.limit)
				SetWakeupRule(WakeRule(i / len(policies) % 2))
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(p *Proc, seed int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				if (i+seed)%4 == 0 {
					l.Acquire(p, LWExclusive)
					if excl.Add(1) != 1 || shared.Load() != 0 {
						violations.Add(1)
					}
					if i%16 == 0 {
						runtime.Gosched()
					}
					excl.Add(-1)
					l.Release(p)
				} else {
					l.Acquire(p, LWShared)
					shared.Add(1)
					if excl.Load() != 0 {
						violations.Add(1)
					}
					if i%16 == 0 {
						runtime.Gosched()
					}
					shared.Add(-1)
					l.Release(p)
				}
			}
		}(ps[w], w)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("stress test hung (lost wake-up?), state %+v\n%s", l.State(), buf[:runtime.Stack(buf, true)])
	}
	close(stop)
	switcher.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual-exclusion violations", v)
	}
	if s := l.State(); s.Exclusive || s.Shared != 0 || s.HasWaiters || l.queueLen() != 0 {
		t.Fatalf("final state %+v, queue %d", s, l.queueLen())
	}
	var total, wakeups, futile uint64
	for _, p := range ps {
		for mode := range NumLWModes {
			st := &p.stats.lw[TrancheBufferContent][mode]
			total += st.acquisitions.Load()
			wakeups += st.wakeups.Load()
			futile += st.futileWakeups.Load()
		}
	}
	if total != uint64(workers*iters) {
		t.Fatalf("acquisitions = %d, want %d", total, workers*iters)
	}
	t.Logf("wake-ups %d, futile %d", wakeups, futile)
}

func TestTranches(t *testing.T) {
	for tr, want := range map[Tranche]string{
		TrancheProcArray: "ProcArray", TrancheXidGen: "XidGen", TrancheXactSLRU: "XactSLRU",
		TrancheLockManager: "LockManager", TrancheLockFastPath: "LockFastPath",
		TrancheBufferMapping: "BufferMapping", TrancheBufferContent: "BufferContent",
		TrancheRelationExtension: "RelationExtension", TrancheWALWrite: "WALWrite",
		TrancheCheckpointerComm: "CheckpointerComm",
	} {
		if tr.String() != want {
			t.Errorf("%d: %q, want %q", tr, tr.String(), want)
		}
	}
	a, err := RegisterTranche("MyExtension")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RegisterTranche("MyExtension")
	if a != b || a.String() != "MyExtension" || int(a) >= NumTranches() {
		t.Fatalf("registered tranche %d %q", a, a.String())
	}
	if c, _ := RegisterTranche("LockManager"); c != TrancheLockManager {
		t.Fatal("builtin name not found")
	}
}

func TestWaitEvents(t *testing.T) {
	cases := []struct {
		e         WaitEvent
		typ, name string
	}{
		{0, "", ""},
		{LWLockWaitEvent(TrancheProcArray), "LWLock", "ProcArray"},
		{LockWaitEvent(LockTagTransaction), "Lock", "transactionid"},
		{LockWaitEvent(LockTagRelationExtend), "Lock", "extend"},
		{WaitEventPgSleep, "Timeout", "PgSleep"},
		{WaitEventClientRead, "Client", "ClientRead"},
		{NewWaitEvent("IPC", "MyWait"), "IPC", "MyWait"},
	}
	for _, c := range cases {
		if c.e.Type() != c.typ || c.e.Name() != c.name {
			t.Errorf("%#x: %q/%q, want %q/%q", uint32(c.e), c.e.Type(), c.e.Name(), c.typ, c.name)
		}
	}
	if NewWaitEvent("IPC", "MyWait") != NewWaitEvent("IPC", "MyWait") {
		t.Error("re-registration gave a new code")
	}
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	p.SetWaitEvent(WaitEventPgSleep)
	if typ, name := p.WaitEvent(); typ != "Timeout" || name != "PgSleep" {
		t.Errorf("got %q %q", typ, name)
	}
	if n := testing.AllocsPerRun(100, func() { p.SetWaitEvent(WaitEventPgSleep); p.ClearWaitEvent() }); n != 0 {
		t.Errorf("SetWaitEvent allocates %v", n)
	}
}
