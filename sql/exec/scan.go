package exec

import (
	"fmt"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// scan calls fn with each row of src. fn must not keep the row.
func (x *Executor) scan(ec *expr.EvalCtx, src plan.RowSource, fn func(row []types.Datum) error) error {
	switch src := src.(type) {
	case *plan.TableSource:
		return x.ScanTable(ec, src, fn)
	case *plan.PartitionedSource:
		return x.scanPartitioned(ec, src, fn)
	case *plan.SubquerySource:
		return x.scanSubquery(ec, src, fn)
	case *plan.CteSource:
		return x.scanCTE(ec, src, fn)
	case *plan.FuncSource:
		return x.scanFunction(ec, src, fn)
	case *plan.SetopSource:
		return x.scanSetop(ec, src, fn)
	case *plan.ValuesSource:
		return x.scanValues(ec, src, fn)
	case *plan.ViewSource:
		return x.scanView(ec, src, fn)
	case *plan.SeqSource:
		return x.scanSequence(ec, src, fn)
	case *plan.ExcludedSource:
		return x.scanExcluded(ec, src, fn)
	}
	panic(fmt.Sprintf("sql: scan of %T", src))
}

// scanLevel is scan for a source that reads the level row (a lateral
// function, or a table scanned by an index key from outer columns).
func (x *Executor) scanLevel(ec *expr.EvalCtx, src plan.RowSource, level []types.Datum, fn func(row []types.Datum) error) error {
	switch src := src.(type) {
	case *plan.TableSource:
		return x.scanTableLevel(ec, src, level, fn)
	case *plan.FuncSource:
		return x.scanFunctionLevel(ec, src, level, fn)
	case *plan.PartitionedSource:
		saved := ec.Level
		ec.Level = level
		defer func() { ec.Level = saved }()
		return x.scanPartitioned(ec, src, fn)
	}
	panic(fmt.Sprintf("sql: scanLevel of %T", src))
}

func (x *Executor) scanSubquery(ec *expr.EvalCtx, q *plan.SubquerySource, fn func([]types.Datum) error) error {
	return x.RunSelect(ec, q.Plan, fn)
}

// passes evaluates filter conjuncts on the level row.
func passes(ec *expr.EvalCtx, conds []expr.Expr, buf []types.Datum) (bool, error) {
	for _, c := range conds {
		v, err := c.Eval(ec, buf)
		if err != nil {
			return false, err
		}
		if v.Null || v.I == 0 {
			return false, nil
		}
	}
	return true, nil
}

func (x *Executor) runLeaf(ec *expr.EvalCtx, l *plan.LeafNode, buf []types.Datum, fn func() error) error {
	dst := buf[l.Off : l.Off+l.N]
	st := ec.Stats(l)
	var recheck []expr.Expr
	if ts, ok := l.Src.(*plan.TableSource); ok && ts.Bitmap != nil {
		recheck = ts.Bitmap.Recheck
	}
	each := func(row []types.Datum) error {
		if len(row) == 0 || len(dst) == 0 || &row[0] != &dst[0] {
			copy(dst, row)
		}
		if x.recheck && recheck != nil {
			// a lossy page of a bitmap heap scan: its index conditions
			// first (the filters hold them too)
			if ok, err := passes(ec, recheck, buf); err != nil || !ok {
				if st != nil && err == nil {
					st.RecheckRemoved++
				}
				return err
			}
		}
		if ok, err := passes(ec, l.Filters, buf); err != nil || !ok {
			if st != nil && err == nil {
				st.Removed++
				if ps := ec.PartStats; ps != nil {
					ps.Rows--
					ps.Removed++
				}
			}
			return err
		}
		return fn()
	}
	if l.Lateral {
		ec.Outer = append(ec.Outer, buf)
		defer func() { ec.Outer = ec.Outer[:len(ec.Outer)-1] }()
	}
	if _, ok := l.Src.(plan.LevelScanner); ok {
		switch l.Src.(type) {
		case *plan.TableSource, *plan.PartitionedSource:
			x.leafDst = dst
			defer func() { x.leafDst = nil }()
		}
		if st != nil {
			saved := ec.ScanStats
			ec.ScanStats = st
			defer func() { ec.ScanStats = saved }()
		}
		return x.scanLevel(ec, l.Src, buf, each)
	}
	return x.scan(ec, l.Src, each)
}

func (x *Executor) scanSequence(ec *expr.EvalCtx, q *plan.SeqSource, fn func([]types.Datum) error) error {
	s := x
	def := s.Cat().Sequences[q.Q.OID]
	if def == nil {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", q.Q.Name)
	}
	d := s.Seqs.Get(def.RelFile)
	if d == nil {
		return pgerr.New(pgerr.InternalError, "storage of sequence \"%s\" is missing", def.Name)
	}
	d.Lw.Acquire(s.Proc, locks.LWShared)
	st := d.St
	d.Lw.Release(s.Proc)
	return fn([]types.Datum{types.IntDatum(st.LastValue), types.IntDatum(st.LogCnt), types.BoolDatum(st.IsCalled),
		tidDatum(storage.TID{Block: 0, Offset: 1}), types.OIDDatum(q.Q.OID)})
}

func (x *Executor) scanFunction(ec *expr.EvalCtx, f *plan.FuncSource, fn func([]types.Datum) error) error {
	return x.scanFunctionLevel(ec, f, nil, fn)
}

func (x *Executor) scanFunctionLevel(ec *expr.EvalCtx, f *plan.FuncSource, level []types.Datum, fn func([]types.Datum) error) error {
	row := make([]types.Datum, len(f.Cols))
	n := int64(0)
	put := func(d types.Datum) error {
		n++
		row[0] = d
		ord := 1
		if f.Srf != nil && f.Srf.Cols != nil {
			copy(row, d.A) // a record's fields are the columns
			ord = len(f.Srf.Cols)
		}
		if f.Ordinality {
			row[ord] = types.IntDatum(n)
		}
		return fn(row)
	}
	if f.Srf != nil {
		return f.Srf.Each(ec, level, put)
	}
	v, err := f.Scalar.Eval(ec, level)
	if err != nil {
		return err
	}
	return put(v)
}

func (x *Executor) scanExcluded(*expr.EvalCtx, *plan.ExcludedSource, func(row []types.Datum) error) error {
	return nil
}

func (x *Executor) scanView(ec *expr.EvalCtx, v *plan.ViewSource, fn func([]types.Datum) error) error {
	return v.V.Rows(ec, fn)
}
