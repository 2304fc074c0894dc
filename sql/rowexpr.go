package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Row constructors: ROW(a, b) or (a, b). A row value carries its fields in
// A and its text form (record_out) in S, so it prints, groups and counts
// DISTINCT like PostgreSQL's anonymous records; comparisons between rows
// are compiled field by field (PostgreSQL's row-wise comparison).

const OIDRecord = 2249

var TypeRecord = Type{OIDRecord, -1, -1, "record"}

type rowExpr struct {
	args []expr
}

func (r *rowExpr) typ() Type { return TypeRecord }
func (r *rowExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	out := Datum{A: make([]Datum, len(r.args))}
	var b []byte
	b = append(b, '(')
	for i, a := range r.args {
		v, err := a.eval(ec, row)
		if err != nil {
			return Datum{}, err
		}
		out.A[i] = v
		if i > 0 {
			b = append(b, ',')
		}
		if v.Null {
			continue
		}
		s := string(appendText(nil, a.typ(), v, ec.formatCtx()))
		if s == "" || strings.ContainsAny(s, "(),\"\\ \t\n") {
			b = append(b, '"')
			for j := 0; j < len(s); j++ {
				if s[j] == '"' || s[j] == '\\' {
					b = append(b, s[j])
				}
				b = append(b, s[j])
			}
			b = append(b, '"')
			continue
		}
		b = append(b, s...)
	}
	out.S = string(append(b, ')'))
	return out, nil
}

func (a *analyzer) rowExpr(r *pg.RowExpr) (expr, error) {
	re := &rowExpr{}
	for _, n := range r.Args {
		e, err := a.expr(n)
		if err != nil {
			return nil, err
		}
		if e, err = a.resolveOutput(e); err != nil {
			return nil, err
		}
		re.args = append(re.args, e)
	}
	return re, nil
}

// rowCompare compiles a comparison between two row constructors.
func (a *analyzer) rowCompare(op string, l, r *rowExpr, loc int32) (expr, error) {
	if len(l.args) != len(r.args) {
		return nil, posErr(pgerr.New(pgerr.SyntaxError, "unequal number of entries in row expressions"), loc)
	}
	var pairs []expr
	for i := range l.args {
		cmpOp := op
		if op != "=" && op != "<>" && op != "!=" && i < len(l.args)-1 {
			cmpOp = op[:1] // leading fields decide strictly: (a,b) <= (c,d) is a<c or (a=c and b<=d)
		}
		e, err := a.binop(cmpOp, l.args[i], r.args[i], loc)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, e)
	}
	switch op {
	case "=":
		return &boolExpr{op: boolAnd, args: pairs}, nil
	case "<>", "!=":
		eqs := make([]expr, len(pairs))
		for i := range l.args {
			e, err := a.binop("=", l.args[i], r.args[i], loc)
			if err != nil {
				return nil, err
			}
			eqs[i] = e
		}
		return &boolExpr{op: pg.BoolExprType_NOT_EXPR, args: []expr{&boolExpr{op: boolAnd, args: eqs}}}, nil
	}
	// lexicographic: p0 or (e0 and p1) or (e0 and e1 and p2) ...
	var ors []expr
	var prefix []expr
	for i := range pairs {
		ors = append(ors, &boolExpr{op: boolAnd, args: append(append([]expr(nil), prefix...), pairs[i])})
		eq, err := a.binop("=", l.args[i], r.args[i], loc)
		if err != nil {
			return nil, err
		}
		prefix = append(prefix, eq)
	}
	return &boolExpr{op: pg.BoolExprType_OR_EXPR, args: ors}, nil
}
