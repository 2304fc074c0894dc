package locks

import (
	"flag"
	"testing"
	"time"
)

var long = flag.Bool("long", false, "run long stress tests")

func newTestManager(t testing.TB, cfg Config) *Manager {
	t.Helper()
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newTestProcs(t testing.TB, m *Manager, n int) []*Proc {
	t.Helper()
	procs := make([]*Proc, n)
	for i := range procs {
		p, err := m.NewProc(int32(1000 + i))
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = p
		t.Cleanup(p.Close)
	}
	return procs
}

// queueLen counts the waiters queued on l.
func (l *LWLock) queueLen() int {
	l.lockWaitList(nil)
	n := 0
	for w := l.head; w != nil; w = w.next {
		n++
	}
	l.unlockWaitList(0, 0)
	return n
}

// eventually polls cond until it holds or 10s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// withWakePolicy sets a wake rule and policy for the duration of a test.
func withWakePolicy(t testing.TB, rule WakeRule, wakeAll bool, limit int) {
	restore := saveWakePolicy()
	SetWakeupRule(rule)
	SetWakePolicy(wakeAll, limit)
	t.Cleanup(restore)
}

// saveWakePolicy returns a function that puts back the current wake rule
// and policy.
func saveWakePolicy() func() {
	rule := WakeupRule()
	wakeAll, limit := WakePolicy()
	return func() {
		SetWakeupRule(rule)
		SetWakePolicy(wakeAll, limit)
	}
}
