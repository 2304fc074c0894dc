package txn

import (
	"fmt"
	"testing"
)

// visFixture is a reader transaction (own xid, command id 2, one statement
// snapshot) and other transactions whose xids ended up in every state
// relative to that snapshot.
type visFixture struct {
	e      *testEnv
	reader *Txn
	own    Xid
	cb     Xid // committed before the snapshot
	ab     Xid // aborted before the snapshot
	run    Xid // still running
	runTx  *Txn
	ca     Xid // running at the snapshot, committed since
	sa     Xid // started and committed after the snapshot
}

func newVisFixture(t *testing.T, iso Isolation) *visFixture {
	e := newEnv(t, Config{})
	f := &visFixture{e: e}

	tx := e.write(t)
	f.cb = tx.Xid()
	e.commit(t, tx)

	tx = e.write(t)
	f.ab = tx.Xid()
	e.abort(tx)

	f.runTx = e.write(t)
	f.run = f.runTx.Xid()
	ca := e.write(t)
	f.ca = ca.Xid()

	f.reader = e.begin(t, iso)
	f.own = mustAssign(t, f.reader)
	f.reader.CommandCounterIncrement()
	f.reader.CommandCounterIncrement()
	f.reader.StatementSnapshot()

	e.commit(t, ca)
	tx = e.write(t)
	f.sa = tx.Xid()
	e.commit(t, tx)
	return f
}

func TestSnapshotContents(t *testing.T) {
	f := newVisFixture(t, RepeatableRead)
	s := f.reader.StatementSnapshot()
	if s.Xmin != f.run || s.Xmax != f.own+1 {
		t.Errorf("xmin %d xmax %d, want %d %d", s.Xmin, s.Xmax, f.run, f.own+1)
	}
	if fmt.Sprint(s.Xip) != fmt.Sprint([]Xid{f.run, f.ca}) {
		t.Errorf("xip %v, want [%d %d] (own %d excluded)", s.Xip, f.run, f.ca, f.own)
	}
	for xid, want := range map[Xid]bool{f.cb: false, f.ab: false, f.run: true, f.ca: true, f.sa: true, FrozenXid: false} {
		if got := s.XidInProgress(xid); got != want {
			t.Errorf("XidInProgress(%d) = %v, want %v", xid, got, want)
		}
	}
}

func TestVisible(t *testing.T) {
	f := newVisFixture(t, ReadCommitted)
	own, cb, ab, run, ca, sa := f.own, f.cb, f.ab, f.run, f.ca, f.sa
	const xc, xi, mc, mi, lo = XminCommitted, XminInvalid, XmaxCommitted, XmaxInvalid, XmaxLockOnly
	tests := []struct {
		name      string
		h         TupleHeader
		want      bool
		wantFlags uint16
	}{
		{"committed insert", TupleHeader{Xmin: cb}, true, xc},
		{"aborted insert", TupleHeader{Xmin: ab}, false, xi},
		{"running insert", TupleHeader{Xmin: run}, false, 0},
		{"insert committed after snapshot", TupleHeader{Xmin: ca}, false, 0},
		{"insert started after snapshot", TupleHeader{Xmin: sa}, false, 0},
		{"invalid xmin", TupleHeader{Xmin: InvalidXid}, false, 0},
		{"frozen xid", TupleHeader{Xmin: FrozenXid}, true, 0},
		{"frozen flags", TupleHeader{Xmin: ca, Flags: XminFrozen}, true, XminFrozen},
		{"own insert, earlier command", TupleHeader{Xmin: own, Cmin: 1}, true, 0},
		{"own insert, this command", TupleHeader{Xmin: own, Cmin: 2}, false, 0},
		{"own insert, own delete earlier", TupleHeader{Xmin: own, Xmax: own, Cmax: 1}, false, 0},
		{"own insert, own delete this command", TupleHeader{Xmin: own, Xmax: own, Cmax: 2}, true, 0},
		{"own insert, own row lock", TupleHeader{Xmin: own, Xmax: own, Flags: lo}, true, lo},
		{"committed delete", TupleHeader{Xmin: cb, Xmax: cb}, false, xc | mc},
		{"aborted delete", TupleHeader{Xmin: cb, Xmax: ab}, true, xc | mi},
		{"running delete", TupleHeader{Xmin: cb, Xmax: run}, true, xc},
		{"delete committed after snapshot", TupleHeader{Xmin: cb, Xmax: ca}, true, xc},
		{"delete started after snapshot", TupleHeader{Xmin: cb, Xmax: sa}, true, xc},
		{"own delete, earlier command", TupleHeader{Xmin: cb, Xmax: own, Cmax: 1}, false, xc},
		{"own delete, this command", TupleHeader{Xmin: cb, Xmax: own, Cmax: 2}, true, xc},
		{"committed row lock", TupleHeader{Xmin: cb, Xmax: cb, Flags: lo}, true, xc | lo},
		{"running row lock", TupleHeader{Xmin: cb, Xmax: run, Flags: lo}, true, xc | lo},
		{"hint xmin committed, not in snapshot", TupleHeader{Xmin: ca, Flags: xc}, false, xc},
		{"hint xmin invalid", TupleHeader{Xmin: cb, Flags: xi}, false, xi},
		{"hint xmax invalid", TupleHeader{Xmin: cb, Xmax: cb, Flags: xc | mi}, true, xc | mi},
		{"hint xmax committed, not in snapshot", TupleHeader{Xmin: cb, Xmax: ca, Flags: xc | mc}, true, xc | mc},
		{"hint xmax committed", TupleHeader{Xmin: cb, Xmax: cb, Flags: xc | mc}, false, xc | mc},
	}
	for _, tt := range tests {
		h := tt.h
		if got := f.reader.Visible(&h); got != tt.want || h.Flags != tt.wantFlags {
			t.Errorf("%s: Visible = %v flags %#x, want %v flags %#x", tt.name, got, h.Flags, tt.want, tt.wantFlags)
		}
	}
}

// TestVisibleIsolation: a later statement sees commits that happened after
// the first statement's snapshot under READ COMMITTED, not under
// REPEATABLE READ; both see their own earlier commands.
func TestVisibleIsolation(t *testing.T) {
	for _, iso := range []Isolation{ReadCommitted, RepeatableRead} {
		t.Run(iso.String(), func(t *testing.T) {
			f := newVisFixture(t, iso)
			f.reader.StatementSnapshot() // next statement
			wantNew := iso == ReadCommitted
			for _, tt := range []struct {
				h    TupleHeader
				want bool
			}{
				{TupleHeader{Xmin: f.ca}, wantNew},
				{TupleHeader{Xmin: f.sa}, wantNew},
				{TupleHeader{Xmin: f.cb, Xmax: f.ca}, !wantNew},
				{TupleHeader{Xmin: f.run}, false},
				{TupleHeader{Xmin: f.own, Cmin: 1}, true},
			} {
				h := tt.h
				if got := f.reader.Visible(&h); got != tt.want {
					t.Errorf("%+v: Visible = %v, want %v", tt.h, got, tt.want)
				}
			}
			// The running transaction commits: only READ COMMITTED's next
			// statement sees its insert.
			f.e.commit(t, f.runTx)
			f.reader.CommandCounterIncrement()
			if cid := f.reader.CommandID(); cid != 3 {
				t.Fatalf("CommandID = %d", cid)
			}
			f.reader.StatementSnapshot()
			h := TupleHeader{Xmin: f.run}
			if got := f.reader.Visible(&h); got != wantNew {
				t.Errorf("insert of transaction committed before statement 3: Visible = %v, want %v", got, wantNew)
			}
		})
	}
}

func TestSatisfiesUpdate(t *testing.T) {
	f := newVisFixture(t, ReadCommitted)
	own, cb, ab, run, ca := f.own, f.cb, f.ab, f.run, f.ca
	const xc, xi, mc, mi, lo, up = XminCommitted, XminInvalid, XmaxCommitted, XmaxInvalid, XmaxLockOnly, Updated
	tests := []struct {
		name      string
		h         TupleHeader
		want      UpdateResult
		wantXid   Xid
		wantFlags uint16
	}{
		{"committed insert", TupleHeader{Xmin: cb}, TMOk, 0, xc},
		{"aborted insert", TupleHeader{Xmin: ab}, TMInvisible, 0, xi},
		{"running insert", TupleHeader{Xmin: run}, TMInvisible, 0, 0},
		{"insert committed after snapshot", TupleHeader{Xmin: ca}, TMOk, 0, xc},
		{"own insert, this command", TupleHeader{Xmin: own, Cmin: 2}, TMInvisible, 0, 0},
		{"own insert, earlier command", TupleHeader{Xmin: own, Cmin: 1}, TMOk, 0, 0},
		{"own insert, updated by this command", TupleHeader{Xmin: own, Xmax: own, Cmax: 2}, TMSelfModified, own, 0},
		{"own insert, updated earlier", TupleHeader{Xmin: own, Xmax: own, Cmax: 1}, TMInvisible, 0, 0},
		{"own insert, locked by running", TupleHeader{Xmin: own, Xmax: run, Flags: lo}, TMBeingModified, run, lo},
		{"own insert, own row lock", TupleHeader{Xmin: own, Xmax: own, Flags: lo}, TMBeingModified, own, lo},
		{"being deleted", TupleHeader{Xmin: cb, Xmax: run}, TMBeingModified, run, xc},
		{"being locked", TupleHeader{Xmin: cb, Xmax: run, Flags: lo}, TMBeingModified, run, xc | lo},
		{"updated by committed", TupleHeader{Xmin: cb, Xmax: ca, Flags: up}, TMUpdated, ca, xc | mc | up},
		{"deleted by committed", TupleHeader{Xmin: cb, Xmax: cb}, TMDeleted, cb, xc | mc},
		{"hinted updated", TupleHeader{Xmin: cb, Xmax: cb, Flags: xc | mc | up}, TMUpdated, cb, xc | mc | up},
		{"committed row lock", TupleHeader{Xmin: cb, Xmax: cb, Flags: lo}, TMOk, 0, xc | lo | mi},
		{"aborted delete", TupleHeader{Xmin: cb, Xmax: ab}, TMOk, 0, xc | mi},
		{"own row lock", TupleHeader{Xmin: cb, Xmax: own, Flags: lo}, TMBeingModified, own, xc | lo},
		{"own update, this command", TupleHeader{Xmin: cb, Xmax: own, Cmax: 2}, TMSelfModified, own, xc},
		{"own update, earlier command", TupleHeader{Xmin: cb, Xmax: own, Cmax: 0}, TMInvisible, 0, xc},
	}
	for _, tt := range tests {
		h := tt.h
		got, xid := f.reader.SatisfiesUpdate(&h)
		if got != tt.want || xid != tt.wantXid || h.Flags != tt.wantFlags {
			t.Errorf("%s: SatisfiesUpdate = %v, %d, flags %#x; want %v, %d, flags %#x",
				tt.name, got, xid, h.Flags, tt.want, tt.wantXid, tt.wantFlags)
		}
	}
}

func TestSatisfiesDirty(t *testing.T) {
	f := newVisFixture(t, ReadCommitted)
	own, cb, ab, run, ca := f.own, f.cb, f.ab, f.run, f.ca
	const lo = XmaxLockOnly
	tests := []struct {
		name    string
		h       TupleHeader
		want    bool
		wantXid Xid
	}{
		{"committed insert", TupleHeader{Xmin: cb}, true, 0},
		{"insert committed after snapshot", TupleHeader{Xmin: ca}, true, 0},
		{"aborted insert", TupleHeader{Xmin: ab}, false, 0},
		{"running insert", TupleHeader{Xmin: run}, true, run},
		{"own insert", TupleHeader{Xmin: own, Cmin: 2}, true, 0},
		{"own insert, own delete", TupleHeader{Xmin: own, Xmax: own}, false, 0},
		{"running delete", TupleHeader{Xmin: cb, Xmax: run}, true, run},
		{"running row lock", TupleHeader{Xmin: cb, Xmax: run, Flags: lo}, true, 0},
		{"committed delete", TupleHeader{Xmin: cb, Xmax: ca}, false, 0},
		{"committed row lock", TupleHeader{Xmin: cb, Xmax: ca, Flags: lo}, true, 0},
		{"aborted delete", TupleHeader{Xmin: cb, Xmax: ab}, true, 0},
		{"own delete", TupleHeader{Xmin: cb, Xmax: own}, false, 0},
		{"own row lock", TupleHeader{Xmin: cb, Xmax: own, Flags: lo}, true, 0},
	}
	for _, tt := range tests {
		h := tt.h
		if got, xid := f.reader.SatisfiesDirty(&h); got != tt.want || xid != tt.wantXid {
			t.Errorf("%s: SatisfiesDirty = %v, %d; want %v, %d", tt.name, got, xid, tt.want, tt.wantXid)
		}
	}
}

func TestSatisfiesVacuum(t *testing.T) {
	f := newVisFixture(t, ReadCommitted)
	m := f.e.m
	own, cb, ab, run, ca := f.own, f.cb, f.ab, f.run, f.ca
	oldest := m.OldestXmin()
	if oldest != run {
		t.Fatalf("OldestXmin = %d, want the oldest running xid %d", oldest, run)
	}
	const lo = XmaxLockOnly
	tests := []struct {
		name      string
		h         TupleHeader
		want      VacuumResult
		wantFlags uint16
	}{
		{"live", TupleHeader{Xmin: cb}, HeapTupleLive, XminCommitted},
		{"aborted insert", TupleHeader{Xmin: ab}, HeapTupleDead, XminInvalid},
		{"running insert", TupleHeader{Xmin: run}, HeapTupleInsertInProgress, 0},
		{"own running insert", TupleHeader{Xmin: own, Xmax: own}, HeapTupleInsertInProgress, 0},
		{"running delete", TupleHeader{Xmin: cb, Xmax: run}, HeapTupleDeleteInProgress, XminCommitted},
		{"delete before horizon", TupleHeader{Xmin: cb, Xmax: cb}, HeapTupleDead, XminCommitted | XmaxCommitted},
		{"delete after horizon", TupleHeader{Xmin: cb, Xmax: ca}, HeapTupleRecentlyDead, XminCommitted | XmaxCommitted},
		{"aborted delete", TupleHeader{Xmin: cb, Xmax: ab}, HeapTupleLive, XminCommitted | XmaxInvalid},
		{"finished row lock", TupleHeader{Xmin: cb, Xmax: cb, Flags: lo}, HeapTupleLive, XminCommitted | lo | XmaxInvalid},
		{"running row lock", TupleHeader{Xmin: cb, Xmax: run, Flags: lo}, HeapTupleLive, XminCommitted | lo},
	}
	for _, tt := range tests {
		h := tt.h
		if got := m.SatisfiesVacuum(&h, oldest); got != tt.want || h.Flags != tt.wantFlags {
			t.Errorf("%s: SatisfiesVacuum = %v flags %#x, want %v flags %#x", tt.name, got, h.Flags, tt.want, tt.wantFlags)
		}
	}
}
