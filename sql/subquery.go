package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Subqueries in expressions (PostgreSQL's SubLinks): EXISTS, scalar,
// IN / op ANY / op ALL, and ARRAY(...). A subquery that reads no
// enclosing row runs once per statement execution and its result is kept
// (PostgreSQL's initplan); a correlated one runs for every row it is
// evaluated for, with that row pushed as its outer row (a subplan).

type sublinkKind uint8

const (
	sublinkExists sublinkKind = iota
	sublinkScalar
	sublinkAny
	sublinkAll
	sublinkArray
)

type sublinkExpr struct {
	kind sublinkKind
	plan subplan
	// correlated: the subquery reads the enclosing query's rows, so its
	// result is not kept between rows
	correlated bool
	test       expr                                         // ANY/ALL: left operand
	cmp        func(ec *evalCtx, a, b Datum) (Datum, error) // ANY/ALL: test op column
	t          Type
	// hashable: ANY with "=" over a hashable type is answered by a set
	hashable bool
	keyType  Type
}

// subplan is the plan of a subquery an expression holds (a *selectPlan).
type subplan interface{ isSubplan() }

func (*selectPlan) isSubplan() {}

// executor runs the plans expressions hold; the Executor implements it.
type executor interface {
	runSubplan(ec *evalCtx, p subplan, emit func(row []Datum) error) error
}

// subResult is a subquery's materialised result.
type subResult struct {
	vals    []Datum
	set     map[string]bool
	hasNull bool
	exists  bool
}

func (s *sublinkExpr) typ() Type { return s.t }

var errStopScan = errors.New("sql: stop scan")

func (s *sublinkExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	var test Datum
	if s.test != nil {
		var err error
		if test, err = s.test.eval(ec, row); err != nil {
			return Datum{}, err
		}
	}
	res, err := s.result(ec, row)
	if err != nil {
		return Datum{}, err
	}
	switch s.kind {
	case sublinkExists:
		return boolDatum(res.exists), nil
	case sublinkScalar:
		if len(res.vals) == 0 {
			return NullDatum, nil
		}
		return res.vals[0], nil
	case sublinkArray:
		return Datum{A: append([]Datum(nil), res.vals...)}, nil
	}
	if s.hashable && res.set != nil {
		if test.Null {
			if len(res.vals) == 0 {
				return boolDatum(false), nil
			}
			return NullDatum, nil
		}
		if res.set[string(appendHashKey(nil, s.keyType, test))] {
			return boolDatum(true), nil
		}
		if res.hasNull {
			return NullDatum, nil
		}
		return boolDatum(false), nil
	}
	return quantified(ec, test, res.vals, s.cmp, s.kind == sublinkAll)
}

// result runs the subquery (or returns the kept result of an
// uncorrelated one).
func (s *sublinkExpr) result(ec *evalCtx, row []Datum) (*subResult, error) {
	if !s.correlated {
		if r, ok := ec.subCache[s]; ok {
			return r, nil
		}
	}
	ec.outer = append(ec.outer, row)
	res := &subResult{}
	err := ec.exec.runSubplan(ec, s.plan, func(out []Datum) error {
		switch s.kind {
		case sublinkExists:
			res.exists = true
			return errStopScan
		case sublinkScalar:
			if len(res.vals) > 0 {
				return pgerr.New(pgerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
			}
		}
		v := out[0]
		res.vals = append(res.vals, v)
		if v.Null {
			res.hasNull = true
		}
		return nil
	})
	ec.outer = ec.outer[:len(ec.outer)-1]
	if err != nil && err != errStopScan {
		return nil, err
	}
	if s.hashable && len(res.vals) > 8 {
		res.set = make(map[string]bool, len(res.vals))
		for _, v := range res.vals {
			if !v.Null {
				res.set[string(appendHashKey(nil, s.keyType, v))] = true
			}
		}
	}
	if !s.correlated {
		if ec.subCache == nil {
			ec.subCache = map[*sublinkExpr]*subResult{}
		}
		ec.subCache[s] = res
	}
	return res, nil
}

// slotExpr reads one operand of a comparison compiled once and applied to
// many value pairs (ANY, ALL, IN over a subquery).
type slotExpr struct {
	v *Datum
	t Type
}

func (s *slotExpr) typ() Type                             { return s.t }
func (s *slotExpr) eval(*evalCtx, []Datum) (Datum, error) { return *s.v, nil }

// comparison compiles `a op b` for operands of types lt and rt and returns
// it as a function of the two values.
func (a *analyzer) comparison(op string, lt, rt Type, loc int32) (func(ec *evalCtx, x, y Datum) (Datum, error), Type, error) {
	var pair [2]Datum
	l := &slotExpr{v: &pair[0], t: lt}
	r := &slotExpr{v: &pair[1], t: rt}
	e, err := a.binop(op, l, r, loc)
	if err != nil {
		return nil, Type{}, err
	}
	if e.typ().OID != OIDBool {
		return nil, Type{}, posErr(pgerr.New(pgerr.DatatypeMismatch, "op ANY/ALL (array) requires operator to yield boolean"), loc)
	}
	var common Type
	if b, ok := e.(*binopExpr); ok {
		common = b.l.typ()
	}
	return func(ec *evalCtx, x, y Datum) (Datum, error) {
		pair[0], pair[1] = x, y
		return e.eval(ec, nil)
	}, common, nil
}

// sublink compiles a SubLink node.
func (a *analyzer) sublink(sl *pg.SubLink) (expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, posErr(pgerr.NotSupported("this kind of subquery is not supported"), sl.Location)
	}
	if a.subquery == nil {
		return nil, posErr(pgerr.NotSupported("subqueries are not supported here"), sl.Location)
	}
	sub, cols, correlated, err := a.subquery(a, sel)
	if err != nil {
		return nil, err
	}
	e := &sublinkExpr{plan: sub, correlated: correlated}
	one := func() error {
		if len(cols) != 1 {
			return posErr(pgerr.New(pgerr.SyntaxError, "subquery must return only one column"), sl.Location)
		}
		return nil
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		e.kind, e.t = sublinkExists, TypeBool
	case pg.SubLinkType_EXPR_SUBLINK:
		if err := one(); err != nil {
			return nil, err
		}
		e.kind, e.t = sublinkScalar, cols[0].Type
	case pg.SubLinkType_ARRAY_SUBLINK:
		if err := one(); err != nil {
			return nil, err
		}
		at, ok := arrayOf(cols[0].Type)
		if !ok {
			return nil, posErr(pgerr.NotSupported("arrays of type %s are not supported", cols[0].Type.Name), sl.Location)
		}
		e.kind, e.t = sublinkArray, at
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		if err := one(); err != nil {
			return nil, err
		}
		op := "="
		if len(sl.OperName) > 0 {
			op = nodeName(sl.OperName[len(sl.OperName)-1])
		}
		test, err := a.expr(sl.Testexpr)
		if err != nil {
			return nil, err
		}
		ct := cols[0].Type
		if isUnknown(test) {
			if test, err = a.coerceUnknown(test, ct); err != nil {
				return nil, err
			}
		}
		cmp, common, err := a.comparison(op, test.typ(), ct, sl.Location)
		if err != nil {
			return nil, err
		}
		e.test, e.cmp, e.t = test, cmp, TypeBool
		e.kind = sublinkAny
		if sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK {
			e.kind = sublinkAll
		}
		if e.kind == sublinkAny && op == "=" && common.OID == ct.OID && test.typ().OID == ct.OID && !isArray(ct) {
			e.hashable, e.keyType = true, ct
		}
	default:
		return nil, posErr(pgerr.NotSupported("%s subqueries are not supported", sl.SubLinkType.String()), sl.Location)
	}
	return e, nil
}
