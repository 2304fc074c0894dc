package plan

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/types"
)

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
func compileSetOp(a *analyze.Analyzer, sel *pg.SelectStmt) (*SelectPlan, error) {
	if len(sel.LockingClause) > 0 {
		return nil, pgerr.NotSupported("%s is not allowed with UNION/INTERSECT/EXCEPT", lockSpecOf(sel.LockingClause[0].GetLockingClause()).Word)
	}
	branch := a.ChildWith(a.ParentSc)
	branch.KeepUnknown = true
	left, err := compileQuery(branch, sel.Larg)
	if err != nil {
		return nil, err
	}
	right, err := compileQuery(branch, sel.Rarg)
	if err != nil {
		return nil, err
	}
	name := setopName(sel.Op)
	if len(left.Cols) != len(right.Cols) {
		return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "each %s query must have the same number of columns", name), right.loc(0))
	}
	u := &SetopSource{Op: sel.Op, All: sel.All, Left: left, Right: right}
	for i := range left.Cols {
		lt, rt := left.Cols[i].Type, right.Cols[i].Type
		items, t, err := a.UnifyAt([]expr.Expr{&expr.ColExpr{I: i, T: lt}, &expr.ColExpr{I: i, T: rt}}, []int32{left.loc(i), right.loc(i)}, name, -1)
		if err != nil {
			return nil, err
		}
		// an unknown literal that cannot become the common type fails
		// here, pointing at the literal, as in PostgreSQL
		for _, b := range []*SelectPlan{left, right} {
			if c := b.constTarget(i); c != nil && analyze.IsUnknown(c) && !c.D.Null && t.OID != types.OIDUnknown {
				if _, err := types.ParseText(t, c.D.S, a.Fold.FormatCtx()); err != nil {
					return nil, expr.PosErr(pgerr.From(err), b.loc(i))
				}
			}
		}
		if t.OID == types.OIDUnknown {
			t = types.TypeText // unknown in every branch
			items = []expr.Expr{&expr.CastExpr{Arg: items[0], T: t}, &expr.CastExpr{Arg: items[1], T: t}}
		}
		for side := 0; side < 2; side++ {
			var c expr.Expr
			if items[side].Type().OID != []types.Type{lt, rt}[side].OID {
				c = items[side]
			}
			u.Casts[side] = append(u.Casts[side], c)
		}
		u.Cols = append(u.Cols, types.Column{Name: left.Cols[i].Name, Type: t})
	}
	return wrapSource(a, sel, u, left.Rels, right.Rels, left.Correlated || right.Correlated, true)
}

// wrapSource makes the plan around a set operation or VALUES source:
// its columns as outputs, with ORDER BY (output columns only for a set
// operation), LIMIT and OFFSET.
func wrapSource(a *analyze.Analyzer, sel *pg.SelectStmt, src RowSource, rels1, rels2 []expr.RelLock, correlated, onlyOutputs bool) (*SelectPlan, error) {
	sc := analyze.NewScope(a.ParentSc)
	la := a.Level(sc)
	fb := &fromBuilder{a: la, sc: sc}
	leaf, err := fb.addLeaf(src, "", nil, len(src.columns()), nil, -1)
	if err != nil {
		return nil, err
	}
	p := &SelectPlan{From: leaf, Correlated: correlated}
	for i, c := range src.columns() {
		p.Targets = append(p.Targets, &expr.ColExpr{I: i, T: c.Type})
		p.Cols = append(p.Cols, types.Column{Name: c.Name, Type: c.Type})
	}
	for _, sb := range sel.SortClause {
		by := sb.GetSortBy()
		k, err := compileSortKey(la.NoAggs("ORDER BY"), by, p)
		if err != nil {
			return nil, err
		}
		if _, ok := k.E.(*outputRef); !ok && onlyOutputs {
			if _, ok := k.E.(*expr.ColExpr); !ok {
				return nil, expr.PosErr(pgerr.NotSupported("invalid UNION/INTERSECT/EXCEPT ORDER BY clause"), analyze.ExprLocation(by.Node)).
					WithDetail("Only result column names can be used, not expressions or functions.").
					WithHint("Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
			}
		}
		p.Sort = append(p.Sort, k)
	}
	if err := limits(la.NoAggs("LIMIT"), sel, p); err != nil {
		return nil, err
	}
	p.Width = sc.Width
	p.Rels = append(append([]expr.RelLock(nil), rels1...), rels2...)
	p.Correlated = p.Correlated || sc.Correlated
	return p, nil
}

// compileValues compiles a VALUES list: every row the same length, each
// column resolved to its common type; columns are named column1, ...
func compileValues(a *analyze.Analyzer, sel *pg.SelectStmt) (*SelectPlan, error) {
	if len(sel.LockingClause) > 0 {
		return nil, pgerr.NotSupported("FOR UPDATE cannot be applied to VALUES")
	}
	sc := analyze.NewScope(a.ParentSc)
	la := a.Level(sc)
	la.AggCtx = "VALUES"
	var rows [][]expr.Expr
	var locs [][]int32
	width := -1
	for _, vl := range sel.ValuesLists {
		items := vl.GetList().GetItems()
		if width >= 0 && len(items) != width {
			at := int32(-1)
			if len(items) > 0 {
				at = analyze.ExprLocation(items[0])
			}
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "VALUES lists must all be the same length"), at)
		}
		width = len(items)
		var row []expr.Expr
		var rowLocs []int32
		for _, it := range items {
			rowLocs = append(rowLocs, analyze.ExprLocation(it))
			if it.GetSetToDefault() != nil {
				return nil, pgerr.NotSupported("DEFAULT is not allowed in this context")
			}
			e, err := la.Expr(it)
			if err != nil {
				return nil, err
			}
			row = append(row, e)
		}
		rows = append(rows, row)
		locs = append(locs, rowLocs)
	}
	v := &ValuesSource{Rows: rows}
	for c := 0; c < width; c++ {
		col := make([]expr.Expr, len(rows))
		colLocs := make([]int32, len(rows))
		for r := range rows {
			col[r] = rows[r][c]
			colLocs[r] = locs[r][c]
		}
		items, t, err := la.UnifyAt(col, colLocs, "VALUES", -1)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][c] = items[r]
		}
		v.Cols = append(v.Cols, types.Column{Name: "column" + strconv.Itoa(c+1), Type: t})
	}
	return wrapSource(a, sel, v, nil, nil, sc.Correlated, false)
}

// loc is where output column i of a plan stands in the query, or -1.
func (p *SelectPlan) loc(i int) int32 {
	if i < len(p.locs) {
		return p.locs[i]
	}
	return -1
}

// constTarget is output column i when it is a constant of a plain query.
func (p *SelectPlan) constTarget(i int) *expr.ConstExpr {
	if i >= len(p.Targets) {
		return nil
	}
	c, _ := p.Targets[i].(*expr.ConstExpr)
	return c
}
