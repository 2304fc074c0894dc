package locks

import (
	"testing"
	"time"
)

type lwResult struct {
	ok  bool
	val uint64
}

// TestAcquireOrWait: free → taken; held → waits for the release and
// returns without the lock.
func TestAcquireOrWait(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 3)
	l := NewLWLock(TrancheWALWrite)
	if !l.AcquireOrWait(ps[0], LWExclusive) {
		t.Fatal("free lock not acquired")
	}
	if ps[0].HeldLWLocks() != 1 || !l.State().Exclusive {
		t.Fatal("AcquireOrWait did not hold the lock")
	}
	res := make(chan bool)
	go func() { res <- l.AcquireOrWait(ps[1], LWExclusive) }()
	eventually(t, "waiter queued", func() bool {
		typ, name := ps[1].WaitEvent()
		return typ == "LWLock" && name == "WALWrite"
	})
	l.Release(ps[0])
	if <-res {
		t.Fatal("AcquireOrWait on a held lock returned true")
	}
	if ps[1].HeldLWLocks() != 0 || l.State() != (LWLockState{ReleaseOK: true}) {
		t.Fatalf("after the wait: held %d, state %+v", ps[1].HeldLWLocks(), l.State())
	}
	st := ps[1].Stats()
	o := st.LWLockOutcomes[TrancheWALWrite]
	w := st.LWLock[TrancheWALWrite][LWWaitUntilFree]
	if o != (LWLockWaitOutcomes{AcquireOrWaitFreed: 1}) || w.Waits != 1 || w.Wakeups != 1 || w.Acquisitions != 0 {
		t.Fatalf("outcomes %+v, wait-until-free stats %+v", o, w)
	}
	if o := ps[0].Stats().LWLockOutcomes[TrancheWALWrite]; o != (LWLockWaitOutcomes{AcquireOrWaitAcquired: 1}) {
		t.Fatalf("holder's outcomes %+v", o)
	}
	if typ, _ := ps[1].WaitEvent(); typ != "" {
		t.Fatal("wait event left set")
	}
}

// TestAcquireOrWaitAheadOfExclusive: a wait-until-free waiter queues at
// the head, ahead of an exclusive waiter that came first, and its wake-up
// does not stop the exclusive waiter's, under either rule or with a valve
// of one.
func TestAcquireOrWaitAheadOfExclusive(t *testing.T) {
	for _, pol := range []struct {
		rule  WakeRule
		limit int
	}{{WakePG95, 0}, {WakePG84, 0}, {WakePG95, 1}, {WakePG84, 1}} {
		t.Run(pol.rule.String(), func(t *testing.T) {
			withWakePolicy(t, pol.rule, false, pol.limit)
			m := newTestManager(t, Config{})
			ps := newTestProcs(t, m, 3)
			l := NewLWLock(TrancheWALWrite)
			l.Acquire(ps[0], LWExclusive)
			x := startWaiter(t, l, ps[1], LWExclusive)
			res := make(chan bool)
			go func() { res <- l.AcquireOrWait(ps[2], LWExclusive) }()
			eventually(t, "second waiter queued", func() bool { return l.queueLen() == 2 })
			l.lockWaitList(nil)
			head := l.head
			l.unlockWaitList(0, 0)
			if head != &ps[2].lw {
				t.Fatal("wait-until-free waiter not at the head")
			}
			l.Release(ps[0])
			if <-res {
				t.Fatal("AcquireOrWait returned true")
			}
			eventually(t, "exclusive waiter granted", x.got.Load)
			x.release()
		})
	}
}

// TestWaitForVar covers LWLockWaitForVar's three ways out and UpdateVar's
// wake-up.
func TestWaitForVar(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	l := NewLWLock(TrancheWALInsert)
	var v LWLockVar
	if free, _ := l.WaitForVar(ps[1], &v, 0); !free {
		t.Fatal("free lock: not free")
	}
	l.Acquire(ps[0], LWShared)
	if free, _ := l.WaitForVar(ps[1], &v, 0); !free {
		t.Fatal("shared holders are ignored, as in PostgreSQL")
	}
	l.Release(ps[0])
	l.Acquire(ps[0], LWExclusive)
	l.UpdateVar(ps[0], &v, 7)
	if free, nv := l.WaitForVar(ps[1], &v, 5); free || nv != 7 {
		t.Fatalf("changed value: %v %d", free, nv)
	}
	res := make(chan lwResult)
	wait := func(old uint64) {
		go func() {
			free, nv := l.WaitForVar(ps[1], &v, old)
			res <- lwResult{free, nv}
		}()
		eventually(t, "WaitForVar queued", func() bool {
			typ, _ := ps[1].WaitEvent()
			return typ == "LWLock" && l.queueLen() == 1
		})
	}
	wait(7)
	l.UpdateVar(ps[0], &v, 7) // same value: the waiter looks and sleeps again
	eventually(t, "futile wake-up", func() bool {
		return ps[1].stats.lw[TrancheWALInsert][LWWaitUntilFree].futileWakeups.Load() == 1 && l.queueLen() == 1
	})
	l.UpdateVar(ps[0], &v, 9)
	if r := <-res; r.ok || r.val != 9 {
		t.Fatalf("after UpdateVar: %+v", r)
	}
	wait(9)
	l.ReleaseClearVar(ps[0], &v, 0)
	if r := <-res; !r.ok {
		t.Fatalf("after ReleaseClearVar: %+v", r)
	}
	if v.Load() != 0 || l.State() != (LWLockState{ReleaseOK: true}) {
		t.Fatalf("var %d state %+v", v.Load(), l.State())
	}
	st := ps[1].Stats()
	want := LWLockWaitOutcomes{WaitForVarFree: 3, WaitForVarUpdated: 2}
	if o := st.LWLockOutcomes[TrancheWALInsert]; o != want {
		t.Fatalf("outcomes %+v, want %+v", o, want)
	}
	if w := st.LWLock[TrancheWALInsert][LWWaitUntilFree]; w.Waits != 2 || w.Wakeups != 3 || w.FutileWakeups != 1 {
		t.Fatalf("wait-until-free stats %+v", w)
	}
}

// TestWaitForVarNilProc: callers without a backend may wait too.
func TestWaitForVarNilProc(t *testing.T) {
	l := NewLWLock(TrancheWALInsert)
	var v LWLockVar
	l.Acquire(nil, LWExclusive)
	res := make(chan lwResult)
	go func() {
		free, nv := l.WaitForVar(nil, &v, 0)
		res <- lwResult{free, nv}
	}()
	eventually(t, "queued", func() bool { return l.queueLen() == 1 })
	time.Sleep(time.Millisecond)
	l.UpdateVar(nil, &v, 3)
	if r := <-res; r.ok || r.val != 3 {
		t.Fatalf("%+v", r)
	}
	go func() { res <- lwResult{ok: l.AcquireOrWait(nil, LWExclusive)} }()
	eventually(t, "queued", func() bool { return l.queueLen() == 1 })
	l.Release(nil)
	if r := <-res; r.ok {
		t.Fatal("AcquireOrWait took a held lock")
	}
}

// TestLWLockVarAllocs: the paths that do not sleep allocate nothing.
func TestLWLockVarAllocs(t *testing.T) {
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	l := NewLWLock(TrancheWALInsert)
	var v LWLockVar
	if n := testing.AllocsPerRun(100, func() {
		if !l.AcquireOrWait(p, LWExclusive) {
			t.Fatal("not acquired")
		}
		l.UpdateVar(p, &v, v.Load()+1)
		if free, _ := l.WaitForVar(p, &v, 0); free {
			t.Fatal("held lock free")
		}
		l.ReleaseClearVar(p, &v, 0)
		if free, _ := l.WaitForVar(p, &v, 0); !free {
			t.Fatal("free lock held")
		}
	}); n != 0 {
		t.Fatalf("%v allocs per run", n)
	}
}

// TestAcquireWaitUntilFreePanics: nobody holds a lock in that mode.
func TestAcquireWaitUntilFreePanics(t *testing.T) {
	l := NewLWLock(TrancheWALWrite)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	l.AcquireOrWait(nil, LWWaitUntilFree)
}
