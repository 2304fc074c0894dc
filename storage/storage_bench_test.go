package storage

import (
	"testing"

	"lockd/locks"
	"lockd/txn"
)

// BenchmarkBufferHit is the buffer pool hit path: mapping lookup (partition
// lock shared), pin, content lock shared, release, unpin.
func BenchmarkBufferHit(b *testing.B) {
	e := newEnv(b, 1024)
	e.s.CreateRelation(1)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	for i := 0; i < 2000; i++ {
		e.s.Insert(bg, se.p, tx, 1, row(uint64(i), 100), 0)
	}
	se.commit()
	r, _ := e.s.relation(1)
	n := r.nblocks.Load()
	bk, _ := e.s.backend(se.p)
	st := &bk.stats
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, err := e.s.readBuffer(se.p, st, r, uint32(i)%n)
		if err != nil {
			b.Fatal(err)
		}
		d := e.s.pool.desc(id)
		d.content.Acquire(se.p, locks.LWShared)
		d.content.Release(se.p)
		d.unpin()
	}
}

// BenchmarkBufferHitParallel is the hit path from GOMAXPROCS backends.
func BenchmarkBufferHitParallel(b *testing.B) {
	e := newEnv(b, 1024)
	e.s.CreateRelation(1)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	for i := 0; i < 2000; i++ {
		e.s.Insert(bg, se.p, tx, 1, row(uint64(i), 100), 0)
	}
	se.commit()
	r, _ := e.s.relation(1)
	n := r.nblocks.Load()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p, err := e.lm.NewProc(nextPID.Add(1) + 5000)
		if err != nil {
			b.Error(err)
			return
		}
		defer p.Close()
		bk, _ := e.s.backend(p)
		i := uint32(p.Number())
		for pb.Next() {
			i++
			id, err := e.s.readBuffer(p, &bk.stats, r, i%n)
			if err != nil {
				b.Error(err)
				return
			}
			d := e.s.pool.desc(id)
			d.content.Acquire(p, locks.LWShared)
			d.content.Release(p)
			d.unpin()
		}
	})
}

// BenchmarkFetch is a visible-tuple fetch by TID (what a primary-key lookup
// does after the index).
func BenchmarkFetch(b *testing.B) {
	e := newEnv(b, 1024)
	e.s.CreateRelation(1)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	var tids []TID
	for i := 0; i < 2000; i++ {
		tid, _ := e.s.Insert(bg, se.p, tx, 1, row(uint64(i), 100), 0)
		tids = append(tids, tid)
	}
	se.commit()
	tx = se.begin(txn.ReadCommitted)
	var sink byte
	fn := func(_ *txn.TupleHeader, data []byte) { sink += data[0] }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := e.s.Fetch(se.p, tx, 1, tids[i%len(tids)], fn); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	se.commit()
}

// BenchmarkInsert inserts 100-byte tuples in one transaction.
func BenchmarkInsert(b *testing.B) {
	e := newEnv(b, 16384)
	e.s.CreateRelation(1)
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	data := row(1, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.s.Insert(bg, se.p, tx, 1, data, 100); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	se.commit()
}

// BenchmarkInsertParallel: concurrent inserters into one relation
// (extension lock contention).
func BenchmarkInsertParallel(b *testing.B) {
	e := newEnv(b, 16384)
	e.s.CreateRelation(1)
	data := row(1, 100)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		se := e.session()
		tx := se.begin(txn.ReadCommitted)
		for pb.Next() {
			if _, err := e.s.Insert(bg, se.p, tx, 1, data, 100); err != nil {
				b.Error(err)
				return
			}
		}
		se.commit()
	})
}

// BenchmarkIndexLookup looks up one key among 100000.
func BenchmarkIndexLookup(b *testing.B) {
	e := newEnv(b, 16)
	e.s.CreateIndex(2)
	se := e.session()
	const n = 100000
	for i := 0; i < n; i++ {
		e.s.IndexInsert(se.p, 2, key(uint64(i)), TID{uint32(i / 100), uint16(i%100 + 1)})
	}
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = key(uint64(i * 97 % n))
	}
	var found int
	fn := func(TID) bool { found++; return true }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.s.IndexLookup(se.p, 2, keys[i%len(keys)], fn); err != nil {
			b.Fatal(err)
		}
	}
	if found != b.N {
		b.Fatalf("found %d of %d", found, b.N)
	}
}

// BenchmarkIndexOnlyScan reads a whole 100,000-entry index in batches of
// 64 with the visibility map's answer for each entry (an index-only
// scan's reads): per entry.
func BenchmarkIndexOnlyScan(b *testing.B) {
	e := newEnv(b, 16)
	e.s.CreateRelation(1)
	e.s.CreateIndex(2)
	se := e.session()
	const n = 100000
	entries := make([]IndexEntry, n)
	for i := range entries {
		entries[i] = IndexEntry{Key: key(uint64(i)), TID: TID{uint32(i / 100), uint16(i%100 + 1)}}
	}
	if err := e.s.IndexBulkInsert(se.p, 2, entries); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		sc := e.s.IndexScan(2, nil, nil, true, true, false).WithVisibility(1)
		for i < b.N {
			batch, err := sc.Next(se.p, 64)
			if err != nil {
				b.Fatal(err)
			}
			if len(batch) == 0 {
				break
			}
			i += len(batch)
		}
	}
}

// BenchmarkExtensionParallel: 8 × GOMAXPROCS backends insert ~1 kB rows
// (7 per page, so one extension every 7 rows without extras) into one
// relation under each extension policy. Reported: mean pages per
// extension, and per thousand rows the extensions, extension-lock waits,
// waits after which the FSM had room, and the time waited.
func BenchmarkExtensionParallel(b *testing.B) {
	for _, m := range extModes {
		if m.name == "group-cap" {
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			e := newEnv(b, 4096)
			e.s.SetExtensionPolicy(m.mode, m.blocks, m.maxBlocks, m.thr)
			e.s.CreateRelation(1)
			data := row(1, extRowSize)
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				se := e.session()
				tx := se.begin(txn.ReadCommitted)
				for pb.Next() {
					if _, err := e.s.Insert(bg, se.p, tx, 1, data, 100); err != nil {
						b.Error(err)
						return
					}
				}
				se.commit()
			})
			b.StopTimer()
			st := e.s.Stats()
			krows := float64(b.N) / 1000
			if st.Extensions > 0 {
				b.ReportMetric(float64(st.PagesAdded)/float64(st.Extensions), "pages/ext")
			}
			b.ReportMetric(float64(st.Extensions)/krows, "ext/krow")
			b.ReportMetric(float64(st.ExtensionLockWaits)/krows, "waits/krow")
			b.ReportMetric(float64(st.ExtensionWaitFSMHits)/krows, "waitFSMhits/krow")
			b.ReportMetric(float64(st.ExtensionLockWaitTime.Microseconds())/krows, "waitµs/krow")
		})
	}
}
