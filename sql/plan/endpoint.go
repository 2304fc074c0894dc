package plan

import (
	"lockd/sql/catalog"
	"lockd/sql/types"
	"lockd/storage"
)

// The actual ends of a column (selfuncs.c's get_actual_variable_range).
// A histogram's first and last bounds are what ANALYZE's sample held, and
// go stale as rows are added; when a comparison's constant falls in the
// histogram's first or last bin, PostgreSQL reads the column's current
// smallest or largest value from a B-tree index that leads with it and
// uses that as the bin's outer bound (ineq_histogram_selectivity), and
// then believes estimates closer to 0 or 1 than a hundredth of a bin. So
// do we: the first or last entry of such an index, with a non-NULL key.
// Like PostgreSQL's SnapshotNonVacuumable probe, an entry counts whether
// or not its row is visible yet or still (the probe is an estimate, and
// reading heap tuples while planning is what PostgreSQL limits it to
// avoid). The answer is kept per planning of the relation.

// endpoint is a column's actual smallest or largest value, if known.
type endpoint struct {
	d  types.Datum
	ok bool
}

// actualEnd returns column c's current smallest (max false) or largest
// value from the first B-tree index leading with c, if it has one and any
// non-NULL key.
func (ri *relInfo) actualEnd(c int, max bool) (types.Datum, bool) {
	key := c*2 + map[bool]int{false: 0, true: 1}[max]
	if e, ok := ri.ends[key]; ok {
		return e.d, e.ok
	}
	d, ok := ri.probeEnd(c, max)
	if ri.ends == nil {
		ri.ends = map[int]endpoint{}
	}
	ri.ends[key] = endpoint{d, ok}
	return d, ok
}

func (ri *relInfo) probeEnd(c int, max bool) (types.Datum, bool) {
	b := ri.b
	if b == nil || b.Store == nil || b.Proc == nil || ri.cat == nil {
		return types.Datum{}, false
	}
	var ix *catalog.IndexDef
	for _, x := range ri.cat.TableIndexes(ri.t) {
		if len(x.Cols) > 0 && x.Cols[0] == c && x.RelFile != 0 {
			ix = x
			break
		}
	}
	if ix == nil {
		return types.Datum{}, false
	}
	keyTypes := make([]types.Type, len(ix.Cols))
	for i, col := range ix.Cols {
		keyTypes[i] = ri.t.Cols[col].Type()
		if !catalog.KeyDecodable(keyTypes[i]) {
			return types.Datum{}, false
		}
	}
	vals := make([]types.Datum, len(ix.Cols))
	sc := b.Store.IndexScan(storage.RelID(ix.RelFile), nil, nil, false, false, max)
	// NULLs sort last: a backward scan meets them first
	for n := 0; n < 16; n++ {
		batch, err := sc.Next(b.Proc, 64)
		if err != nil || len(batch) == 0 {
			return types.Datum{}, false
		}
		for _, e := range batch {
			if err := catalog.DecodeKey(e.Key, keyTypes, vals); err != nil {
				return types.Datum{}, false
			}
			if !vals[0].Null {
				return vals[0], true
			}
		}
	}
	return types.Datum{}, false
}
