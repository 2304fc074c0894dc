package sql

import "strconv"

// runPlan runs a planned statement in the open transaction and returns
// its command tag (ExecutorRun): a query's rows go to emit, as do a DML
// statement's RETURNING rows. Utility statements carry their own run.
func (x *Executor) runPlan(ec *evalCtx, st *Stmt, emit func([]Datum) error) (string, error) {
	var n int64
	var err error
	switch p := st.plan.(type) {
	case nil:
		return st.run(ec, emit)
	case *selectPlan:
		err = x.runSelect(ec, p, func(row []Datum) error {
			n++
			return emit(row)
		})
	case *insertPlan:
		if n, err = x.execInsert(ec, p, emit); err != nil {
			return "", err
		}
		return "INSERT 0 " + strconv.FormatInt(n, 10), nil
	case *modifyPlan:
		n, err = x.execModify(ec, p, emit)
	case *joinModifyPlan:
		n, err = x.execJoinModify(ec, p, emit)
	default:
		panic("sql: runPlan of an unknown plan")
	}
	if err != nil {
		return "", err
	}
	return st.Tag + " " + strconv.FormatInt(n, 10), nil
}
