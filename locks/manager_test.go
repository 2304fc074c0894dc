package locks

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestNewManagerValidation(t *testing.T) {
	for _, n := range []int{3, 12, 2048, -4} {
		if _, err := NewManager(Config{Partitions: n}); err == nil {
			t.Errorf("partitions=%d accepted", n)
		}
	}
	m := newTestManager(t, Config{Partitions: 1})
	if m.Partitions() != 1 || m.Capacity() != 6400 || m.FastPathSlots() != 64 {
		t.Errorf("defaults: partitions %d capacity %d slots %d", m.Partitions(), m.Capacity(), m.FastPathSlots())
	}
}

func TestProcRegistry(t *testing.T) {
	m := newTestManager(t, Config{MaxConnections: 2})
	var procs []*Proc
	for i := 0; i < 2+NumAuxProcs; i++ {
		p, err := m.NewProc(int32(500 + i))
		if err != nil {
			t.Fatal(err)
		}
		if p.Number() != int32(i) || p.PID() != int32(500+i) {
			t.Fatalf("proc %d: number %d pid %d", i, p.Number(), p.PID())
		}
		procs = append(procs, p)
	}
	if _, err := m.NewProc(999); !errors.Is(err, ErrTooManyProcs) {
		t.Fatalf("err = %v", err)
	}
	if m.ProcByPID(503) != procs[3] || m.ProcByPID(1) != nil {
		t.Fatal("ProcByPID")
	}
	procs[3].Close()
	procs[3].Close() // no-op
	if m.ProcByPID(503) != nil {
		t.Fatal("closed proc still registered")
	}
	p, err := m.NewProc(777)
	if err != nil || p.Number() != 3 {
		t.Fatalf("reused number %d, err %v", p.Number(), err)
	}
	n := 0
	m.ForEachProc(func(*Proc) { n++ })
	if n != 2+NumAuxProcs {
		t.Fatalf("ForEachProc saw %d", n)
	}
}

func TestDeadlockByTimer(t *testing.T) {
	m := newTestManager(t, Config{})
	m.SetDeadlockTimeout(20 * time.Millisecond)
	ps := newTestProcs(t, m, 2)
	ctx := t.Context()
	a, b := TransactionTag(1), TransactionTag(2)
	must(t, m.Lock(ctx, ps[0], a, ExclusiveLock, LockOptions{}))
	must(t, m.Lock(ctx, ps[1], b, ExclusiveLock, LockOptions{}))
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, tag := range []LockTag{b, a} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.Lock(ctx, ps[i], tag, ShareLock, LockOptions{})
			if errs[i] != nil {
				m.ReleaseTransactionLocks(ps[i]) // the victim aborts
			}
		}()
	}
	wg.Wait()
	victims := 0
	for _, err := range errs {
		var e *Error
		if errors.As(err, &e) && e.SQLState() == CodeDeadlockDetected {
			victims++
		} else if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
	}
	if victims != 1 {
		t.Fatalf("victims = %d (%v)", victims, errs)
	}
	var dl uint64
	for _, p := range ps {
		dl += p.Stats().Lock[LockTagTransaction][ShareLock].Deadlocks
	}
	if dl != 1 {
		t.Fatalf("deadlock counter = %d", dl)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestWaitCancelAndWaitEvent(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	tag := AdvisoryTag64(1, 7)
	must(t, m.Lock(t.Context(), ps[0], tag, ExclusiveLock, LockOptions{Session: true}))
	cause := errors.New("canceling statement due to statement timeout")
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error)
	go func() { done <- m.Lock(ctx, ps[1], tag, ShareLock, LockOptions{}) }()
	eventually(t, "waiting", func() bool { return ps[1].waitStatus.Load() == waitWaiting })
	// The wait event is set just after the wait status (joinWaitQueue).
	eventually(t, "wait event Lock/advisory", func() bool {
		typ, name := ps[1].WaitEvent()
		return typ == "Lock" && name == "advisory"
	})
	rows := m.Status()
	if len(rows) != 2 || rows[1].Granted || rows[1].WaitStart.IsZero() || rows[1].PID != ps[1].PID() {
		t.Fatalf("status %+v", rows)
	}
	if got := m.BlockingPIDs(ps[1].PID()); len(got) != 1 || got[0] != ps[0].PID() {
		t.Fatalf("blocking %v", got)
	}
	cancel(cause)
	if err := <-done; err != cause {
		t.Fatalf("err = %v, want the context cause", err)
	}
	if typ, _ := ps[1].WaitEvent(); typ != "" {
		t.Fatal("wait event not cleared")
	}
	if rows := m.Status(); len(rows) != 1 {
		t.Fatalf("status after cancel %+v", rows)
	}
	st := ps[1].Stats().Lock[LockTagAdvisory][ShareLock]
	if st.Waits != 1 || st.Shared != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLockTimeoutAndStats(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	rel := RelationTag(1, 42)
	must(t, m.Lock(t.Context(), ps[0], rel, AccessExclusiveLock, LockOptions{}))
	err := m.Lock(t.Context(), ps[1], rel, AccessShareLock, LockOptions{LockTimeout: 10 * time.Millisecond})
	var e *Error
	if !errors.As(err, &e) || e.Code != "55P03" || e.Message != "canceling statement due to lock timeout" {
		t.Fatalf("err = %v", err)
	}
	st := ps[1].Stats().Lock[LockTagRelation][AccessShareLock]
	if st.LockTimeouts != 1 || st.Waits != 1 || st.WaitTimeNs < uint64(10*time.Millisecond) {
		t.Fatalf("stats %+v", st)
	}
	// The one wait lands in the bucket its duration falls in: above the
	// 10 ms lock_timeout, so in one of the buckets past 10 ms.
	if b := waitBucket(time.Duration(st.WaitTimeNs)); st.WaitBuckets[b] != 1 || WaitBucketBounds[b] <= 10*time.Millisecond {
		t.Fatalf("wait of %v: buckets %v", time.Duration(st.WaitTimeNs), st.WaitBuckets)
	}
	before := m.Stats()
	ps[1].Close()
	after := m.Stats()
	if after.Lock[LockTagRelation][AccessShareLock].LockTimeouts != before.Lock[LockTagRelation][AccessShareLock].LockTimeouts {
		t.Fatal("closing a proc changed the totals")
	}
	if after.Lock[LockTagRelation][AccessExclusiveLock].Shared != 1 {
		t.Fatalf("shared-table grants %+v", after.Lock[LockTagRelation][AccessExclusiveLock])
	}
}

func TestTrackTimingOff(t *testing.T) {
	SetTrackTiming(false)
	defer SetTrackTiming(true)
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	tag := TransactionTag(9)
	must(t, m.Lock(t.Context(), ps[0], tag, ExclusiveLock, LockOptions{}))
	_ = m.Lock(t.Context(), ps[1], tag, ShareLock, LockOptions{LockTimeout: 5 * time.Millisecond})
	st := ps[1].Stats().Lock[LockTagTransaction][ShareLock]
	if st.Waits != 1 || st.WaitTimeNs != 0 || st.WaitBuckets != [NumWaitBuckets]uint64{} {
		t.Fatalf("stats %+v", st)
	}
}

func TestWaitBucket(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0},
		{time.Microsecond, 0},
		{time.Microsecond + 1, 1},
		{3 * time.Microsecond, 2},
		{time.Millisecond, 9},
		{10 * time.Second, len(WaitBucketBounds) - 1},
		{10*time.Second + 1, len(WaitBucketBounds)},
		{time.Hour, NumWaitBuckets - 1},
	} {
		if got := waitBucket(c.d); got != c.want {
			t.Errorf("waitBucket(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	for i := 1; i < len(WaitBucketBounds); i++ {
		if WaitBucketBounds[i] <= WaitBucketBounds[i-1] {
			t.Fatalf("bounds not increasing at %d: %v", i, WaitBucketBounds)
		}
	}
}

// TestCloseReleasesEverything checks Close with transaction, session,
// fast-path, transferred and vxid locks.
func TestCloseReleasesEverything(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	p := ps[0]
	ctx := t.Context()
	m.BeginVirtualXact(p, 1)
	must(t, m.Lock(ctx, p, RelationTag(1, 1), AccessShareLock, LockOptions{}))
	must(t, m.Lock(ctx, p, RelationTag(1, 2), RowExclusiveLock, LockOptions{}))
	must(t, m.Lock(ctx, p, AdvisoryTag64(1, 1), ExclusiveLock, LockOptions{Session: true}))
	must(t, m.Lock(ctx, p, TransactionTag(5), ExclusiveLock, LockOptions{}))
	// Another backend forces a transfer of relation 2 and of the vxid.
	err := m.Lock(ctx, ps[1], RelationTag(1, 2), ShareLock, LockOptions{NoWait: true})
	if !errors.Is(err, ErrLockNotAvailable) {
		t.Fatal(err)
	}
	if err := m.Lock(ctx, ps[1], VirtualXidTag(p.Number(), 1), ShareLock, LockOptions{NoWait: true}); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatal(err)
	}
	if n := len(m.Status()); n != 5 {
		t.Fatalf("%d rows before close", n)
	}
	p.Close()
	if rows := m.Status(); len(rows) != 0 {
		t.Fatalf("rows after close: %+v", rows)
	}
	checkEmpty(t, m)
}

// checkEmpty verifies that the shared table and strong counters are empty
// and every quota is back.
func checkEmpty(t testing.TB, m *Manager) {
	t.Helper()
	var locks, quota, plQuota int64
	for i := range m.parts {
		part := &m.parts[i]
		part.lock.Acquire(nil, LWShared)
		locks += int64(len(part.locks) + len(part.procLocks))
		quota += part.lockQuota.Load()
		plQuota += part.procLockQuota.Load()
		part.lock.Release(nil)
	}
	if locks != 0 {
		t.Errorf("%d shared-table entries left", locks)
	}
	if c := int64(m.Capacity()); quota != c || plQuota != 2*c {
		t.Errorf("quotas %d/%d, want %d/%d", quota, plQuota, c, 2*c)
	}
	for i := range m.strong {
		if n := m.strong[i].Load(); n != 0 {
			t.Errorf("strong counter %d = %d", i, n)
		}
	}
}

func TestAllocations(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 1)
	p := ps[0]
	ctx := context.Background()
	rel := RelationTag(1, 1234)
	// Warm up the local table and the free lists.
	for i := 0; i < 10; i++ {
		must(t, m.Lock(ctx, p, rel, AccessShareLock, LockOptions{}))
		m.ReleaseTransactionLocks(p)
		must(t, m.Lock(ctx, p, TransactionTag(1), ExclusiveLock, LockOptions{}))
		m.Unlock(p, TransactionTag(1), ExclusiveLock, false)
	}
	if n := testing.AllocsPerRun(1000, func() {
		_ = m.Lock(ctx, p, rel, AccessShareLock, LockOptions{})
		m.Unlock(p, rel, AccessShareLock, false)
	}); n != 0 {
		t.Errorf("fast-path lock+unlock allocates %v", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		_ = m.Lock(ctx, p, TransactionTag(1), ExclusiveLock, LockOptions{})
		m.Unlock(p, TransactionTag(1), ExclusiveLock, false)
	}); n != 0 {
		t.Errorf("shared-table lock+unlock allocates %v", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		_ = m.Lock(ctx, p, rel, AccessShareLock, LockOptions{})
		_ = m.Lock(ctx, p, TransactionTag(1), ExclusiveLock, LockOptions{})
		m.ReleaseTransactionLocks(p)
	}); n != 0 {
		t.Errorf("lock + ReleaseTransactionLocks allocates %v", n)
	}
	var l LWLock
	if n := testing.AllocsPerRun(1000, func() { l.Acquire(p, LWExclusive); l.Release(p) }); n != 0 {
		t.Errorf("LWLock allocates %v", n)
	}
}
