package exec

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// Bitmap scans (sql/plan/bitmap.go plans them). The bitmap tree runs
// first: each Bitmap Index Scan reads its index's key ranges into a TID
// bitmap, BitmapAnd intersects and BitmapOr unites its kids' bitmaps
// (tidbitmap.go); then the Bitmap Heap Scan reads the pages the bitmap
// names in block order, each once, and gives the tuples the statement's
// snapshot sees: on an exact page those at the bitmap's offsets, on a
// lossy page every one (the leaf's filters, which hold the index
// conditions, recheck them: see runLeaf). A rescan (the inner side of a
// nested loop) runs the tree again with the new outer row. Pages added
// to the table after the scan started are not read, as a sequential
// scan does not read them.

// takeBitmap returns an empty bitmap with a budget of work_mem,
// reusing one a finished scan gave back.
func (x *Executor) takeBitmap(ec *expr.EvalCtx) *tidBitmap {
	maxEntries := bitmapMaxEntries(x.workMem(ec))
	if n := len(x.bitmaps); n > 0 {
		b := x.bitmaps[n-1]
		x.bitmaps = x.bitmaps[:n-1]
		b.reset(maxEntries)
		return b
	}
	return newTIDBitmap(maxEntries)
}

func (x *Executor) giveBitmap(b *tidBitmap) { x.bitmaps = append(x.bitmaps, b) }

// workMem is work_mem in bytes.
func (x *Executor) workMem(ec *expr.EvalCtx) int64 {
	if ec.B != nil && ec.B.Settings != nil {
		return int64(ec.B.Settings.Get("work_mem").Int) * 1024
	}
	return 4 << 20
}

// scanBitmap runs ts's bitmap tree over the level row and calls fn with
// each visible tuple of the pages it names, in TID order.
func (x *Executor) scanBitmap(ec *expr.EvalCtx, ts *plan.TableSource, level, row []types.Datum, fn func(storage.TID, []types.Datum) error) error {
	st := x.Store
	relfile := storage.RelID(ts.T.RelFile)
	nblocks, err := st.RelationPages(relfile)
	if err != nil {
		return err
	}
	tbm, err := x.runBitmapNode(ec, ts.Bitmap, level)
	if err != nil {
		return err
	}
	defer x.giveBitmap(tbm)
	hs := ec.PartStats
	if hs == nil {
		hs = ec.ScanStats
	}
	var it *bmIterator
	if n := len(x.bmIters); n > 0 {
		it = x.bmIters[n-1]
		x.bmIters = x.bmIters[:n-1]
	} else {
		it = new(bmIterator)
	}
	defer func() { x.bmIters = append(x.bmIters, it) }()
	it.begin(tbm)
	n := ts.DecodeLen()
	own := ts.Bitmap.OwnRow
	var derr error
	visit := func(tid storage.TID, data []byte) error {
		if derr = catalog.DecodeRowPrefix(data, ts.T, row, n); derr != nil {
			return derr
		}
		if own && x.recheck {
			ok, err := passes(ec, ts.Bitmap.Recheck, row)
			if err != nil {
				return err
			}
			if !ok {
				if hs != nil {
					hs.RecheckRemoved++
				}
				return nil
			}
		}
		return fn(tid, row)
	}
	saved := x.recheck
	defer func() { x.recheck = saved }()
	for {
		if err := ec.Ctx.Err(); err != nil {
			return err
		}
		pg, ok := it.next()
		if !ok {
			return nil
		}
		if pg.blk >= uint32(nblocks) {
			continue // added after the scan started
		}
		if hs != nil {
			if pg.lossy {
				hs.LossyPages++
			} else {
				hs.ExactPages++
			}
		}
		// the leaf counts the rows a lossy page's recheck removes
		x.recheck = pg.recheck
		offs := pg.offsets
		if pg.lossy {
			offs = nil
		}
		if err := st.ScanBlock(x.Proc, &x.Txn, relfile, pg.blk, offs, visit); err != nil {
			return err
		}
	}
}

// runBitmapNode returns the bitmap of node n; the caller gives it back.
func (x *Executor) runBitmapNode(ec *expr.EvalCtx, n *plan.BitmapNode, level []types.Datum) (*tidBitmap, error) {
	st := ec.Stats(n)
	switch n.Op {
	case plan.BitmapIndexScan:
		var tbm *tidBitmap
		var err error
		run := func(emit func(func() error) error) error {
			tbm, err = x.bitmapIndexScan(ec, n.Scan, level, st)
			return err
		}
		if st != nil {
			err = timed(st, run)
		} else {
			err = run(nil)
		}
		return tbm, err
	}
	var out *tidBitmap
	run := func(func(func() error) error) error {
		for _, k := range n.Kids {
			b, err := x.runBitmapNode(ec, k, level)
			if err != nil {
				if out != nil {
					x.giveBitmap(out)
				}
				return err
			}
			switch {
			case out == nil:
				out = b
			case n.Op == plan.BitmapAnd:
				out.intersect(b)
				x.giveBitmap(b)
			default:
				out.union(b)
				x.giveBitmap(b)
			}
			if n.Op == plan.BitmapAnd && out.live == 0 {
				// nothing left to intersect: the other kids are not run
				// (MultiExecBitmapAnd)
				break
			}
		}
		return nil
	}
	var err error
	if st != nil {
		err = timed(st, run)
		st.Rows = 0 // PostgreSQL counts no rows for BitmapAnd and BitmapOr
	} else {
		err = run(nil)
	}
	return out, err
}

// bitmapIndexScan reads the entries of ts's index in its key ranges into
// a new bitmap (btgetbitmap), counting them as the node's rows.
func (x *Executor) bitmapIndexScan(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, stats *expr.NodeStats) (*tidBitmap, error) {
	tbm := x.takeBitmap(ec)
	ranges, err := x.indexRanges(ec, ts, level)
	if err != nil {
		x.giveBitmap(tbm)
		return nil, err
	}
	var read int64
	for _, r := range ranges {
		sc := x.Store.IndexScan(storage.RelID(ts.Index.RelFile), r.lo, r.hi, r.loIncl, r.hiIncl, false).WithoutKeys()
		for {
			if err := ec.Ctx.Err(); err != nil {
				x.giveBitmap(tbm)
				return nil, err
			}
			batch, err := sc.Next(x.Proc, indexBatch)
			if err != nil {
				x.giveBitmap(tbm)
				return nil, err
			}
			if len(batch) == 0 {
				break
			}
			read += int64(len(batch))
			for _, e := range batch {
				tbm.add(e.TID)
			}
		}
	}
	if stats != nil {
		stats.Rows += float64(read)
	}
	x.TabStats.IndexUsed(ts.Index.OID, read, 0)
	return tbm, nil
}
