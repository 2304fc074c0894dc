package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func (a *Analyzer) rowExpr(r *pg.RowExpr) (expr.Expr, error) {
	re := &expr.RowExpr{}
	for _, n := range r.Args {
		e, err := a.Expr(n)
		if err != nil {
			return nil, err
		}
		if e, err = a.ResolveOutput(e); err != nil {
			return nil, err
		}
		re.Args = append(re.Args, e)
	}
	return re, nil
}

// rowComparison compiles ROW(...) op ROW(...). The fields are compiled
// without resolving unknown literals and parameters, so each pair is
// resolved as the operator between them would be (PostgreSQL's
// make_row_comparison_op): ('2024-01-01', $1) < (d, n) compares a date
// and a numeric, where a row built for output would make them text.
func (a *Analyzer) rowComparison(op string, l, r *pg.RowExpr, loc int32) (expr.Expr, error) {
	fields := func(row *pg.RowExpr) (*expr.RowExpr, error) {
		re := &expr.RowExpr{}
		for _, n := range row.Args {
			e, err := a.Expr(n)
			if err != nil {
				return nil, err
			}
			re.Args = append(re.Args, e)
		}
		return re, nil
	}
	lr, err := fields(l)
	if err != nil {
		return nil, err
	}
	rr, err := fields(r)
	if err != nil {
		return nil, err
	}
	return a.rowCompare(op, lr, rr, loc)
}

// rowCompare compiles a comparison between two row constructors.
func (a *Analyzer) rowCompare(op string, l, r *expr.RowExpr, loc int32) (expr.Expr, error) {
	if len(l.Args) != len(r.Args) {
		return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "unequal number of entries in row expressions"), loc)
	}
	var pairs []expr.Expr
	for i := range l.Args {
		cmpOp := op
		if op != "=" && op != "<>" && op != "!=" && i < len(l.Args)-1 {
			cmpOp = op[:1] // leading fields decide strictly: (a,b) <= (c,d) is a<c or (a=c and b<=d)
		}
		e, err := a.Binop(cmpOp, l.Args[i], r.Args[i], loc)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, e)
	}
	switch op {
	case "=":
		return &expr.BoolExpr{Op: expr.BoolAnd, Args: pairs}, nil
	case "<>", "!=":
		eqs := make([]expr.Expr, len(pairs))
		for i := range l.Args {
			e, err := a.Binop("=", l.Args[i], r.Args[i], loc)
			if err != nil {
				return nil, err
			}
			eqs[i] = e
		}
		return &expr.BoolExpr{Op: pg.BoolExprType_NOT_EXPR, Args: []expr.Expr{&expr.BoolExpr{Op: expr.BoolAnd, Args: eqs}}}, nil
	}
	// lexicographic: p0 or (e0 and p1) or (e0 and e1 and p2) ...
	var ors []expr.Expr
	var prefix []expr.Expr
	for i := range pairs {
		ors = append(ors, &expr.BoolExpr{Op: expr.BoolAnd, Args: append(append([]expr.Expr(nil), prefix...), pairs[i])})
		eq, err := a.Binop("=", l.Args[i], r.Args[i], loc)
		if err != nil {
			return nil, err
		}
		prefix = append(prefix, eq)
	}
	return &expr.BoolExpr{Op: pg.BoolExprType_OR_EXPR, Args: ors}, nil
}

// comparison compiles `a op b` for operands of types lt and rt and returns
// it as a function of the two values.
func (a *Analyzer) comparison(op string, lt, rt types.Type, loc int32) (func(ec *expr.EvalCtx, x, y types.Datum) (types.Datum, error), types.Type, error) {
	var pair [2]types.Datum
	l := &expr.SlotExpr{V: &pair[0], T: lt}
	r := &expr.SlotExpr{V: &pair[1], T: rt}
	e, err := a.Binop(op, l, r, loc)
	if err != nil {
		return nil, types.Type{}, err
	}
	if e.Type().OID != types.OIDBool {
		return nil, types.Type{}, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "op ANY/ALL (array) requires operator to yield boolean"), loc)
	}
	var common types.Type
	if b, ok := e.(*expr.BinopExpr); ok {
		common = b.L.Type()
	}
	return func(ec *expr.EvalCtx, x, y types.Datum) (types.Datum, error) {
		pair[0], pair[1] = x, y
		return e.Eval(ec, nil)
	}, common, nil
}
