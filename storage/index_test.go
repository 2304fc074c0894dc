package storage

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

type modelEntry struct {
	key []byte
	tid TID
}

func modelCompare(a, b modelEntry) int {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return tidCompare(a.tid, b.tid)
}

// checkShape holds IndexShape to the model: its entries, the keys'
// bytes and the distinct keys.
func checkShape(t *testing.T, e *env, idx RelID, model []modelEntry) {
	t.Helper()
	var want IndexShape
	for i, m := range model {
		want.Entries++
		want.KeyBytes += int64(len(m.key))
		if i == 0 || !bytes.Equal(m.key, model[i-1].key) {
			want.Distinct++
		}
	}
	got, err := e.s.IndexShape(nil, idx, true)
	if err != nil || got != want {
		t.Fatalf("IndexShape = %+v, %v; the model has %+v", got, err, want)
	}
}

func TestIndexAgainstModel(t *testing.T) {
	e := newEnv(t, 16)
	const idx = RelID(77)
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	se := e.session()
	rng := rand.New(rand.NewPCG(1, 2))
	var model []modelEntry
	randKey := func() []byte { return key(uint64(rng.IntN(1000))) }
	for i := 0; i < 6000; i++ {
		if rng.IntN(4) == 0 && len(model) > 0 {
			j := rng.IntN(len(model))
			m := model[j]
			if err := e.s.IndexDelete(se.p, idx, m.key, m.tid); err != nil {
				t.Fatal(err)
			}
			model = slices.Delete(model, j, j+1)
			continue
		}
		m := modelEntry{randKey(), TID{uint32(rng.IntN(100)), uint16(rng.IntN(50) + 1)}}
		if err := e.s.IndexInsert(se.p, idx, m.key, m.tid); err != nil {
			t.Fatal(err)
		}
		if _, found := slices.BinarySearchFunc(model, m, modelCompare); !found {
			pos, _ := slices.BinarySearchFunc(model, m, modelCompare)
			model = slices.Insert(model, pos, m)
		}
	}
	verify := func() {
		t.Helper()
		if c, _ := e.s.IndexEntries(idx); c != len(model) {
			t.Fatalf("%d entries, model %d", c, len(model))
		}
		// full range
		var all []modelEntry
		e.s.IndexRange(se.p, idx, nil, nil, true, true, func(k []byte, tid TID) bool {
			all = append(all, modelEntry{append([]byte(nil), k...), tid})
			return true
		})
		if !slices.EqualFunc(all, model, func(a, b modelEntry) bool { return modelCompare(a, b) == 0 }) {
			t.Fatalf("full range differs from model (%d vs %d)", len(all), len(model))
		}
		for q := 0; q < 60; q++ {
			k := randKey()
			var got []TID
			e.s.IndexLookup(se.p, idx, k, func(tid TID) bool { got = append(got, tid); return true })
			var want []TID
			for _, m := range model {
				if bytes.Equal(m.key, k) {
					want = append(want, m.tid)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("lookup %x: %v want %v", k, got, want)
			}
			lo, hi := randKey(), randKey()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			li, hiI := rng.IntN(2) == 0, rng.IntN(2) == 0
			var gotR []modelEntry
			e.s.IndexRange(se.p, idx, lo, hi, li, hiI, func(k []byte, tid TID) bool {
				gotR = append(gotR, modelEntry{append([]byte(nil), k...), tid})
				return true
			})
			var wantR []modelEntry
			for _, m := range model {
				cl, ch := bytes.Compare(m.key, lo), bytes.Compare(m.key, hi)
				if (cl > 0 || cl == 0 && li) && (ch < 0 || ch == 0 && hiI) {
					wantR = append(wantR, m)
				}
			}
			if !slices.EqualFunc(gotR, wantR, func(a, b modelEntry) bool { return modelCompare(a, b) == 0 }) {
				t.Fatalf("range [%x %x] incl %v %v: %d entries, want %d", lo, hi, li, hiI, len(gotR), len(wantR))
			}
		}
		// early stop
		n := 0
		e.s.IndexRange(se.p, idx, nil, nil, true, true, func([]byte, TID) bool { n++; return n < 5 })
		if n != min(5, len(model)) {
			t.Fatalf("early stop after %d", n)
		}
	}
	verify()
	checkShape(t, e, idx, model)
	e.restart()
	checkShape(t, e, idx, model)
	verify()
	if err := e.s.TruncateIndex(idx); err != nil {
		t.Fatal(err)
	}
	model = nil
	verify()
	if err := e.s.DropIndex(idx); err != nil {
		t.Fatal(err)
	}
	if err := e.s.IndexInsert(se.p, idx, key(1), TID{1, 1}); err == nil {
		t.Fatal("insert into dropped index")
	}
}

func TestBtreeBulkBuild(t *testing.T) {
	for _, n := range []int{0, 1, 95, 96, 97, 5000, 100000} {
		entries := make([]btEntry, n)
		for i := range entries {
			entries[i] = btEntry{key: key(uint64(i / 3)), tid: TID{uint32(i), 1}}
		}
		tr := buildBtree(entries)
		i := 0
		tr.ascend(nil, TID{}, func(e *btEntry) bool {
			if e.tid.Block != uint32(i) {
				t.Fatalf("n=%d: entry %d is %v", n, i, e.tid)
			}
			i++
			return true
		})
		if i != n || tr.count != n {
			t.Fatalf("n=%d: walked %d", n, i)
		}
		// inserts after a bulk build keep order
		for j := 0; j < 300; j++ {
			tr.insert(key(uint64(j)), TID{uint32(j + n), 2})
		}
		var prev *btEntry
		tr.ascend(nil, TID{}, func(e *btEntry) bool {
			if prev != nil && compareEntry(prev.key, prev.tid, e) >= 0 {
				t.Fatalf("n=%d: order broken", n)
			}
			prev = e
			return true
		})
		for j := 0; j < n; j += 7 {
			if !tr.delete(entries[j].key, entries[j].tid) {
				t.Fatalf("n=%d: delete %d failed", n, j)
			}
		}
	}
}

// TestIndexBulkInsertLoads: a new index's sorted entries are loaded
// bottom-up; entries out of order, or into an index that has entries,
// go in one by one; either way the index holds every entry once, in
// order.
func TestIndexBulkInsertLoads(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shuffled bool
		existing int
	}{{"sorted", false, 0}, {"shuffled", true, 0}, {"into a filled index", false, 50}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newBtree()
			for j := range tc.existing {
				tr.insert(key(uint64(j*7)), TID{1, uint16(j + 1)})
			}
			var entries []IndexEntry
			for i := range 3000 {
				entries = append(entries, IndexEntry{Key: key(uint64(i / 2)), TID: TID{uint32(10 + i), 1}})
			}
			if tc.shuffled {
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
			}
			if loaded := tr.load(entries); loaded != (!tc.shuffled && tc.existing == 0) {
				t.Fatalf("load = %v", loaded)
			} else if !loaded {
				for _, e := range entries {
					tr.insert(e.Key, e.TID)
				}
			}
			entries[0].Key[0] ^= 0xff // the tree holds copies
			n := 0
			var prev *btEntry
			tr.ascend(nil, TID{}, func(e *btEntry) bool {
				if prev != nil && compareEntry(prev.key, prev.tid, e) >= 0 {
					t.Fatalf("order broken at entry %d", n)
				}
				prev = e
				n++
				return true
			})
			if want := 3000 + tc.existing; n != want || tr.count != want {
				t.Fatalf("walked %d entries, count %d, want %d", n, tr.count, want)
			}
			leaf, i := tr.seek(key(1499), TID{})
			for leaf != nil && i >= len(leaf.entries) {
				leaf, i = leaf.next, 0
			}
			if leaf == nil || !bytes.Equal(leaf.entries[i].key, key(1499)) || leaf.entries[i].tid != (TID{10 + 2998, 1}) {
				t.Fatal("a search does not find key 1499's first entry")
			}
		})
	}
}
