package exec

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// emit evaluates the list for a written row and sends the result.
func (x *Executor) emitReturning(ec *expr.EvalCtx, r *plan.Returning, row []types.Datum, tid storage.TID, table *catalog.TableDef, emit func([]types.Datum) error) error {
	if r == nil {
		return nil
	}
	copy(r.Buf, row[:r.Ncols])
	r.Buf[r.Ncols+plan.SysColCtid] = tidDatum(tid)
	r.Buf[r.Ncols+plan.SysColTableoid] = types.IntDatum(int64(table.OID))
	for i, t := range r.Targets {
		v, err := t.Eval(ec, r.Buf)
		if err != nil {
			return err
		}
		r.Out[i] = v
	}
	return emit(r.Out)
}
