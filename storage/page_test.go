package storage

import (
	"testing"

	"lockd/txn"
)

// A page whose line-pointer array is full has room for a tuple only while
// one of its line pointers is unused; the page's "has free line pointers"
// flag is only a hint. Trusting it, freeSpace once told an UPDATE that
// its new version fitted a page that addTuple then refused, and the old
// version's ctid pointed at offset 0: the row vanished from its index.
func TestFreeSpaceFullLinePointerArray(t *testing.T) {
	pg := page(make([]byte, PageSize))
	initPage(pg)
	h := txn.TupleHeader{Xmin: 3, Flags: txn.XmaxInvalid}
	for i := 0; i < MaxTuplesPerPage; i++ {
		if pg.addTuple(&h, true, TID{}, nil) == 0 {
			t.Fatalf("tuple %d did not fit an empty page", i+1)
		}
	}
	if fs := pg.freeSpace(); fs != 0 {
		t.Fatalf("full line-pointer array: freeSpace %d, want 0", fs)
	}
	// Two tuples pruned and their space compacted, then one line pointer
	// freed (as VACUUM's third pass frees it).
	pruneExecute(pg, nil, []uint16{1, 2}, nil, make([]byte, PageSize))
	reapItems(pg, []uint16{1})
	if fs := pg.freeSpace(); fs < tupleSpace(0) {
		t.Fatalf("one line pointer unused: freeSpace %d, want at least %d", fs, tupleSpace(0))
	}
	if off := pg.addTuple(&h, true, TID{}, nil); off != 1 {
		t.Fatalf("addTuple took line pointer %d, want the unused 1", off)
	}
	// The hint is still set, but no line pointer is unused any more.
	if pg.u16(pdFlags)&pdHasFreeLines == 0 {
		t.Fatal("the hint was cleared: this test no longer covers a stale one")
	}
	if fs := pg.freeSpace(); fs != 0 {
		t.Fatalf("no unused line pointer left: freeSpace %d, want 0", fs)
	}
	if off := pg.addTuple(&h, true, TID{}, nil); off != 0 {
		t.Fatalf("addTuple placed a tuple at %d on a page with no line pointer left", off)
	}
}
