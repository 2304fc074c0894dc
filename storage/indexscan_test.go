package storage

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIndexScanAgainstModel: scans with every combination of bounds
// (none, inclusive, exclusive), both directions and small batches return
// exactly the model's entries in range, in order.
func TestIndexScanAgainstModel(t *testing.T) {
	e := newEnv(t, 16)
	const idx = RelID(78)
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	se := e.session()
	rng := rand.New(rand.NewPCG(3, 4))
	var model []modelEntry
	for i := 0; i < 3000; i++ { // enough for internal nodes (128 entries a node)
		m := modelEntry{key(uint64(rng.IntN(400))), TID{uint32(rng.IntN(60)), uint16(rng.IntN(40) + 1)}}
		if err := e.s.IndexInsert(se.p, idx, m.key, m.tid); err != nil {
			t.Fatal(err)
		}
		if pos, found := slices.BinarySearchFunc(model, m, modelCompare); !found {
			model = slices.Insert(model, pos, m)
		}
	}
	type bound struct {
		k    []byte
		incl bool
	}
	bounds := []bound{{nil, false}}
	for _, k := range []uint64{0, 17, 200, 399, 500} {
		bounds = append(bounds, bound{key(k), true}, bound{key(k), false})
	}
	for _, lo := range bounds {
		for _, hi := range bounds {
			var want []modelEntry
			for _, m := range model {
				if lo.k != nil {
					if c := bytes.Compare(m.key, lo.k); c < 0 || c == 0 && !lo.incl {
						continue
					}
				}
				if hi.k != nil {
					if c := bytes.Compare(m.key, hi.k); c > 0 || c == 0 && !hi.incl {
						continue
					}
				}
				want = append(want, m)
			}
			for _, backward := range []bool{false, true} {
				for _, batch := range []int{1, 7, 1000} {
					sc := e.s.IndexScan(idx, lo.k, hi.k, lo.incl, hi.incl, backward)
					var got []modelEntry
					for {
						b, err := sc.Next(se.p, batch)
						if err != nil {
							t.Fatal(err)
						}
						if len(b) == 0 {
							break
						}
						if len(b) > batch {
							t.Fatalf("batch of %d, asked for %d", len(b), batch)
						}
						for _, x := range b {
							got = append(got, modelEntry{append([]byte(nil), x.Key...), x.TID})
						}
					}
					w := want
					if backward {
						w = slices.Clone(want)
						slices.Reverse(w)
					}
					if !slices.EqualFunc(got, w, func(a, b modelEntry) bool { return modelCompare(a, b) == 0 }) {
						t.Fatalf("lo %x/%v hi %x/%v backward %v batch %d: got %d entries, want %d", lo.k, lo.incl, hi.k, hi.incl, backward, batch, len(got), len(w))
					}
					// without keys: the same TIDs, in the same order
					sc = e.s.IndexScan(idx, lo.k, hi.k, lo.incl, hi.incl, backward).WithoutKeys()
					var tids []TID
					for {
						b, err := sc.Next(se.p, batch)
						if err != nil {
							t.Fatal(err)
						}
						if len(b) == 0 {
							break
						}
						for _, x := range b {
							if x.Key != nil {
								t.Fatal("a scan without keys returned a key")
							}
							tids = append(tids, x.TID)
						}
					}
					if !slices.EqualFunc(tids, w, func(a TID, b modelEntry) bool { return a == b.tid }) {
						t.Fatalf("without keys: lo %x/%v hi %x/%v backward %v batch %d: got %d entries, want %d", lo.k, lo.incl, hi.k, hi.incl, backward, batch, len(tids), len(w))
					}
				}
			}
		}
	}
}

// TestIndexScanResumesAfterChanges: entries inserted behind a scan's
// position are not returned; those ahead of it are; a deleted entry the
// scan has passed does not confuse where it resumes.
func TestIndexScanResumesAfterChanges(t *testing.T) {
	e := newEnv(t, 16)
	const idx = RelID(79)
	if err := e.s.CreateIndex(idx); err != nil {
		t.Fatal(err)
	}
	se := e.session()
	for k := uint64(0); k < 10; k++ {
		if err := e.s.IndexInsert(se.p, idx, key(k), TID{1, uint16(k + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	sc := e.s.IndexScan(idx, nil, nil, false, false, false)
	b, err := sc.Next(se.p, 3) // 0 1 2
	if err != nil || len(b) != 3 {
		t.Fatalf("first batch: %v %d", err, len(b))
	}
	// behind the scan, the last returned entry, and ahead of it
	for _, k := range []uint64{1} {
		if err := e.s.IndexInsert(se.p, idx, key(k), TID{2, 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.s.IndexDelete(se.p, idx, key(2), TID{1, 3}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.IndexInsert(se.p, idx, key(5), TID{2, 2}); err != nil {
		t.Fatal(err)
	}
	var rest []TID
	for {
		b, err := sc.Next(se.p, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			break
		}
		for _, x := range b {
			rest = append(rest, x.TID)
		}
	}
	want := []TID{{1, 4}, {1, 5}, {1, 6}, {2, 2}, {1, 7}, {1, 8}, {1, 9}, {1, 10}}
	if !slices.Equal(rest, want) {
		t.Fatalf("after changes: %v, want %v", rest, want)
	}
}

// An index file from before keys with NULLs were indexed would make
// scans miss rows: opening a data directory that holds one fails, naming
// the file, and the file is not mistaken for a table.
func TestOldIndexFileRefused(t *testing.T) {
	e := newEnv(t, 64)
	e.s.Close(nil)
	e.s = nil
	path := filepath.Join(e.dir, "base", "16390")
	old := append([]byte("LKDIDX01"), make([]byte, 8)...) // magic, no entries
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Config{DataDir: e.dir, SharedBuffers: 64, Locks: e.lm, Txns: e.tm, DatabaseOID: 5})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "older lockd") {
		t.Fatalf("Open with a version 1 index file: %v", err)
	}
}
