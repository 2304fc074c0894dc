package locks

import (
	"context"
	"testing"
)

// holds returns p's transaction-level and session-level counts of tag/mode.
func holdsCounts(m *Manager, p *Proc, tag LockTag, mode LockMode) [2]int {
	tx, sess := m.Holds(p, tag, mode)
	return [2]int{tx, sess}
}

func TestReleaseSince(t *testing.T) {
	ctx := context.Background()
	relA, relB := RelationTag(5, 16384), RelationTag(5, 16385)
	adv := AdvisoryTag64(5, 42)
	advX := AdvisoryTag64(5, 43)
	tup := TupleTag(5, 16384, 0, 1)
	type step func(t *testing.T, m *Manager, p *Proc, marks map[string]LockMark)
	lock := func(tag LockTag, mode LockMode, opt LockOptions) step {
		return func(t *testing.T, m *Manager, p *Proc, _ map[string]LockMark) {
			must(t, m.Lock(ctx, p, tag, mode, opt))
		}
	}
	unlock := func(tag LockTag, mode LockMode) step {
		return func(t *testing.T, m *Manager, p *Proc, _ map[string]LockMark) {
			if !m.Unlock(p, tag, mode, false) {
				t.Fatalf("Unlock %s: not held", tag.Describe())
			}
		}
	}
	mark := func(name string) step {
		return func(t *testing.T, m *Manager, p *Proc, marks map[string]LockMark) { marks[name] = m.Mark(p) }
	}
	rollback := func(name string) step {
		return func(t *testing.T, m *Manager, p *Proc, marks map[string]LockMark) { m.ReleaseSince(p, marks[name]) }
	}
	keep := func(name string) step {
		return func(t *testing.T, m *Manager, p *Proc, marks map[string]LockMark) { m.KeepSince(p, marks[name]) }
	}
	type held struct {
		tag  LockTag
		mode LockMode
		want [2]int // transaction, session counts
	}
	tests := []struct {
		name  string
		steps []step
		want  []held
	}{
		{"lock taken after the mark is released", []step{
			mark("a"), lock(relA, RowExclusiveLock, LockOptions{}), rollback("a"),
		}, []held{{relA, RowExclusiveLock, [2]int{0, 0}}}},
		{"lock held before and after keeps one count", []step{
			lock(relA, RowExclusiveLock, LockOptions{}), mark("a"),
			lock(relA, RowExclusiveLock, LockOptions{}), lock(relA, RowExclusiveLock, LockOptions{}), rollback("a"),
		}, []held{{relA, RowExclusiveLock, [2]int{1, 0}}}},
		{"strong, advisory and tuple locks after the mark", []step{
			mark("a"), lock(relB, AccessExclusiveLock, LockOptions{}), lock(advX, ExclusiveLock, LockOptions{}),
			lock(tup, ExclusiveLock, LockOptions{}), rollback("a"),
		}, []held{{relB, AccessExclusiveLock, [2]int{0, 0}}, {advX, ExclusiveLock, [2]int{0, 0}}, {tup, ExclusiveLock, [2]int{0, 0}}}},
		{"session and unlogged counts stay", []step{
			mark("a"), lock(adv, ExclusiveLock, LockOptions{Session: true}), lock(adv, ExclusiveLock, LockOptions{}),
			lock(TransactionTag(900), ExclusiveLock, LockOptions{Unlogged: true}), rollback("a"),
		}, []held{{adv, ExclusiveLock, [2]int{0, 1}}, {TransactionTag(900), ExclusiveLock, [2]int{1, 0}}}},
		{"released level's locks go with the enclosing rollback", []step{
			mark("a"), lock(relA, AccessShareLock, LockOptions{}), mark("b"), lock(relB, ShareLock, LockOptions{}),
			keep("b"), rollback("a"),
		}, []held{{relA, AccessShareLock, [2]int{0, 0}}, {relB, ShareLock, [2]int{0, 0}}}},
		{"inner rollback keeps the outer level's locks", []step{
			mark("a"), lock(relA, AccessShareLock, LockOptions{}), mark("b"), lock(relB, ShareLock, LockOptions{}),
			rollback("b"),
		}, []held{{relA, AccessShareLock, [2]int{1, 0}}, {relB, ShareLock, [2]int{0, 0}}}},
		{"rollback to an outer mark closes inner levels", []step{
			mark("a"), lock(relA, AccessShareLock, LockOptions{}), mark("b"), lock(relB, ShareLock, LockOptions{}),
			rollback("a"),
		}, []held{{relA, AccessShareLock, [2]int{0, 0}}, {relB, ShareLock, [2]int{0, 0}}}},
		{"locks taken and given back inside the level", []step{
			mark("a"), lock(TransactionTag(901), ShareLock, LockOptions{}), unlock(TransactionTag(901), ShareLock),
			lock(relA, AccessShareLock, LockOptions{}), rollback("a"),
		}, []held{{TransactionTag(901), ShareLock, [2]int{0, 0}}, {relA, AccessShareLock, [2]int{0, 0}}}},
		{"unlock of an outer level's count leaves a tombstone", []step{
			mark("a"), lock(relA, AccessShareLock, LockOptions{}), mark("b"), lock(relB, AccessShareLock, LockOptions{}),
			unlock(relA, AccessShareLock), lock(tup, ShareLock, LockOptions{}), rollback("b"),
		}, []held{{relA, AccessShareLock, [2]int{0, 0}}, {relB, AccessShareLock, [2]int{0, 0}}, {tup, ShareLock, [2]int{0, 0}}}},
		{"unlock of a count from before the mark", []step{
			lock(relA, AccessShareLock, LockOptions{}), mark("a"), unlock(relA, AccessShareLock),
			lock(relB, AccessShareLock, LockOptions{}), rollback("a"),
		}, []held{{relA, AccessShareLock, [2]int{0, 0}}, {relB, AccessShareLock, [2]int{0, 0}}}},
		{"a rolled-back level can be opened again", []step{
			mark("a"), lock(relA, AccessShareLock, LockOptions{}), rollback("a"), mark("a"),
			lock(relB, AccessShareLock, LockOptions{}), rollback("a"), lock(tup, ShareLock, LockOptions{}),
		}, []held{{relA, AccessShareLock, [2]int{0, 0}}, {relB, AccessShareLock, [2]int{0, 0}}, {tup, ShareLock, [2]int{1, 0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, Config{})
			p := newTestProcs(t, m, 1)[0]
			marks := map[string]LockMark{}
			for _, s := range tt.steps {
				s(t, m, p, marks)
			}
			for _, h := range tt.want {
				if got := holdsCounts(m, p, h.tag, h.mode); got != h.want {
					t.Errorf("%s %s: holds %v, want %v", h.tag.Describe(), h.mode, got, h.want)
				}
			}
			m.ReleaseTransactionLocks(p)
			m.ReleaseSessionLocks(p, false)
			if p.local.n != 0 || len(p.lockLog) != 0 || p.marks != 0 {
				t.Fatalf("after release: %d local entries, log %d, marks %d", p.local.n, len(p.lockLog), p.marks)
			}
		})
	}
}

// TestReleaseSinceWakesWaiter: a lock taken after a mark, released by
// ReleaseSince, is granted to the backend queued for it; the strong-lock
// counter is dropped so weak lockers use the fast path again.
func TestReleaseSinceWakesWaiter(t *testing.T) {
	ctx := context.Background()
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 2)
	rel := RelationTag(5, 16384)
	mk := m.Mark(ps[0])
	must(t, m.Lock(ctx, ps[0], rel, AccessExclusiveLock, LockOptions{}))
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx, ps[1], rel, AccessShareLock, LockOptions{}) }()
	eventually(t, "waiter to queue", func() bool { _, n := ps[1].WaitEvent(); return n == "relation" })
	m.ReleaseSince(ps[0], mk)
	must(t, <-done)
	m.ReleaseTransactionLocks(ps[1])
	before := ps[1].Stats().FastPath.Acquisitions
	must(t, m.Lock(ctx, ps[1], rel, AccessShareLock, LockOptions{}))
	if ps[1].Stats().FastPath.Acquisitions != before+1 {
		t.Fatal("strong-lock counter not dropped: weak lock missed the fast path")
	}
}

func TestReleaseSincePanicsOnClosedMark(t *testing.T) {
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	mk := m.Mark(p)
	m.ReleaseTransactionLocks(p)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	m.ReleaseSince(p, mk)
}

// TestLockInSubxactNoAlloc: with a subtransaction open, taking and giving
// back locks does not allocate once the log has grown.
func TestLockInSubxactNoAlloc(t *testing.T) {
	ctx := context.Background()
	m := newTestManager(t, Config{})
	p := newTestProcs(t, m, 1)[0]
	rel, xid := RelationTag(5, 16384), TransactionTag(77)
	run := func() {
		mk := m.Mark(p)
		_ = m.Lock(ctx, p, rel, AccessShareLock, LockOptions{})
		_ = m.Lock(ctx, p, xid, ShareLock, LockOptions{})
		m.Unlock(p, xid, ShareLock, false)
		m.ReleaseSince(p, mk)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per subtransaction", n)
	}
}
