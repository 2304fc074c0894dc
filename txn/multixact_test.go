package txn

import (
	"fmt"
	"testing"
)

// TestTupleLockConflicts is PostgreSQL's "Conflicting Row-Level Locks"
// table.
func TestTupleLockConflicts(t *testing.T) {
	const ks, sh, nku, fu = LockTupleKeyShare, LockTupleShare, LockTupleNoKeyExclusive, LockTupleExclusive
	want := map[TupleLockMode][]TupleLockMode{
		ks:  {fu},
		sh:  {nku, fu},
		nku: {sh, nku, fu},
		fu:  {ks, sh, nku, fu},
	}
	for a, conflicts := range want {
		for b := ks; b <= fu; b++ {
			exp := false
			for _, c := range conflicts {
				exp = exp || c == b
			}
			if got := a.Conflicts(b); got != exp {
				t.Errorf("%s vs %s: conflict %v, want %v", a, b, got, exp)
			}
		}
	}
	for s, m := range map[MultiStatus]TupleLockMode{MultiForKeyShare: ks, MultiForShare: sh, MultiForNoKeyUpdate: nku,
		MultiForUpdate: fu, MultiNoKeyUpdate: nku, MultiUpdate: fu} {
		if s.Mode() != m || s.IsUpdate() != (s >= MultiNoKeyUpdate) {
			t.Errorf("status %v: mode %v update %v", s, s.Mode(), s.IsUpdate())
		}
	}
}

// TestMultiXactStore: members come back as stored, survive a clean
// restart and a checkpoint followed by a crash (ids assigned after the
// checkpoint read as empty and are not reused), and are forgotten below a
// truncation cutoff.
func TestMultiXactStore(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	var want [][]MultiMember
	var ids []MultiXactID
	for i := 0; i < 3000; i++ { // several offset and member pages
		mems := make([]MultiMember, 1+i%3)
		for j := range mems {
			mems[j] = MultiMember{Xid: Xid(1000 + i*3 + j), Status: MultiStatus(j % 6)}
		}
		id, err := e.m.multis.create(nil, mems, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		want = append(want, mems)
	}
	check := func(m *Manager, what string) {
		t.Helper()
		for i, id := range ids {
			if got := m.MultiMembers(id, nil); fmt.Sprint(got) != fmt.Sprint(want[i]) {
				t.Fatalf("%s: multixact %d = %v, want %v", what, id, got, want[i])
			}
		}
	}
	check(e.m, "in memory")
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	check(m2, "after a clean restart")
	if m2.NextMultiXactID() != ids[len(ids)-1]+1 {
		t.Fatalf("next multixact %d after restart", m2.NextMultiXactID())
	}

	// Crash: created after the checkpoint, lost, not reused.
	if err := m2.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	lost, err := m2.multis.create(nil, []MultiMember{{Xid: 5, Status: MultiUpdate}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	check(m3, "after checkpoint and crash")
	if got := m3.MultiMembers(lost, nil); len(got) != 0 {
		t.Fatalf("lost multixact has members %v", got)
	}
	if next := m3.NextMultiXactID(); next <= lost {
		t.Fatalf("next multixact %d reuses lost %d", next, lost)
	}

	cut := ids[2500]
	m3.TruncateMultis(cut)
	if got := m3.MultiMembers(ids[10], nil); len(got) != 0 {
		t.Fatalf("truncated multixact has members %v", got)
	}
	if got := m3.MultiMembers(ids[2600], nil); fmt.Sprint(got) != fmt.Sprint(want[2600]) {
		t.Fatalf("kept multixact: %v", got)
	}
	if err := m3.Close(); err != nil {
		t.Fatal(err)
	}
	m4, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	if m4.OldestMultiXactID() != cut || len(m4.MultiMembers(ids[2600], nil)) != len(want[2600]) {
		t.Fatalf("after truncation and restart: oldest %d", m4.OldestMultiXactID())
	}
}

// TestMultiTruncationLimit: a running transaction's multixacts bound the
// truncation cutoff until it ends.
func TestMultiTruncationLimit(t *testing.T) {
	e := newEnv(t, Config{})
	a, b := e.write(t), e.write(t)
	h := TupleHeader{Xmin: FrozenXid, Xmax: a.Xid(), Flags: XmaxLockOnly | XmaxKeyShrLock}
	xmax, f, _, err := b.NewXmax(&h, LockTupleKeyShare, false)
	if err != nil || f&XmaxIsMulti == 0 {
		t.Fatalf("NewXmax: %d %#x %v", xmax, f, err)
	}
	if got := e.m.MultiTruncationLimit(); got != MultiXactID(xmax) {
		t.Fatalf("limit %d while its creator runs, want %d", got, xmax)
	}
	e.commit(t, b)
	if got := e.m.MultiTruncationLimit(); got != e.m.NextMultiXactID() {
		t.Fatalf("limit %d after its creator ended", got)
	}
	e.commit(t, a)
}

// TestNewXmax covers compute_new_xmax_infomask's cases.
func TestNewXmax(t *testing.T) {
	e := newEnv(t, Config{})
	committed := e.write(t)
	cx := committed.Xid()
	e.commit(t, committed)
	other := e.write(t)
	ox := other.Xid()
	me := e.write(t)
	mx := me.Xid()
	type res struct {
		multi         bool
		xmax          Xid
		flags, flags2 uint16
	}
	const lo, ks, sh, ex, ku = XmaxLockOnly, XmaxKeyShrLock, XmaxShrLock, XmaxExclLock, KeysUpdated
	tests := []struct {
		name   string
		h      TupleHeader
		mode   TupleLockMode
		update bool
		want   res
		mems   string
	}{
		{"fresh key share", TupleHeader{Flags: XmaxInvalid}, LockTupleKeyShare, false, res{false, mx, lo | ks, 0}, ""},
		{"fresh for update", TupleHeader{Flags: XmaxInvalid}, LockTupleExclusive, false, res{false, mx, lo | ex, ku}, ""},
		{"fresh key update", TupleHeader{Flags: XmaxInvalid}, LockTupleExclusive, true, res{false, mx, 0, ku}, ""},
		{"fresh no-key update", TupleHeader{Flags: XmaxInvalid}, LockTupleNoKeyExclusive, true, res{false, mx, 0, 0}, ""},
		{"own weaker lock upgraded", TupleHeader{Xmax: mx, Flags: lo | ks}, LockTupleShare, false, res{false, mx, lo | sh, 0}, ""},
		{"own stronger lock kept", TupleHeader{Xmax: mx, Flags: lo | ex, Flags2: ku}, LockTupleKeyShare, false, res{false, mx, lo | ex, ku}, ""},
		{"running locker joins", TupleHeader{Xmax: ox, Flags: lo | sh}, LockTupleShare, false, res{true, 0, lo | sh | XmaxIsMulti, 0},
			fmt.Sprintf("[{%d sh} {%d sh}]", ox, mx)},
		{"key share beside a no-key updater", TupleHeader{Xmax: ox}, LockTupleKeyShare, false, res{true, 0, ex | XmaxIsMulti, 0},
			fmt.Sprintf("[{%d nokeyupd} {%d keysh}]", ox, mx)},
		{"committed updater kept", TupleHeader{Xmax: cx, Flags: XmaxCommitted}, LockTupleKeyShare, false, res{true, 0, ex | XmaxIsMulti, 0},
			fmt.Sprintf("[{%d nokeyupd} {%d keysh}]", cx, mx)},
		{"ended locker dropped", TupleHeader{Xmax: cx, Flags: lo | ks}, LockTupleKeyShare, false, res{false, mx, lo | ks, 0}, ""},
	}
	for _, tt := range tests {
		h := tt.h
		h.Xmin = FrozenXid
		xmax, f, f2, err := me.NewXmax(&h, tt.mode, tt.update)
		if err != nil {
			t.Fatal(err)
		}
		got := res{f&XmaxIsMulti != 0, xmax, f, f2}
		if got.multi {
			got.xmax = 0
		}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if tt.mems != "" {
			if mems := fmt.Sprint(e.m.MultiMembers(MultiXactID(xmax), nil)); mems != tt.mems {
				t.Errorf("%s: members %s, want %s", tt.name, mems, tt.mems)
			}
		}
	}
	e.commit(t, other)
	e.commit(t, me)
}
