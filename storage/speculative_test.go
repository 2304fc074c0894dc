package storage

import (
	"testing"

	"lockd/txn"
)

// A speculative tuple carries its token in the ctid until it is finished;
// an aborted one is dead to everyone, its own transaction included, and
// VACUUM removes it.
func TestSpeculativeInsertion(t *testing.T) {
	e := newEnv(t, 16)
	const rel RelID = 16500
	if err := e.s.CreateRelation(rel); err != nil {
		t.Fatal(err)
	}
	a, b := e.session(), e.session()
	ta := a.begin(txn.ReadCommitted)
	ctidOf := func(tid TID) TID {
		var ctid TID
		if found, err := e.s.FetchAny(a.p, rel, tid, func(_ *txn.TupleHeader, c TID, _ []byte) { ctid = c }); err != nil || !found {
			t.Fatalf("FetchAny %v: %v %v", tid, found, err)
		}
		return ctid
	}
	kept, err := e.s.InsertSpeculative(bg, a.p, ta, rel, row(1, 40), 100, 7)
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := SpeculativeToken(ctidOf(kept)); !ok || tok != 7 {
		t.Fatalf("speculative ctid %v: token %d %v", ctidOf(kept), tok, ok)
	}
	if err := e.s.FinishSpeculative(a.p, rel, kept); err != nil {
		t.Fatal(err)
	}
	if c := ctidOf(kept); c != kept {
		t.Fatalf("finished tuple's ctid %v, want itself %v", c, kept)
	}
	killed, err := e.s.InsertSpeculative(bg, a.p, ta, rel, row(2, 40), 100, 8)
	if err != nil {
		t.Fatal(err)
	}
	// another transaction's AbortSpeculative leaves it alone
	tb := b.begin(txn.ReadCommitted)
	if _, err := tb.AssignXid(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.AbortSpeculative(b.p, tb, rel, killed); err != nil {
		t.Fatal(err)
	}
	if _, ok := SpeculativeToken(ctidOf(killed)); !ok {
		t.Fatal("another transaction's AbortSpeculative changed the tuple")
	}
	b.commit()
	if err := e.s.AbortSpeculative(a.p, ta, rel, killed); err != nil {
		t.Fatal(err)
	}
	if c := ctidOf(killed); c != killed {
		t.Fatalf("killed tuple's ctid %v, want itself", c)
	}
	ta.CommandCounterIncrement()
	ta.StatementSnapshot()
	var seen []uint64
	if err := e.s.Scan(bg, a.p, ta, rel, func(_ TID, data []byte) error {
		seen = append(seen, rowID(data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("own transaction sees %v, want only the finished row 1", seen)
	}
	a.commit()
	vs, err := e.s.Vacuum(bg, a.p, rel, e.tm.OldestXmin(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs.TuplesRemoved != 1 || vs.TuplesRemaining != 1 {
		t.Fatalf("VACUUM removed %d, kept %d; want the killed tuple removed", vs.TuplesRemoved, vs.TuplesRemaining)
	}
}

// IndexInsertUnchanged inserts only while the key's entries are the ones
// the caller saw and no VACUUM pass ran.
func TestIndexInsertUnchanged(t *testing.T) {
	e := newEnv(t, 16)
	const idx RelID = 16501
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	p := e.session().p
	k := key(5)
	lookup := func() []TID {
		var out []TID
		if err := e.s.IndexLookup(p, idx, k, func(tid TID) bool { out = append(out, tid); return true }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	insert := func(tid TID, seen []TID, vacuums uint64) bool {
		ok, err := e.s.IndexInsertUnchanged(p, idx, k, tid, seen, vacuums)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	v := e.s.IndexVacuums(idx)
	if !insert(TID{1, 1}, nil, v) {
		t.Fatal("first entry of an empty key refused")
	}
	if insert(TID{1, 2}, nil, v) {
		t.Fatal("an entry added since the look went unnoticed")
	}
	seen := lookup()
	if !insert(TID{1, 2}, seen, v) {
		t.Fatalf("refused with the entries seen %v", seen)
	}
	if err := e.s.IndexInsert(p, idx, key(6), TID{2, 1}); err != nil {
		t.Fatal(err)
	}
	if !insert(TID{1, 3}, lookup(), v) {
		t.Fatal("an entry under another key made it refuse")
	}
	seen = lookup()
	if err := e.s.IndexDelete(p, idx, k, TID{1, 1}); err != nil {
		t.Fatal(err)
	}
	if insert(TID{1, 4}, seen, v) {
		t.Fatal("an entry removed since the look went unnoticed")
	}
	seen = lookup()
	ix, err := e.s.index(idx)
	if err != nil {
		t.Fatal(err)
	}
	e.s.bulkDelete(p, ix, []TID{{9, 9}})
	if insert(TID{1, 4}, seen, v) {
		t.Fatal("a VACUUM pass since the look went unnoticed")
	}
	if !insert(TID{1, 4}, seen, e.s.IndexVacuums(idx)) {
		t.Fatal("refused after the VACUUM pass was seen")
	}
	if got := lookup(); len(got) != 3 {
		t.Fatalf("entries %v", got)
	}
}
