package exec

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// scan calls fn for every tuple visible to the statement's snapshot.
func (x *Executor) ScanTable(ec *expr.EvalCtx, ts *plan.TableSource, fn func([]types.Datum) error) error {
	return x.scanTableLevel(ec, ts, nil, fn)
}

// scanLevel is scan with the index keys evaluated over the level row.
func (x *Executor) scanTableLevel(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, fn func([]types.Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, level, func(_ storage.TID, row []types.Datum) error { return fn(row) })
}

func (x *Executor) ScanTableTIDs(ec *expr.EvalCtx, ts *plan.TableSource, fn func(storage.TID, []types.Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, nil, fn)
}

func tidDatum(tid storage.TID) types.Datum {
	return types.IntDatum(int64(tid.Block)<<16 | int64(tid.Offset))
}

func (x *Executor) scanTableTIDsLevel(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, fn0 func(storage.TID, []types.Datum) error) error {
	s := x
	n := len(ts.Defs)
	row := make([]types.Datum, n+plan.NumSysCols)
	row[n+plan.SysColTableoid] = types.IntDatum(int64(ts.T.OID))
	fn := func(tid storage.TID, row []types.Datum) error {
		row[n+plan.SysColCtid] = tidDatum(tid)
		return fn0(tid, row)
	}
	st := s.Store
	relfile := storage.RelID(ts.T.RelFile)
	if ts.Index != nil {
		key, ok, err := x.tableLookupKey(ec, ts, level)
		if err != nil || !ok {
			return err
		}
		var tids []storage.TID
		if err := st.IndexLookup(s.Proc, storage.RelID(ts.Index.RelFile), key, func(tid storage.TID) bool {
			tids = append(tids, tid)
			return true
		}); err != nil {
			return err
		}
		// Like PostgreSQL's kill_prior_tuple, index entries whose tuple
		// is dead to every transaction are removed as the lookup meets
		// them, so a row updated many times does not make every lookup
		// walk all of its old versions until the next VACUUM.
		var dead []storage.TID
		var horizon txn.Xid
		for _, tid := range tids {
			var derr error
			visible, err := st.Fetch(s.Proc, &s.Txn, relfile, tid, func(_ *plan.TxnHeader, data []byte) {
				derr = catalog.DecodeRow(data, ts.T, row)
			})
			if err != nil {
				return err
			}
			if derr != nil {
				return derr
			}
			if visible {
				if err := fn(tid, row); err != nil {
					return err
				}
				continue
			}
			if len(tids) > 1 {
				if horizon == 0 {
					horizon = s.Txns.OldestXmin()
				}
				if _, err := st.FetchAny(s.Proc, relfile, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) {
					if s.Txns.SatisfiesVacuum(h, horizon) == txn.HeapTupleDead {
						dead = append(dead, tid)
					}
				}); err != nil {
					return err
				}
			}
		}
		for _, tid := range dead {
			if err := st.IndexDelete(s.Proc, storage.RelID(ts.Index.RelFile), key, tid); err != nil {
				return err
			}
		}
		return nil
	}
	return st.Scan(ec.Ctx, s.Proc, &s.Txn, relfile, func(tid storage.TID, data []byte) error {
		if err := catalog.DecodeRow(data, ts.T, row); err != nil {
			return err
		}
		return fn(tid, row)
	})
}

// lookupKey evaluates the key values; a NULL key matches nothing.
func (x *Executor) tableLookupKey(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum) ([]byte, bool, error) {
	vals := make([]types.Datum, len(ts.KeyArgs))
	for i, a := range ts.KeyArgs {
		v, err := a.Eval(ec, level)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return nil, false, nil
		}
		vals[i] = v
	}
	return catalog.AppendKey(nil, ts.KeyTyps, vals), true, nil
}
