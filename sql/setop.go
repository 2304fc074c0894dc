package sql

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Set operations (UNION, INTERSECT, EXCEPT, each with ALL) and VALUES
// lists. Each becomes a plan over a single source producing its rows, so
// ORDER BY, LIMIT and OFFSET on the result work as for any query.

type setopSource struct {
	op          pg.SetOperation
	all         bool
	left, right *selectPlan
	cols        []Column
	casts       [2][]expr // per branch: output column i cast to the common type (nil = as is)
}

func (u *setopSource) name() string      { return "" }
func (u *setopSource) columns() []Column { return u.cols }

func (x *Executor) setopBranch(ec *evalCtx, u *setopSource, side int, fn func([]Datum) error) error {
	p := u.left
	if side == 1 {
		p = u.right
	}
	casts := u.casts[side]
	conv := make([]Datum, len(u.cols))
	return x.runSelect(ec, p, func(row []Datum) error {
		for i := range conv {
			if casts[i] == nil {
				conv[i] = row[i]
				continue
			}
			v, err := casts[i].eval(ec, row)
			if err != nil {
				return err
			}
			conv[i] = v
		}
		return fn(conv)
	})
}

func (x *Executor) scanSetop(ec *evalCtx, u *setopSource, fn func([]Datum) error) error {
	key := func(row []Datum) string { return rowKey(row, u.cols) }
	switch {
	case u.op == pg.SetOperation_SETOP_UNION && u.all:
		if err := x.setopBranch(ec, u, 0, fn); err != nil {
			return err
		}
		return x.setopBranch(ec, u, 1, fn)
	case u.op == pg.SetOperation_SETOP_UNION:
		seen := map[string]bool{}
		once := func(row []Datum) error {
			k := key(row)
			if seen[k] {
				return nil
			}
			seen[k] = true
			return fn(row)
		}
		if err := x.setopBranch(ec, u, 0, once); err != nil {
			return err
		}
		return x.setopBranch(ec, u, 1, once)
	}
	// INTERSECT / EXCEPT: count the right side, then stream the left.
	counts := map[string]int{}
	if err := x.setopBranch(ec, u, 1, func(row []Datum) error {
		counts[key(row)]++
		return nil
	}); err != nil {
		return err
	}
	emitted := map[string]bool{}
	return x.setopBranch(ec, u, 0, func(row []Datum) error {
		k := key(row)
		n := counts[k]
		if u.op == pg.SetOperation_SETOP_INTERSECT {
			switch {
			case u.all && n > 0:
				counts[k] = n - 1
				return fn(row)
			case !u.all && n > 0 && !emitted[k]:
				emitted[k] = true
				return fn(row)
			}
			return nil
		}
		switch { // EXCEPT
		case u.all && n > 0:
			counts[k] = n - 1
			return nil
		case u.all:
			return fn(row)
		case n == 0 && !emitted[k]:
			emitted[k] = true
			return fn(row)
		}
		return nil
	})
}

func setopName(op pg.SetOperation) string {
	switch op {
	case pg.SetOperation_SETOP_UNION:
		return "UNION"
	case pg.SetOperation_SETOP_INTERSECT:
		return "INTERSECT"
	}
	return "EXCEPT"
}

// compileSetOp compiles `larg op rarg`, resolving each column to the
// common type of the branches (unknown literals become text), with the
// left branch's column names.
func compileSetOp(a *analyzer, sel *pg.SelectStmt) (*selectPlan, error) {
	if len(sel.LockingClause) > 0 {
		return nil, pgerr.NotSupported("%s is not allowed with UNION/INTERSECT/EXCEPT", lockSpecOf(sel.LockingClause[0].GetLockingClause()).word)
	}
	branch := a.childWith(a.parentSc)
	branch.keepUnknown = true
	left, err := compileQuery(branch, sel.Larg)
	if err != nil {
		return nil, err
	}
	right, err := compileQuery(branch, sel.Rarg)
	if err != nil {
		return nil, err
	}
	name := setopName(sel.Op)
	if len(left.cols) != len(right.cols) {
		return nil, posErr(pgerr.New(pgerr.SyntaxError, "each %s query must have the same number of columns", name), right.loc(0))
	}
	u := &setopSource{op: sel.Op, all: sel.All, left: left, right: right}
	for i := range left.cols {
		lt, rt := left.cols[i].Type, right.cols[i].Type
		items, t, err := a.unifyAt([]expr{&colExpr{i: i, t: lt}, &colExpr{i: i, t: rt}}, []int32{left.loc(i), right.loc(i)}, name, -1)
		if err != nil {
			return nil, err
		}
		// an unknown literal that cannot become the common type fails
		// here, pointing at the literal, as in PostgreSQL
		for _, b := range []*selectPlan{left, right} {
			if c := b.constTarget(i); c != nil && isUnknown(c) && !c.d.Null && t.OID != OIDUnknown {
				if _, err := parseText(t, c.d.S, a.fold.formatCtx()); err != nil {
					return nil, posErr(pgerr.From(err), b.loc(i))
				}
			}
		}
		if t.OID == OIDUnknown {
			t = TypeText // unknown in every branch
			items = []expr{&castExpr{arg: items[0], t: t}, &castExpr{arg: items[1], t: t}}
		}
		for side := 0; side < 2; side++ {
			var c expr
			if items[side].typ().OID != []Type{lt, rt}[side].OID {
				c = items[side]
			}
			u.casts[side] = append(u.casts[side], c)
		}
		u.cols = append(u.cols, Column{Name: left.cols[i].Name, Type: t})
	}
	return wrapSource(a, sel, u, left.rels, right.rels, left.correlated || right.correlated, true)
}

// wrapSource makes the plan around a set operation or VALUES source:
// its columns as outputs, with ORDER BY (output columns only for a set
// operation), LIMIT and OFFSET.
func wrapSource(a *analyzer, sel *pg.SelectStmt, src rowSource, rels1, rels2 []relLock, correlated, onlyOutputs bool) (*selectPlan, error) {
	sc := newScope(a.parentSc)
	la := a.level(sc)
	fb := &fromBuilder{a: la, sc: sc}
	leaf, err := fb.addLeaf(src, "", nil, len(src.columns()), nil, -1)
	if err != nil {
		return nil, err
	}
	p := &selectPlan{from: leaf, correlated: correlated}
	for i, c := range src.columns() {
		p.targets = append(p.targets, &colExpr{i: i, t: c.Type})
		p.cols = append(p.cols, Column{Name: c.Name, Type: c.Type})
	}
	for _, sb := range sel.SortClause {
		by := sb.GetSortBy()
		k, err := compileSortKey(la.noAggs("ORDER BY"), by, p)
		if err != nil {
			return nil, err
		}
		if _, ok := k.e.(*outputRef); !ok && onlyOutputs {
			if _, ok := k.e.(*colExpr); !ok {
				return nil, posErr(pgerr.NotSupported("invalid UNION/INTERSECT/EXCEPT ORDER BY clause"), exprLocation(by.Node)).
					WithDetail("Only result column names can be used, not expressions or functions.").
					WithHint("Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
			}
		}
		p.sort = append(p.sort, k)
	}
	if err := limits(la.noAggs("LIMIT"), sel, p); err != nil {
		return nil, err
	}
	p.width = sc.width
	p.rels = append(append([]relLock(nil), rels1...), rels2...)
	p.correlated = p.correlated || sc.correlated
	return p, nil
}

// valuesSource is a VALUES list.
type valuesSource struct {
	cols []Column
	rows [][]expr
}

func (v *valuesSource) name() string      { return "*VALUES*" }
func (v *valuesSource) columns() []Column { return v.cols }
func (x *Executor) scanValues(ec *evalCtx, v *valuesSource, fn func([]Datum) error) error {
	row := make([]Datum, len(v.cols))
	for _, r := range v.rows {
		for i, e := range r {
			d, err := e.eval(ec, nil)
			if err != nil {
				return err
			}
			row[i] = d
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// compileValues compiles a VALUES list: every row the same length, each
// column resolved to its common type; columns are named column1, ...
func compileValues(a *analyzer, sel *pg.SelectStmt) (*selectPlan, error) {
	if len(sel.LockingClause) > 0 {
		return nil, pgerr.NotSupported("FOR UPDATE cannot be applied to VALUES")
	}
	sc := newScope(a.parentSc)
	la := a.level(sc)
	la.aggCtx = "VALUES"
	var rows [][]expr
	var locs [][]int32
	width := -1
	for _, vl := range sel.ValuesLists {
		items := vl.GetList().GetItems()
		if width >= 0 && len(items) != width {
			at := int32(-1)
			if len(items) > 0 {
				at = exprLocation(items[0])
			}
			return nil, posErr(pgerr.New(pgerr.SyntaxError, "VALUES lists must all be the same length"), at)
		}
		width = len(items)
		var row []expr
		var rowLocs []int32
		for _, it := range items {
			rowLocs = append(rowLocs, exprLocation(it))
			if it.GetSetToDefault() != nil {
				return nil, pgerr.NotSupported("DEFAULT is not allowed in this context")
			}
			e, err := la.expr(it)
			if err != nil {
				return nil, err
			}
			row = append(row, e)
		}
		rows = append(rows, row)
		locs = append(locs, rowLocs)
	}
	v := &valuesSource{rows: rows}
	for c := 0; c < width; c++ {
		col := make([]expr, len(rows))
		colLocs := make([]int32, len(rows))
		for r := range rows {
			col[r] = rows[r][c]
			colLocs[r] = locs[r][c]
		}
		items, t, err := la.unifyAt(col, colLocs, "VALUES", -1)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][c] = items[r]
		}
		v.cols = append(v.cols, Column{Name: "column" + strconv.Itoa(c+1), Type: t})
	}
	return wrapSource(a, sel, v, nil, nil, sc.correlated, false)
}

// loc is where output column i of a plan stands in the query, or -1.
func (p *selectPlan) loc(i int) int32 {
	if i < len(p.locs) {
		return p.locs[i]
	}
	return -1
}

// constTarget is output column i when it is a constant of a plain query.
func (p *selectPlan) constTarget(i int) *constExpr {
	if i >= len(p.targets) {
		return nil
	}
	c, _ := p.targets[i].(*constExpr)
	return c
}
