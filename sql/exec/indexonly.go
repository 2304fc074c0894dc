package exec

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// Index-only scans (PostgreSQL's nodeIndexonlyscan.c). The entries of
// the key ranges are read as an index scan reads them; for each, if the
// visibility map calls its heap page all-visible, the row is the index
// key's values and the heap is not touched; otherwise the heap tuple is
// fetched only to learn whether the snapshot sees it (a heap fetch,
// EXPLAIN ANALYZE's "Heap Fetches"), and the row is still the key's.
//
// The map's bit is read with no lock on the heap page, while the entry
// is read, under the index's lock (storage.IndexScan.WithVisibility says
// why that lock keeps VACUUM from recycling what the entry points at). A
// transaction that adds a tuple clears its page's bit before it inserts
// the tuple's index entries (storage/vismap.go): an entry this scan read
// was in the index, so the clearing happened before the scan read the
// bit. A bit still set for a page whose tuple another transaction is
// deleting means that transaction has not reached its commit, so the
// snapshot sees the tuple, as the scan returns it.
//
// The row holds only the index's columns (and ctid); the planner makes a
// scan index-only only when the query reads no other column.

// scanIndexOnly reads ts's index over the key ranges its conditions give,
// in key order (reversed for a backward scan), calling fn with each row
// the snapshot sees; read counts the index entries read.
func (x *Executor) scanIndexOnly(ec *expr.EvalCtx, ts *plan.TableSource, level, row []types.Datum, read, fetched *int64, fn func(storage.TID, []types.Datum) error) error {
	ranges, err := x.indexRanges(ec, ts, level)
	if err != nil {
		return err
	}
	// Heap fetches count on the scan's node; a scan run inside this one
	// (a subquery in a filter) counts on its own.
	hs := ec.PartStats
	if hs == nil {
		hs = ec.ScanStats
	}
	saved := ec.ScanStats
	ec.ScanStats = nil
	defer func() { ec.ScanStats = saved }()

	st := x.Store
	relfile := storage.RelID(ts.T.RelFile)
	ix := ts.Index
	// Decode the key only if the query reads one of its columns.
	var keyTypes []types.Type
	var vals []types.Datum
	for _, c := range ix.Cols {
		if c < ts.DecodeLen() {
			keyTypes = make([]types.Type, len(ix.Cols))
			vals = make([]types.Datum, len(ix.Cols))
			for i, c := range ix.Cols {
				keyTypes[i] = ts.T.Cols[c].Type()
			}
			break
		}
	}
	for i := range ts.Defs {
		row[i] = types.NullDatum
	}
	for _, r := range ranges {
		sc := st.IndexScan(storage.RelID(ix.RelFile), r.lo, r.hi, r.loIncl, r.hiIncl, ts.Backward).WithVisibility(relfile)
		if keyTypes == nil && !ix.CheckXmin { // such an index's keys are checked (hotrecheck.go)
			sc.WithoutKeys()
		}
		for {
			if err := ec.Ctx.Err(); err != nil {
				return err
			}
			batch, err := sc.Next(x.Proc, indexBatch)
			if err != nil {
				return err
			}
			if len(batch) == 0 {
				break
			}
			*read += int64(len(batch))
			for _, e := range batch {
				if !e.AllVisible {
					if hs != nil {
						hs.HeapFetches++
					}
					var fn func(*plan.TxnHeader, []byte)
					moved := false
					var merr error
					if ix.CheckXmin {
						fn = func(h *plan.TxnHeader, data []byte) { moved, merr = x.keyMoved(ts.T, ix, h, data, e.Key) }
					}
					visible, err := st.Fetch(x.Proc, &x.Txn, relfile, e.TID, fn)
					if err = plan.FirstErr(err, merr); err != nil {
						return err
					}
					if !visible || moved {
						continue
					}
					*fetched++
				}
				if keyTypes != nil {
					if err := catalog.DecodeKey(e.Key, keyTypes, vals); err != nil {
						return err
					}
					for i, c := range ix.Cols {
						row[c] = vals[i]
					}
				}
				if err := fn(e.TID, row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
