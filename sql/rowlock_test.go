package sql

import (
	"context"
	"errors"
	"testing"
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// rowLockEngine is an Engine over a fresh data directory, without a server.
func rowLockEngine(t *testing.T) *Engine {
	t.Helper()
	dir := t.TempDir()
	reg := guc.NewRegistry(nil)
	lm, err := locks.NewManager(locks.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tm, err := txn.Open(txn.Config{DataDir: dir, Locks: lm})
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(storage.Config{DataDir: dir, SharedBuffers: 64, Locks: lm, Txns: tm, DatabaseOID: catalog.DatabaseOID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(nil) })
	e, err := NewEngine(EngineConfig{Settings: reg, Locks: lm, Txns: tm, Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var testPIDs int32 = 500

func (e *Engine) testSession(t *testing.T) *Session {
	t.Helper()
	gs, errs := e.settings.NewSession(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	testPIDs++
	s, err := e.NewSession(SessionInfo{PID: testPIDs, User: "postgres", Database: "postgres", Settings: gs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// exec runs a simple-protocol query string.
func (s *Session) exec(query string) error {
	sts, params, err := s.Parse(query)
	if err != nil {
		s.Fail()
		return err
	}
	defer s.Sync()
	for _, st := range sts {
		st, err := s.Resolve(st)
		if err != nil {
			s.Fail()
			return err
		}
		if _, err := s.Execute(context.Background(), st, params, func([]types.Datum) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

func mustExec(t *testing.T, s *Session, query string) {
	t.Helper()
	if err := s.exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// visibleTID returns the TID of the row with id = 1 in s's snapshot.
func visibleTID(t *testing.T, s *Session, tab *catalog.TableDef) storage.TID {
	t.Helper()
	s.Txn.StatementSnapshot()
	var found storage.TID
	err := s.eng.store.Scan(context.Background(), s.Proc, &s.Txn, storage.RelID(tab.RelFile), func(tid storage.TID, _ []byte) error {
		found = tid
		return nil
	})
	if err != nil || !found.Valid() {
		t.Fatalf("no row: %v", err)
	}
	return found
}

// TestLockRow: the FOR KEY SHARE lock of a foreign-key check is granted at
// once beside a non-key UPDATE in progress, a key UPDATE waits for it, and
// NOWAIT and SKIP LOCKED callers are told instead of waiting.
func TestLockRow(t *testing.T) {
	e := rowLockEngine(t)
	a, b, c := e.testSession(t), e.testSession(t), e.testSession(t)
	mustExec(t, a, "create table tellers (tid int primary key, tbalance int)")
	mustExec(t, a, "insert into tellers values (1, 0)")
	tab := a.Cat().Table("tellers")

	mustExec(t, a, "begin")
	mustExec(t, a, "update tellers set tbalance = tbalance + 5 where tid = 1")

	mustExec(t, b, "begin")
	ec := &expr.EvalCtx{B: &b.Backend, Ctx: context.Background()}
	tid := visibleTID(t, b, tab)
	done := make(chan error, 1)
	go func() {
		locked, _, _, err := b.LockRow(ec, tab, tid, txn.LockTupleKeyShare, storage.WaitBlock, nil)
		if err == nil && !locked {
			err = errors.New("not locked")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("FOR KEY SHARE waited for a non-key update")
	}

	mustExec(t, c, "begin")
	cec := &expr.EvalCtx{B: &c.Backend, Ctx: context.Background()}
	ctid := visibleTID(t, c, tab)
	_, _, _, err := c.LockRow(cec, tab, ctid, txn.LockTupleShare, storage.WaitError, nil)
	if pe := pgerr.From(err); pe == nil || pe.Code != pgerr.LockNotAvailable || pe.Message != `could not obtain lock on row in relation "tellers"` {
		t.Fatalf("NOWAIT: %v", err)
	}
	locked, _, _, err := c.LockRow(cec, tab, ctid, txn.LockTupleShare, storage.WaitSkip, nil)
	if err != nil || locked {
		t.Fatalf("SKIP LOCKED: locked %v, %v", locked, err)
	}
	mustExec(t, c, "rollback")

	// A's key update of its own new version waits for B's key-share lock,
	// which the update chain carried to that version.
	go func() { done <- a.exec("update tellers set tid = 2 where tid = 1") }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, n := a.Proc.WaitEvent(); n == "transactionid" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("key update did not wait for the key-share lock")
		}
		time.Sleep(time.Millisecond)
	}
	mustExec(t, b, "commit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, a, "commit")
}

// TestLockRowFollowsUpdate: under READ COMMITTED a FOR UPDATE of a version
// that a committed transaction replaced locks the newest version, if it
// still qualifies; under REPEATABLE READ it is a serialization failure.
func TestLockRowFollowsUpdate(t *testing.T) {
	e := rowLockEngine(t)
	a, b := e.testSession(t), e.testSession(t)
	mustExec(t, a, "create table acc (id int primary key, bal int)")
	mustExec(t, a, "insert into acc values (1, 100)")
	tab := a.Cat().Table("acc")

	for _, iso := range []string{"read committed", "repeatable read"} {
		mustExec(t, b, "begin isolation level "+iso)
		tid := visibleTID(t, b, tab)
		mustExec(t, a, "update acc set bal = bal + 1")
		ec := &expr.EvalCtx{B: &b.Backend, Ctx: context.Background()}
		locked, lt, row, err := b.LockRow(ec, tab, tid, txn.LockTupleExclusive, storage.WaitBlock, func(r []types.Datum) (bool, error) { return r[1].I > 100, nil })
		if iso == "repeatable read" {
			if pe := pgerr.From(err); pe == nil || pe.Code != pgerr.SerializationFailure {
				t.Fatalf("%s: %v", iso, err)
			}
		} else if err != nil || !locked || lt == tid || row[1].I != 101 {
			t.Fatalf("%s: locked %v at %v (was %v) row %v, %v", iso, locked, lt, tid, row, err)
		}
		mustExec(t, b, "rollback")
	}
}
