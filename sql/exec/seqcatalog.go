package exec

import (
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

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
		tidDatum(storage.TID{Block: 0, Offset: 1}), types.OidDatum(q.Q.OID)})
}
