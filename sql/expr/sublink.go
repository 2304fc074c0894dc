package expr

import (
	"errors"

	"lockd/pgerr"
	"lockd/sql/types"
)

// Subqueries in expressions (PostgreSQL's SubLinks): EXISTS, scalar,
// IN / op ANY / op ALL, and ARRAY(...). A subquery that reads no
// enclosing row runs once per statement execution and its result is kept
// (PostgreSQL's initplan); a correlated one runs for every row it is
// evaluated for, with that row pushed as its outer row (a subplan).

type sublinkKind uint8

const (
	SublinkExists sublinkKind = iota
	SublinkScalar
	SublinkAny
	SublinkAll
	SublinkArray
)

type SublinkExpr struct {
	Kind sublinkKind
	Plan Subplan
	// correlated: the subquery reads the enclosing query's rows, so its
	// result is not kept between rows
	Correlated bool
	Test       Expr                                                     // ANY/ALL: left operand
	Cmp        func(ec *EvalCtx, a, b types.Datum) (types.Datum, error) // ANY/ALL: test op column
	// Row: Test is a RowExpr compared with the subquery's rows (Cmp from
	// RowCmp), as (a, b) IN (SELECT x, y ...) does
	Row bool
	T   types.Type
	// Key identifies the subquery's text (without positions), so that
	// ExprKey matches the same subquery written twice; "" never matches.
	Key string
	// hashable: ANY with "=" over a hashable type is answered by a set
	Hashable bool
	KeyType  types.Type
	// Params are the values a correlated subquery reads of the rows
	// around it, as expressions of the row it is evaluated for (its
	// outer references); with ParamsKnown the subquery runs again only
	// when they differ from the previous evaluation's, as PostgreSQL
	// re-runs a subplan only when one of its parameters changed. Without
	// (a volatile function, a correlated WITH query) it runs every time.
	Params      []Expr
	ParamsKnown bool
}

// ParamSubplan is a subquery plan that knows its outer references (see
// SublinkExpr.Params).
type ParamSubplan interface {
	Subplan
	OuterParams() ([]Expr, bool)
}

// corrResult is a correlated subquery's last result and the parameter
// values it was computed for.
type corrResult struct {
	params []types.Datum
	res    *subResult
}

// subplan is the plan of a subquery an expression holds (a *selectPlan).
type Subplan interface{ IsSubplan() }

// executor runs the plans expressions hold; the Executor implements it.
type Executor interface {
	RunSubplan(ec *EvalCtx, p Subplan, emit func(row []types.Datum) error) error
}

// subResult is a subquery's materialised result.
type subResult struct {
	vals    []types.Datum
	set     map[string]bool
	hasNull bool
	exists  bool
}

func (s *SublinkExpr) Type() types.Type { return s.T }

var ErrStopScan = errors.New("sql: stop scan")

func (s *SublinkExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	var test types.Datum
	if s.Test != nil {
		var err error
		if test, err = s.Test.Eval(ec, row); err != nil {
			return types.Datum{}, err
		}
	}
	res, err := s.result(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	switch s.Kind {
	case SublinkExists:
		return types.BoolDatum(res.exists), nil
	case SublinkScalar:
		if len(res.vals) == 0 {
			return types.NullDatum, nil
		}
		return res.vals[0], nil
	case SublinkArray:
		return types.Datum{A: append([]types.Datum(nil), res.vals...)}, nil
	}
	if s.Hashable && res.set != nil {
		if test.Null {
			if len(res.vals) == 0 {
				return types.BoolDatum(false), nil
			}
			return types.NullDatum, nil
		}
		if res.set[string(types.AppendHashKey(nil, s.KeyType, test))] {
			return types.BoolDatum(true), nil
		}
		if res.hasNull {
			return types.NullDatum, nil
		}
		return types.BoolDatum(false), nil
	}
	return quantified(ec, test, res.vals, s.Cmp, s.Kind == SublinkAll)
}

// result runs the subquery (or returns the kept result of an
// uncorrelated one).
func (s *SublinkExpr) result(ec *EvalCtx, row []types.Datum) (*subResult, error) {
	if !s.Correlated {
		if r, ok := ec.subCache[s]; ok {
			return r, nil
		}
	}
	var last *corrResult
	if s.Correlated && s.ParamsKnown {
		var ok bool
		if last, ok = ec.corrCache[s]; !ok {
			last = &corrResult{}
			if ec.corrCache == nil {
				ec.corrCache = map[*SublinkExpr]*corrResult{}
			}
			ec.corrCache[s] = last
		}
		same := last.res != nil
		for i, p := range s.Params {
			v, err := p.Eval(ec, row)
			if err != nil {
				return nil, err
			}
			if i >= len(last.params) {
				last.params = append(last.params, types.DeepCopy(v))
				same = false
				continue
			}
			if same && !types.Identical(last.params[i], v) {
				same = false
			}
			if !same {
				last.params[i] = types.DeepCopy(v)
			}
		}
		if same {
			return last.res, nil
		}
		last.res = nil
	}
	ec.Outer = append(ec.Outer, row)
	res := &subResult{}
	err := ec.Exec.RunSubplan(ec, s.Plan, func(out []types.Datum) error {
		switch s.Kind {
		case SublinkExists:
			res.exists = true
			return ErrStopScan
		case SublinkScalar:
			if len(res.vals) > 0 {
				return pgerr.New(pgerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
			}
		}
		v := out[0]
		if s.Row {
			v = types.Datum{A: append([]types.Datum(nil), out[:len(s.Test.(*RowExpr).Args)]...)}
		}
		res.vals = append(res.vals, v)
		if v.Null {
			res.hasNull = true
		}
		return nil
	})
	ec.Outer = ec.Outer[:len(ec.Outer)-1]
	if err != nil && err != ErrStopScan {
		return nil, err
	}
	if s.Hashable && len(res.vals) > 8 {
		res.set = make(map[string]bool, len(res.vals))
		for _, v := range res.vals {
			if !v.Null {
				res.set[string(types.AppendHashKey(nil, s.KeyType, v))] = true
			}
		}
	}
	if !s.Correlated {
		if ec.subCache == nil {
			ec.subCache = map[*SublinkExpr]*subResult{}
		}
		ec.subCache[s] = res
	}
	if last != nil {
		last.res = res
	}
	return res, nil
}

// RowCmp compares two rows (Datums holding their fields in A) with op
// as SQL's row comparisons do: = and <> field by field, a NULL field
// making the result NULL unless another field decides it; <, <=, >, >=
// by the first pair of fields that differ, NULL if a NULL comes first.
// eq and ord compare the fields with = and with op.
func RowCmp(op string, eq, ord []func(ec *EvalCtx, a, b types.Datum) (types.Datum, error)) func(ec *EvalCtx, a, b types.Datum) (types.Datum, error) {
	ordering := op != "=" && op != "<>" && op != "!="
	return func(ec *EvalCtx, a, b types.Datum) (types.Datum, error) {
		sawNull := false
		for i := range eq {
			x, y := a.A[i], b.A[i]
			if x.Null || y.Null {
				if ordering {
					return types.NullDatum, nil
				}
				sawNull = true
				continue
			}
			r, err := eq[i](ec, x, y)
			if err != nil {
				return types.Datum{}, err
			}
			if r.I != 0 {
				continue
			}
			switch op {
			case "=":
				return types.BoolDatum(false), nil
			case "<>", "!=":
				return types.BoolDatum(true), nil
			}
			return ord[i](ec, x, y)
		}
		if sawNull {
			return types.NullDatum, nil
		}
		return types.BoolDatum(op == "=" || op == "<=" || op == ">="), nil
	}
}

// slotExpr reads one operand of a comparison compiled once and applied to
// many value pairs (ANY, ALL, IN over a subquery).
type SlotExpr struct {
	V *types.Datum
	T types.Type
}

func (s *SlotExpr) Type() types.Type                                  { return s.T }
func (s *SlotExpr) Eval(*EvalCtx, []types.Datum) (types.Datum, error) { return *s.V, nil }
