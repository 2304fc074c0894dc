package txn

import (
	"testing"
	"time"

	"lockd/locks"
)

// testEnv is a Manager over a real lock manager.
type testEnv struct {
	m       *Manager
	lm      *locks.Manager
	nextPID int32
}

func newEnv(t testing.TB, cfg Config) *testEnv {
	t.Helper()
	if cfg.Locks == nil {
		lm, err := locks.NewManager(locks.Config{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Locks = lm
	}
	m, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.WaitWrites) // no write of the next-xid bound outlives the test's directory
	return &testEnv{m: m, lm: cfg.Locks, nextPID: 1000}
}

func (e *testEnv) proc(t testing.TB) *locks.Proc {
	t.Helper()
	e.nextPID++
	p, err := e.lm.NewProc(e.nextPID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// begin starts a transaction in a new session.
func (e *testEnv) begin(t testing.TB, iso Isolation) *Txn {
	t.Helper()
	tx := new(Txn)
	e.m.Begin(tx, e.proc(t), iso)
	return tx
}

// write starts a transaction in a new session and gives it an xid.
func (e *testEnv) write(t testing.TB) *Txn {
	t.Helper()
	tx := e.begin(t, ReadCommitted)
	mustAssign(t, tx)
	return tx
}

func mustAssign(t testing.TB, tx *Txn) Xid {
	t.Helper()
	xid, err := tx.AssignXid()
	if err != nil {
		t.Fatal(err)
	}
	return xid
}

// commit commits and releases the transaction's locks, as a session does.
func (e *testEnv) commit(t testing.TB, tx *Txn) {
	t.Helper()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	e.lm.ReleaseTransactionLocks(tx.Proc())
}

func (e *testEnv) abort(tx *Txn) {
	tx.Abort()
	e.lm.ReleaseTransactionLocks(tx.Proc())
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
