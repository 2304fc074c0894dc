package exec

import (
	"bytes"
	"slices"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// Index scans over key ranges (sql/plan/indexpath.go chooses them).

// indexBatch is how many index entries a scan reads under the index's
// lock at a time.
const indexBatch = 64

// keyRange is one range of index keys a scan reads.
type keyRange struct {
	lo, hi         []byte // nil: unbounded
	loIncl, hiIncl bool
}

// Key bytes that bound the keys extending a prefix (catalog.AppendKey
// starts every column with 0x01, or 0x02 for NULL).
const (
	keyAfterAll  = 0xff // prefix+0xff follows every key extending prefix
	keyNullStart = 0x02 // prefix+0x02 precedes the keys with NULL next
)

// scanIndex reads the tuples of ts whose index entries lie in the key
// ranges ts's conditions give, in key order (reversed for a backward
// scan), calling fn with each visible one.
func (x *Executor) scanIndex(ec *expr.EvalCtx, ts *plan.TableSource, level, row []types.Datum, read *int64, fn func(storage.TID, []types.Datum) error) error {
	ranges, err := x.indexRanges(ec, ts, level)
	if err != nil {
		return err
	}
	st := x.Store
	relfile := storage.RelID(ts.T.RelFile)
	var derr error
	decode := func(_ *plan.TxnHeader, data []byte) {
		derr = catalog.DecodeRowPrefix(data, ts.T, row, ts.DecodeLen())
	}
	for _, r := range ranges {
		sc := st.IndexScan(storage.RelID(ts.Index.RelFile), r.lo, r.hi, r.loIncl, r.hiIncl, ts.Backward)
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
				at, visible, _, err := st.FetchJudged(x.Proc, &x.Txn, relfile, e.TID, 0, decode)
				if err != nil {
					return err
				}
				if derr != nil {
					return derr
				}
				if visible {
					if err := fn(at, row); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// indexRanges evaluates ts's scan keys into key ranges, in the order the
// scan reads them. A NULL key value matches nothing (the comparisons it
// came from are never true).
func (x *Executor) indexRanges(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum) ([]keyRange, error) {
	prefix, ok, err := x.tableLookupKey(ec, ts, level, nil)
	if err != nil || !ok {
		return nil, err
	}
	extend := func(v types.Datum) []byte {
		k := append(make([]byte, 0, len(prefix)+16), prefix...)
		return catalog.AppendKey(k, []types.Type{ts.NextTyp}, []types.Datum{v})
	}
	after := func(k []byte) []byte { return append(k[:len(k):len(k)], keyAfterAll) }
	switch {
	case ts.InArgs != nil || ts.InArr != nil:
		var vals []types.Datum
		if ts.InArr != nil {
			arr, err := ts.InArr.Eval(ec, level)
			if err != nil || arr.Null {
				return nil, err
			}
			vals = arr.A
		} else {
			for _, a := range ts.InArgs {
				v, err := a.Eval(ec, level)
				if err != nil {
					return nil, err
				}
				vals = append(vals, v)
			}
		}
		var keys [][]byte
		for _, v := range vals {
			if !v.Null {
				keys = append(keys, extend(v))
			}
		}
		// each distinct value once, in the scan's order (PostgreSQL
		// sorts and deduplicates array keys likewise)
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)
		if ts.Backward {
			slices.Reverse(keys)
		}
		out := make([]keyRange, len(keys))
		for i, k := range keys {
			out[i] = keyRange{lo: k, hi: after(k), loIncl: true}
		}
		return out, nil
	case ts.Lo != nil || ts.Hi != nil || ts.NotNull:
		r := keyRange{lo: prefix, loIncl: true}
		if len(prefix) == 0 {
			r.lo = nil
		}
		if ts.Lo != nil {
			v, err := ts.Lo.Eval(ec, level)
			if err != nil || v.Null {
				return nil, err
			}
			if r.lo = extend(v); !ts.LoIncl {
				r.lo = after(r.lo)
			}
		}
		if ts.Hi != nil {
			v, err := ts.Hi.Eval(ec, level)
			if err != nil || v.Null {
				return nil, err
			}
			if r.hi = extend(v); ts.HiIncl {
				r.hi = after(r.hi)
			}
		} else {
			// up to the NULLs of the column, which sort last
			r.hi = append(prefix[:len(prefix):len(prefix)], keyNullStart)
		}
		return []keyRange{r}, nil
	}
	if len(prefix) == 0 {
		return []keyRange{{}}, nil // the whole index (an index-only scan)
	}
	// equality on a prefix of the key
	return []keyRange{{lo: prefix, hi: after(prefix), loIncl: true}}, nil
}
