package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"

	"lockd/locks"
	"lockd/txn"
)

// env is a store with a real lock manager and transaction manager.
type env struct {
	t   testing.TB
	dir string
	lm  *locks.Manager
	tm  *txn.Manager
	s   *Store
	buf int
}

var nextPID atomic.Int32

func newEnv(t testing.TB, sharedBuffers int) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), buf: sharedBuffers}
	lm, err := locks.NewManager(locks.Config{MaxConnections: 100})
	if err != nil {
		t.Fatal(err)
	}
	e.lm = lm
	tm, err := txn.Open(txn.Config{Locks: lm, DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	e.tm = tm
	e.open()
	t.Cleanup(func() {
		if e.s != nil {
			e.s.Close(nil)
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	s, err := Open(Config{DataDir: e.dir, SharedBuffers: e.buf, Locks: e.lm, Txns: e.tm, DatabaseOID: 5})
	if err != nil {
		e.t.Fatal(err)
	}
	e.s = s
}

// restart closes the store (checkpoint) and the transaction manager, and
// opens both again.
func (e *env) restart() {
	e.t.Helper()
	if err := e.s.Close(nil); err != nil {
		e.t.Fatal(err)
	}
	e.s = nil
	if err := e.tm.Close(); err != nil {
		e.t.Fatal(err)
	}
	tm, err := txn.Open(txn.Config{Locks: e.lm, DataDir: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	e.tm = tm
	e.open()
}

// backend is one session: a proc and its transaction.
type session struct {
	e  *env
	p  *locks.Proc
	tx txn.Txn
}

func (e *env) session() *session {
	e.t.Helper()
	p, err := e.lm.NewProc(1000 + nextPID.Add(1))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(p.Close)
	return &session{e: e, p: p}
}

func (s *session) begin(iso txn.Isolation) *txn.Txn {
	s.e.tm.Begin(&s.tx, s.p, iso)
	return &s.tx
}

func (s *session) commit() {
	if err := s.tx.Commit(); err != nil {
		s.e.t.Fatal(err)
	}
	s.e.lm.ReleaseTransactionLocks(s.p)
}

func (s *session) abort() {
	s.tx.Abort()
	s.e.lm.ReleaseTransactionLocks(s.p)
}

// row makes a test tuple: an id and padding.
func row(id uint64, size int) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint64(b, id)
	for i := 8; i < size; i++ {
		b[i] = byte(id + uint64(i))
	}
	return b
}

func rowID(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

func checkRow(b []byte) error {
	id := rowID(b)
	for i := 8; i < len(b); i++ {
		if b[i] != byte(id+uint64(i)) {
			return fmt.Errorf("row %d corrupt at byte %d", id, i)
		}
	}
	return nil
}

func key(id uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return b[:]
}

var bg = context.Background()
