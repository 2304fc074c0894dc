package txn

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lockd/locks"
)

func TestRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	c := e.write(t)
	e.commit(t, c)
	a := e.write(t)
	e.abort(a)
	r := e.write(t) // still running at shutdown
	ro := e.begin(t, ReadCommitted)
	ro.StatementSnapshot()
	next := e.m.NextXid()
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}

	m2, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	for xid, want := range map[Xid]XidStatus{c.Xid(): Committed, a.Xid(): Aborted, r.Xid(): Aborted} {
		if got := m2.Status(xid); got != want {
			t.Errorf("after restart Status(%d) = %v, want %v", xid, got, want)
		}
	}
	if got := m2.NextXid(); got != next {
		t.Fatalf("after clean restart NextXid = %d, want %d", got, next)
	}
	if m2.IsRunning(r.Xid()) {
		t.Fatal("xid of a transaction from before the restart runs")
	}
}

// TestCrash abandons a Manager after a Checkpoint without Close: xids in
// progress at the crash, and commits after the checkpoint (there is no
// WAL), read as aborted; assignment resumes beyond every xid handed out.
func TestCrash(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	c := e.write(t)
	e.commit(t, c)
	a := e.write(t)
	e.abort(a)
	r := e.write(t)
	if err := e.m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	late := e.write(t)
	e.commit(t, late) // after the checkpoint: lost in the crash
	highest := late.Xid()

	lm2, _ := locks.NewManager(locks.Config{})
	m2, err := Open(Config{DataDir: dir, Locks: lm2})
	if err != nil {
		t.Fatal(err)
	}
	for xid, want := range map[Xid]XidStatus{c.Xid(): Committed, a.Xid(): Aborted, r.Xid(): Aborted, late.Xid(): Aborted} {
		if got := m2.Status(xid); got != want {
			t.Errorf("after crash Status(%d) = %v, want %v", xid, got, want)
		}
	}
	if !Follows(m2.NextXid(), highest) {
		t.Fatalf("after crash NextXid = %d, not beyond %d", m2.NextXid(), highest)
	}
	p, _ := lm2.NewProc(1)
	defer p.Close()
	var tx Txn
	m2.Begin(&tx, p, ReadCommitted)
	if xid := mustAssign(t, &tx); !Follows(xid, highest) {
		t.Fatalf("new xid %d reuses one handed out before the crash (%d)", xid, highest)
	}
	if !Follows(m2.NextXid()+xidReserve, highest) {
		t.Fatal("bound not advanced")
	}
}

// TestCLOGSegments moves assignment across a segment boundary and checks
// that both segment files are written and read back.
func TestCLOGSegments(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	boundary := Xid(clogPagesPerSegment * clogXidsPerPage)
	e.m.xidGen.Acquire(nil, locks.LWExclusive)
	e.m.nextXid.Store(uint32(boundary - 2))
	e.m.xidGen.Release(nil)
	want := map[Xid]XidStatus{}
	for i := range 4 {
		tx := e.write(t)
		if i%2 == 0 {
			e.commit(t, tx)
			want[tx.Xid()] = Committed
		} else {
			e.abort(tx)
			want[tx.Xid()] = Aborted
		}
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"0000", "0001", nextXidFile} {
		if _, err := os.Stat(filepath.Join(dir, "pg_xact", name)); err != nil {
			t.Fatal(err)
		}
	}
	m2, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	for xid, st := range want {
		if got := m2.Status(xid); got != st {
			t.Errorf("Status(%d) = %v, want %v", xid, got, st)
		}
	}
	if got := m2.Status(boundary - 100); got != Aborted {
		t.Errorf("never-assigned xid below the bound reads %v, want aborted", got)
	}
}

func TestOpenErrors(t *testing.T) {
	lm, _ := locks.NewManager(locks.Config{})
	if _, err := Open(Config{}); err == nil {
		t.Error("Open without Locks succeeded")
	}
	tests := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"corrupt next xid", func(dir string) {
			os.WriteFile(filepath.Join(dir, nextXidFile), []byte("12345678"), 0o600)
		}, "corrupt"},
		{"missing segment", func(dir string) {
			os.WriteFile(filepath.Join(dir, "0001"), make([]byte, clogPageSize), 0o600)
		}, "missing"},
		{"bad segment size", func(dir string) {
			os.WriteFile(filepath.Join(dir, "0000"), make([]byte, 100), 0o600)
		}, "invalid size"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "pg_xact"), 0o700)
		tt.setup(filepath.Join(dir, "pg_xact"))
		_, err := Open(Config{DataDir: dir, Locks: lm})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestXidExhaustion(t *testing.T) {
	e := newEnv(t, Config{})
	e.m.xidGen.Acquire(nil, locks.LWExclusive)
	e.m.nextXid.Store(uint32(xidStopLimit))
	e.m.xidGen.Release(nil)
	tx := e.begin(t, ReadCommitted)
	_, err := tx.AssignXid()
	if err == nil || !strings.Contains(err.Error(), "wraparound") {
		t.Fatalf("AssignXid at the stop limit: %v", err)
	}
	tx.Abort()
}

// TestCheckpointConcurrent checkpoints while sessions commit; after a
// final Close every ended xid reads back as it ended.
func TestCheckpointConcurrent(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	const writers, iters = 4, 100
	txs := make([]*Txn, writers)
	for i := range txs {
		txs[i] = &Txn{}
		e.m.Begin(txs[i], e.proc(t), ReadCommitted)
		_ = txs[i].Commit()
	}
	done := make(chan struct{})
	ckptErr := make(chan error, 1)
	go func() {
		defer close(ckptErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := e.m.Checkpoint(); err != nil {
				ckptErr <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, tx := range txs {
		wg.Go(func() {
			for k := range iters {
				e.m.Begin(tx, tx.Proc(), ReadCommitted)
				if _, err := tx.AssignXid(); err != nil {
					t.Error(err)
					return
				}
				if k%3 == 0 {
					tx.Abort()
				} else {
					_ = tx.Commit()
				}
				e.lm.ReleaseTransactionLocks(tx.Proc())
			}
		})
	}
	wg.Wait()
	close(done)
	if err := <-ckptErr; err != nil {
		t.Fatal(err)
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	for x := FirstNormalXid; x < e.m.NextXid(); x++ {
		if got, want := m2.Status(x), e.m.Status(x); got != want {
			t.Fatalf("xid %d: %v after restart, was %v", x, got, want)
		}
	}
	if m2.NextXid() != e.m.NextXid() {
		t.Fatalf("NextXid %d after restart, was %d", m2.NextXid(), e.m.NextXid())
	}
}

// TestNextXidBoundAhead: the next-xid bound moves in the background before
// assignment reaches it, so the file always covers every xid handed out,
// assignment never has to write it itself once it runs, and a restart
// without Close resumes beyond everything assigned.
func TestNextXidBoundAhead(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	p := e.proc(t)
	var highest Xid
	for i := range 3 * xidReserve {
		var tx Txn
		e.m.Begin(&tx, p, ReadCommitted)
		highest = mustAssign(t, &tx)
		e.commit(t, &tx)
		if i%512 == 0 {
			bound, ok, err := readNextXid(e.m.fs, e.m.dir)
			if err != nil || !ok || !Precedes(highest, bound) {
				t.Fatalf("after xid %d the file holds %d (ok %v, err %v)", highest, bound, ok, err)
			}
		}
	}
	e.m.xidGen.Acquire(nil, locks.LWExclusive)
	e.m.waitRefill()
	limit := e.m.xidLimit
	e.m.xidGen.Release(nil)
	// Written ahead: more than half the reserve is left. Writing only when
	// assignment reached the bound would leave it anywhere from 0 to the
	// whole reserve (after 3 × xidReserve assignments: 1 past the last).
	if !Precedes(highest+xidReserve/2, limit) {
		t.Fatalf("bound %d only %d past the last xid %d", limit, limit-highest, highest)
	}
	if bound, _, _ := readNextXid(e.m.fs, e.m.dir); bound != limit {
		t.Fatalf("file holds %d, memory %d", bound, limit)
	}

	lm2, _ := locks.NewManager(locks.Config{})
	m2, err := Open(Config{DataDir: dir, Locks: lm2})
	if err != nil {
		t.Fatal(err)
	}
	if !Follows(m2.NextXid(), highest) {
		t.Fatalf("after crash NextXid = %d, not beyond %d", m2.NextXid(), highest)
	}
}
