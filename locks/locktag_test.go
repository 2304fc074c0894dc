package locks

import "testing"

func TestLockTags(t *testing.T) {
	cases := []struct {
		tag      LockTag
		typeName string
		describe string
	}{
		{RelationTag(5, 16384), "relation", "relation 16384 of database 5"},
		{ExtendTag(5, 16384), "extend", "extension of relation 16384 of database 5"},
		{FrozenIDsTag(5), "frozenid", "pg_database.datfrozenxid of database 5"},
		{PageTag(5, 16384, 7), "page", "page 7 of relation 16384 of database 5"},
		{TupleTag(5, 16384, 7, 3), "tuple", "tuple (7,3) of relation 16384 of database 5"},
		{TransactionTag(742), "transactionid", "transaction 742"},
		{VirtualXidTag(3, 17), "virtualxid", "virtual transaction 3/17"},
		{VirtualXidTag(-1, 17), "virtualxid", "virtual transaction -1/17"},
		{SpeculativeTokenTag(742, 2), "spectoken", "speculative token 2 of transaction 742"},
		{AdvisoryTag64(5, 42), "advisory", "advisory lock [5,0,42,1]"},
		{AdvisoryTag64(5, -1), "advisory", "advisory lock [5,4294967295,4294967295,1]"},
		{AdvisoryTag64(5, 1<<32+2), "advisory", "advisory lock [5,1,2,1]"},
		{AdvisoryTag32(5, 1, -2), "advisory", "advisory lock [5,1,4294967294,2]"},
		{ObjectTag(5, 1259, 16384, 0), "object", "object 16384 of class 1259 of database 5"},
	}
	for _, c := range cases {
		if got := c.tag.TypeName(); got != c.typeName {
			t.Errorf("%+v: TypeName %q, want %q", c.tag, got, c.typeName)
		}
		if got := c.tag.Describe(); got != c.describe {
			t.Errorf("%+v: Describe %q, want %q", c.tag, got, c.describe)
		}
	}
	a := AdvisoryTag64(5, 42)
	if a.Field2 != 0 || a.Field3 != 42 || a.Field4 != 1 || a.Method != UserLockMethod {
		t.Errorf("advisory64 fields %+v", a)
	}
	if RelationTag(1, 2) != RelationTag(1, 2) || RelationTag(1, 2) == RelationTag(2, 1) {
		t.Error("tags not comparable by value")
	}
}

func TestLockModes(t *testing.T) {
	// The conflict matrix of lockdefs.h as bit masks over modes 1..8.
	want := map[LockMode]lockMask{
		AccessShareLock: 0x100, RowShareLock: 0x180, RowExclusiveLock: 0x1E0,
		ShareUpdateExclusiveLock: 0x1F0, ShareLock: 0x1D8, ShareRowExclusiveLock: 0x1F8,
		ExclusiveLock: 0x1FC, AccessExclusiveLock: 0x1FE,
	}
	for m, mask := range want {
		if conflictTab[m] != mask {
			t.Errorf("%v conflicts %#x, want %#x", m, conflictTab[m], mask)
		}
		if got, ok := ParseLockMode(m.String()); !ok || got != m {
			t.Errorf("ParseLockMode(%q) = %v", m.String(), got)
		}
		for o := AccessShareLock; o <= MaxLockMode; o++ {
			if m.Conflicts(o) != o.Conflicts(m) {
				t.Errorf("table not symmetric at %v/%v", m, o)
			}
		}
	}
	if AccessShareLock.String() != "AccessShareLock" || AccessExclusiveLock.String() != "AccessExclusiveLock" {
		t.Error("mode names")
	}
}

// TestConflictMatrixThroughManager checks every pair of modes through the
// manager, with the fast path on and off: a NOWAIT request of the second
// mode succeeds exactly when the modes do not conflict.
func TestConflictMatrixThroughManager(t *testing.T) {
	for _, slots := range []int{-1, 0} {
		m := newTestManager(t, Config{})
		m.SetFastPathSlots(slots)
		ps := newTestProcs(t, m, 2)
		tag := RelationTag(1, 100)
		for a := AccessShareLock; a <= MaxLockMode; a++ {
			for b := AccessShareLock; b <= MaxLockMode; b++ {
				if err := m.Lock(t.Context(), ps[0], tag, a, LockOptions{}); err != nil {
					t.Fatal(err)
				}
				err := m.Lock(t.Context(), ps[1], tag, b, LockOptions{NoWait: true})
				if conflict := err != nil; conflict != a.Conflicts(b) {
					t.Errorf("slots=%d held %v, requested %v: err=%v", slots, a, b, err)
				}
				m.ReleaseTransactionLocks(ps[0])
				m.ReleaseTransactionLocks(ps[1])
			}
		}
		if rows := m.Status(); len(rows) != 0 {
			t.Fatalf("locks left: %v", rows)
		}
	}
}

func TestFastPathGroups(t *testing.T) {
	cases := []struct{ setting, maxLocks, groups int }{
		{-1, 64, 4}, {-1, 10, 1}, {-1, 100, 8}, {-1, 16384, 1024}, {-1, 1 << 20, 1024},
		{0, 64, 0}, {16, 64, 1}, {17, 64, 2}, {64, 64, 4}, {1024, 64, 64}, {48, 64, 3},
	}
	for _, c := range cases {
		if g := fastPathGroups(c.setting, c.maxLocks); g != c.groups {
			t.Errorf("fastPathGroups(%d, %d) = %d, want %d", c.setting, c.maxLocks, g, c.groups)
		}
	}
	var f fastPath
	f.init(4)
	if g := f.group(16384); g != (16384*49157)&3 {
		t.Errorf("group = %d", g)
	}
	f.init(3) // not a power of two: modulo
	if g := f.group(16385); g != (16385*49157)%3 {
		t.Errorf("group = %d", g)
	}
}
