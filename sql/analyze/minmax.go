package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// min() and max() through an index, as PostgreSQL's planagg.c does it: a
// query whose select list holds only min and max of columns of its one
// table is answered by one subquery per aggregate that reads the column's
// index from the right end and stops at the first non-NULL value,
//
//	SELECT max(aid) FROM t WHERE w
//	  →  SELECT (SELECT aid FROM t WHERE w AND aid IS NOT NULL ORDER BY aid DESC LIMIT 1) AS max
//
// PostgreSQL shows the subqueries as InitPlans under a Result node.

// MinMaxAgg is one min() or max() of a column.
type MinMaxAgg struct {
	Column string
	Max    bool
}

// MinMaxQuery recognises a query the rewrite applies to and returns its
// table and aggregates: one plain relation in FROM, no grouping, DISTINCT,
// ordering, limit, locking or WITH, and a select list of min(col) and
// max(col) alone (no DISTINCT, FILTER, ORDER BY or OVER in them).
func MinMaxQuery(sel *pg.SelectStmt) (*pg.RangeVar, []MinMaxAgg, bool) {
	if sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 || len(sel.FromClause) != 1 ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 ||
		len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 ||
		sel.WithClause != nil || sel.IntoClause != nil || len(sel.TargetList) == 0 {
		return nil, nil, false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil {
		return nil, nil, false
	}
	qual := rv.Relname
	if rv.Alias != nil {
		if len(rv.Alias.Colnames) > 0 {
			return nil, nil, false
		}
		qual = rv.Alias.Aliasname
	}
	var aggs []MinMaxAgg
	for _, t := range sel.TargetList {
		fc := t.GetResTarget().GetVal().GetFuncCall()
		if fc == nil || len(fc.Args) != 1 || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.Over != nil || fc.FuncVariadic {
			return nil, nil, false
		}
		schema, name := QualifiedName(fc.Funcname)
		if schema != "" && schema != "pg_catalog" || name != "min" && name != "max" {
			return nil, nil, false
		}
		cr := fc.Args[0].GetColumnRef()
		if cr == nil || len(cr.Fields) > 2 || cr.Fields[len(cr.Fields)-1].GetString_() == nil {
			return nil, nil, false
		}
		if len(cr.Fields) == 2 && NodeName(cr.Fields[0]) != qual {
			return nil, nil, false
		}
		aggs = append(aggs, MinMaxAgg{Column: NodeName(cr.Fields[len(cr.Fields)-1]), Max: name == "max"})
	}
	return rv, aggs, true
}

// RewriteMinMax returns the query MinMaxQuery recognised with each
// aggregate replaced by its subquery; sel is not changed.
func RewriteMinMax(sel *pg.SelectStmt, aggs []MinMaxAgg) *pg.SelectStmt {
	out := &pg.SelectStmt{Op: pg.SetOperation_SETOP_NONE, LimitOption: sel.LimitOption}
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		col := func() *pg.Node {
			return pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(aggs[i].Column)}, -1)
		}
		notNull := &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{
			Arg: col(), Nulltesttype: pg.NullTestType_IS_NOT_NULL, Location: -1}}}
		where := notNull
		if sel.WhereClause != nil {
			where = pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, []*pg.Node{sel.WhereClause, notNull}, -1)
		}
		dir := pg.SortByDir_SORTBY_ASC
		if aggs[i].Max {
			dir = pg.SortByDir_SORTBY_DESC
		}
		sub := &pg.SelectStmt{
			Op:          pg.SetOperation_SETOP_NONE,
			TargetList:  []*pg.Node{pg.MakeResTargetNodeWithVal(col(), -1)},
			FromClause:  sel.FromClause,
			WhereClause: where,
			SortClause:  []*pg.Node{pg.MakeSortByNode(col(), dir, pg.SortByNulls_SORTBY_NULLS_DEFAULT, -1)},
			LimitCount:  pg.MakeAConstIntNode(1, -1),
			LimitOption: pg.LimitOption_LIMIT_OPTION_COUNT,
		}
		name := rt.Name
		if name == "" {
			name = OutputName(rt.Val)
		}
		link := &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
			SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
			Subselect:   &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sub}},
			Location:    rt.Location,
		}}}
		out.TargetList = append(out.TargetList, pg.MakeResTargetNodeWithNameAndVal(name, link, rt.Location))
	}
	return out
}
