package storage

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockd/txn"
)

// TestConcurrentUpdatesVacuum runs READ COMMITTED updaters (as the executor
// will: index lookup, visible version, Update, wait and retry) on a few
// hot rows with a tiny buffer pool while VACUUM runs in a loop. No update
// may be lost and every row must keep exactly one visible version.
func TestConcurrentUpdatesVacuum(t *testing.T) {
	e := newEnv(t, 16)
	const rel, idx = RelID(300), RelID(301)
	const rows, workers, perWorker = 60, 4, 150
	e.s.CreateRelation(rel)
	e.s.CreateIndex(idx)
	mk := func(id, counter uint64) []byte {
		b := make([]byte, 2000)
		binary.BigEndian.PutUint64(b, id)
		binary.BigEndian.PutUint64(b[8:], counter)
		return b
	}
	se := e.session()
	tx := se.begin(txn.ReadCommitted)
	for i := uint64(0); i < rows; i++ {
		tid, err := e.s.Insert(bg, se.p, tx, rel, mk(i, 0), 50)
		if err != nil {
			t.Fatal(err)
		}
		e.s.IndexInsert(se.p, idx, key(i), tid)
	}
	se.commit()

	var successes atomic.Int64
	stop := make(chan struct{})
	var vwg sync.WaitGroup
	vwg.Add(1)
	go func() {
		defer vwg.Done()
		vs := e.session()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := e.s.Vacuum(bg, vs.p, rel, e.tm.OldestXmin(), []RelID{idx}); err != nil {
				t.Error(err)
				return
			}
			// checkpoints run concurrently too
			if err := e.s.Checkpoint(nil); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		se := e.session()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			var tids []TID
			for i := 0; i < perWorker; i++ {
				id := uint64(rng.IntN(rows))
				tx := se.begin(txn.ReadCommitted)
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						t.Errorf("row %d: no progress", id)
						return
					}
					tx.StatementSnapshot()
					tids = tids[:0]
					e.s.IndexLookup(se.p, idx, key(id), func(tid TID) bool { tids = append(tids, tid); return true })
					var cur TID
					var counter uint64
					nvis := 0
					for _, tid := range tids {
						vis, err := e.s.Fetch(se.p, tx, rel, tid, func(_ *txn.TupleHeader, d []byte) {
							if binary.BigEndian.Uint64(d) != id {
								t.Errorf("index entry %v for row %d points at row %d", tid, id, binary.BigEndian.Uint64(d))
							}
							counter = binary.BigEndian.Uint64(d[8:])
						})
						if err != nil {
							t.Error(err)
							return
						}
						if vis {
							cur = tid
							nvis++
						}
					}
					if nvis != 1 {
						t.Errorf("row %d: %d visible versions", id, nvis)
						return
					}
					out, err := e.s.Update(bg, se.p, tx, rel, cur, mk(id, counter+1), 50, false, false, RowWait{Policy: WaitError})
					if err != nil {
						t.Error(err)
						return
					}
					switch out.Result {
					case txn.TMOk:
						e.s.IndexInsert(se.p, idx, key(id), out.NewTID)
						se.commit()
						successes.Add(1)
					case txn.TMBeingModified:
						if err := tx.WaitFor(bg, out.WaitXid, 0); err != nil {
							t.Error(err)
							return
						}
						continue
					case txn.TMUpdated:
						continue
					default:
						t.Errorf("row %d: %v", id, out.Result)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	vwg.Wait()

	tx = se.begin(txn.ReadCommitted)
	var sum uint64
	n := 0
	e.s.Scan(bg, se.p, tx, rel, func(_ TID, d []byte) error {
		sum += binary.BigEndian.Uint64(d[8:])
		n++
		return nil
	})
	se.commit()
	if n != rows || sum != uint64(successes.Load()) || sum != workers*perWorker {
		t.Fatalf("%d rows, counter sum %d, successes %d", n, sum, successes.Load())
	}
	pages, _ := e.s.RelationPages(rel)
	e.restart()
	se = e.session()
	tx = se.begin(txn.ReadCommitted)
	var sum2 uint64
	e.s.Scan(bg, se.p, tx, rel, func(_ TID, d []byte) error { sum2 += binary.BigEndian.Uint64(d[8:]); return nil })
	se.commit()
	if sum2 != sum {
		t.Fatalf("after restart counter sum %d, want %d", sum2, sum)
	}
	t.Logf("pages=%d stats=%+v", pages, e.s.Stats())
}
