package exec

import (
	"slices"
	"testing"

	"lockd/storage"
)

// pagesOf lists a bitmap's iteration: per page its block, offsets (nil
// when lossy) and whether it needs the recheck.
func pagesOf(b *tidBitmap) []bmPage {
	var it bmIterator
	it.begin(b)
	var out []bmPage
	for {
		p, ok := it.next()
		if !ok {
			return out
		}
		p.offsets = slices.Clone(p.offsets)
		out = append(out, p)
	}
}

func tids(pairs ...[2]int) *tidBitmap {
	b := newTIDBitmap(1 << 20)
	for _, p := range pairs {
		b.add(storage.TID{Block: uint32(p[0]), Offset: uint16(p[1])})
	}
	return b
}

func TestTIDBitmapExact(t *testing.T) {
	b := tids([2]int{7, 3}, [2]int{2, 291}, [2]int{2, 1}, [2]int{7, 3}, [2]int{0, 64})
	got := pagesOf(b)
	want := []bmPage{{blk: 0, offsets: []uint16{64}}, {blk: 2, offsets: []uint16{1, 291}}, {blk: 7, offsets: []uint16{3}}}
	if len(got) != len(want) {
		t.Fatalf("pages %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].blk != want[i].blk || !slices.Equal(got[i].offsets, want[i].offsets) || got[i].lossy || got[i].recheck {
			t.Errorf("page %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTIDBitmapLossy(t *testing.T) {
	// 16 entries at most: 40 pages turn lossy, chunk by chunk, and every
	// page is still visited, once, in block order
	b := newTIDBitmap(16)
	for blk := 0; blk < 40; blk++ {
		for off := 1; off <= 3; off++ {
			b.add(storage.TID{Block: uint32(blk * 100), Offset: uint16(off)})
		}
	}
	if b.live > b.maxEntries {
		t.Fatalf("%d entries over the budget %d", b.live, b.maxEntries)
	}
	got := pagesOf(b)
	if len(got) != 40 {
		t.Fatalf("%d pages, want 40", len(got))
	}
	lossy := 0
	for i, p := range got {
		if p.blk != uint32(i*100) {
			t.Fatalf("page %d is block %d, want %d", i, p.blk, i*100)
		}
		if p.lossy {
			lossy++
			if !p.recheck || p.offsets != nil {
				t.Errorf("lossy page %+v", p)
			}
		} else if len(p.offsets) != 3 {
			t.Errorf("exact page %+v", p)
		}
	}
	if lossy == 0 {
		t.Fatal("no page turned lossy")
	}
	// a tuple of a lossy page adds nothing
	before := b.live
	b.add(storage.TID{Block: got[0].blk, Offset: 9})
	if b.live != before || !b.pageLossy(got[0].blk) {
		t.Error("adding to a lossy page changed the bitmap")
	}
	// reset empties it for the next loop
	b.reset(1000)
	if len(pagesOf(b)) != 0 || b.pageLossy(0) {
		t.Error("reset left pages")
	}
}

func TestTIDBitmapIntersectUnion(t *testing.T) {
	a := tids([2]int{1, 1}, [2]int{1, 2}, [2]int{2, 5}, [2]int{3, 7})
	b := tids([2]int{1, 2}, [2]int{1, 3}, [2]int{3, 8}, [2]int{4, 1})
	a.intersect(b)
	got := pagesOf(a)
	if len(got) != 1 || got[0].blk != 1 || !slices.Equal(got[0].offsets, []uint16{2}) {
		t.Fatalf("intersection %+v", got)
	}

	// an exact page met by a lossy one stays exact and is rechecked
	c := tids([2]int{10, 4}, [2]int{11, 4})
	d := tids([2]int{10, 9})
	d.markLossy(10)
	c.intersect(d)
	got = pagesOf(c)
	if len(got) != 1 || got[0].blk != 10 || got[0].lossy || !got[0].recheck || !slices.Equal(got[0].offsets, []uint16{4}) {
		t.Fatalf("intersection with a lossy page %+v", got)
	}
	// a lossy page stays where the other has the page, goes where not
	e := tids()
	e.markLossy(20)
	e.markLossy(21)
	e.intersect(tids([2]int{21, 1}))
	got = pagesOf(e)
	if len(got) != 1 || got[0].blk != 21 || !got[0].lossy {
		t.Fatalf("lossy intersection %+v", got)
	}

	u := tids([2]int{1, 1}, [2]int{5, 5})
	v := tids([2]int{1, 2}, [2]int{3, 3})
	v.markLossy(5)
	u.union(v)
	got = pagesOf(u)
	if len(got) != 3 || !slices.Equal(got[0].offsets, []uint16{1, 2}) || got[1].blk != 3 || got[2].blk != 5 || !got[2].lossy {
		t.Fatalf("union %+v", got)
	}
}

func TestBitmapMaxEntries(t *testing.T) {
	// PostgreSQL's default work_mem, 4MB, holds 65536 entries
	if n := bitmapMaxEntries(4 << 20); n != 65536 {
		t.Errorf("4MB: %d entries", n)
	}
	if n := bitmapMaxEntries(64 << 10); n != 1024 {
		t.Errorf("64kB: %d entries", n)
	}
}
