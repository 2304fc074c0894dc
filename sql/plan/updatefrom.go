package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// UPDATE ... FROM and DELETE ... USING: the target table joined with
// other FROM items, one level row per combination (sql/analyze/scope.go), as
// PostgreSQL plans them — a join whose rows carry the target's ctid and
// tableoid, under a ModifyTable node.
//
// Locks are PostgreSQL's: the target RowExclusiveLock (a partitioned
// target: the table when the statement is planned, the partitions pruning
// keeps and their indexes when it runs, partitions.go), every other table
// and its indexes AccessShareLock, as the planner opens them (from.go).
// The rows of the other tables are not row-locked.
//
// Execution reads every combination with the statement's snapshot, then
// changes the target row of each in turn. A target row that joins several
// rows of the other items is changed once, by the first combination: the
// later ones find it changed by this command (TMSelfModified) and skip it,
// as ExecUpdate and ExecDelete do — which row of the other side wins is
// the join's order, as arbitrary as it is in PostgreSQL. A target row
// that a concurrent transaction is changing is waited for; under READ
// COMMITTED, when that transaction committed an update, the newest
// version is re-read and every condition of the statement re-checked
// against it with the same rows of the other items (EvalPlanQual with
// ROW_MARK_REFERENCE rows); under REPEATABLE READ it is error 40001.

// joinModifyPlan is a compiled UPDATE ... FROM or DELETE ... USING.
type JoinModifyPlan struct {
	T       *catalog.TableDef // the target named
	From    PlanNode
	Width   int
	OneTime []expr.Expr       // conditions over no FROM item
	Off     int               // where the target's columns start in the level row
	Recheck []expr.Expr       // every WHERE and ON condition, for EvalPlanQual
	Set     map[int]expr.Expr // UPDATE: column → new value over the level row
	Delete  bool
	Ret     []expr.Expr // RETURNING over the level row (the new version for UPDATE)
	RetBuf  []types.Datum
	RetOut  []types.Datum
	Leaves  map[uint32]*joinLeaf // the target's leaf partitions met, by OID
	Pu      PartUpdate
}

// joinLeaf is a table whose rows the statement changes: the target, or
// one of its leaf partitions.
type joinLeaf struct {
	Mp ModifyPlan // t, indexes, set and part, for keysChanged
}

// compileJoinModify compiles UPDATE (del false) or DELETE with FROM (or
// USING) items.
func (s *Planner) compileJoinModify(rv *pg.RangeVar, from []*pg.Node, where *pg.Node, setList, retList []*pg.Node, del bool, params *[]types.Type, st *Stmt) error {
	t, err := s.ResolveTable(rv)
	if err != nil {
		return err
	}
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	cat := s.Cat()
	a := NewAnalyzer(&s.Backend, params)
	sc := analyze.NewScope(nil)
	la := a.Level(sc)
	fb := &fromBuilder{a: la, sc: sc, keepSides: true}
	p := &JoinModifyPlan{T: t, Delete: del, Leaves: map[uint32]*joinLeaf{}}

	// A plain target goes last, on the inner side of its join, so that
	// an equality with the other items can look it up in its index; a
	// partitioned one first, scanned partition by partition.
	var target RowSource
	if t.Partitioned() {
		ps := newPartitionedSource(t, alias, locks.RowExclusiveLock)
		ps.Only = !rv.Inh
		target = ps
	} else {
		target = NewTableSource(t, alias)
	}
	addTarget := func() (PlanNode, error) {
		p.Off = sc.Width
		leaf, err := fb.addLeaf(target, alias, nil, len(t.Cols), t, rv.Location)
		if err != nil {
			return nil, err
		}
		return leaf, nil
	}
	var root PlanNode
	if t.Partitioned() {
		if root, err = addTarget(); err != nil {
			return err
		}
	}
	for _, n := range from {
		node, err := fb.item(n)
		if err != nil {
			return err
		}
		if root == nil {
			root = node
		} else {
			root = &JoinNode{Kind: JoinInner, Left: root, Right: node}
		}
	}
	if !t.Partitioned() {
		leaf, err := addTarget()
		if err != nil {
			return err
		}
		root = &JoinNode{Kind: JoinInner, Left: root, Right: leaf}
		// * lists the target's columns first, as in PostgreSQL
		var tcols, others []analyze.NsColumn
		for _, c := range sc.Star {
			if c.Item == fb.nitems-1 {
				tcols = append(tcols, c)
			} else {
				others = append(others, c)
			}
		}
		sc.Star = append(tcols, others...)
	}
	p.From = root

	var conds []expr.Expr
	if where != nil {
		wa := la.NoAggs("WHERE")
		w, err := wa.Expr(where)
		if err != nil {
			return err
		}
		if w, err = wa.AsBool(w, "WHERE", analyze.ExprLocation(where)); err != nil {
			return err
		}
		conds = conjuncts(w)
	}
	var dup error
	if !del {
		if p.Set, dup, err = s.compileSetList(la.NoAggs("UPDATE"), t, setList); err != nil {
			return err
		}
	}
	if len(retList) > 0 {
		rp := &SelectPlan{}
		if err := targetList(la.NoAggs("RETURNING"), fb, retList, rp); err != nil {
			return err
		}
		p.Ret, st.Cols = rp.Targets, rp.Cols
		p.RetOut = make([]types.Datum, len(rp.Targets))
	}
	if dup != nil {
		return dup
	}
	p.Recheck = append(p.Recheck, conds...)
	for _, on := range fb.ons {
		p.Recheck = append(p.Recheck, on.e)
	}
	if p.OneTime, err = fb.place(root, conds); err != nil {
		return err
	}
	fb.markPlanOnly()
	p.Width = sc.Width
	p.RetBuf = make([]types.Datum, p.Width)

	st.Rels = append(relationLocks(cat, t, locks.RowExclusiveLock), fb.rels...)
	st.Writes = true
	st.Tag = "UPDATE"
	if del {
		st.Tag = "DELETE"
	}
	st.Plan = p
	return nil
}

// compileSetList compiles the SET list of an UPDATE (or of ON CONFLICT DO
// UPDATE) against table t: column position → new value, typed for the
// column. Two assignments to one column are reported in dup, which the
// caller raises after the rest of the statement is analysed (PostgreSQL's
// rewriter finds them, after parse analysis).
func (s *Planner) compileSetList(a *analyze.Analyzer, t *catalog.TableDef, list []*pg.Node) (set map[int]expr.Expr, dup error, err error) {
	set = map[int]expr.Expr{}
	for _, n := range list {
		rt := n.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, nil, pgerr.NotSupported("UPDATE of array elements or subfields is not supported")
		}
		i := t.ColIndex(rt.Name)
		if i < 0 && IsSystemColumn(rt.Name) {
			return nil, nil, expr.PosErr(pgerr.NotSupported("cannot assign to system column \"%s\"", rt.Name), rt.Location)
		}
		if i < 0 {
			return nil, nil, expr.PosErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name), rt.Location)
		}
		val := rt.Val
		if mar := val.GetMultiAssignRef(); mar != nil {
			// (a, b) = (x, y): column colno takes the row's item colno
			row := mar.Source.GetRowExpr()
			switch {
			case mar.Source.GetSubLink() != nil:
				return nil, nil, pgerr.NotSupported("UPDATE SET (...) = (SELECT ...) is not supported")
			case row == nil:
				return nil, nil, expr.PosErr(pgerr.NotSupported("source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"), analyze.ExprLocation(mar.Source))
			case len(row.Args) != int(mar.Ncolumns):
				return nil, nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "number of columns does not match number of values"), analyze.ExprLocation(mar.Source))
			}
			val = row.Args[mar.Colno-1]
		}
		var e expr.Expr
		if val.GetSetToDefault() != nil {
			if t.Cols[i].Default != "" {
				if e, err = s.CompileDefault(a, &t.Cols[i]); err != nil {
					return nil, nil, err
				}
			} else {
				e = &expr.ConstExpr{T: t.Cols[i].Type(), D: types.NullDatum}
			}
		} else {
			if e, err = a.Expr(val); err != nil {
				return nil, nil, err
			}
			lit := e
			if e, err = a.AssignTo(e, &t.Cols[i]); err != nil {
				return nil, nil, a.LiteralError(err, lit, &t.Cols[i], val)
			}
		}
		if _, ok := set[i]; ok && dup == nil {
			dup = pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", rt.Name)
		}
		set[i] = e
	}
	return set, dup, nil
}

// leaf returns what changing rows of table oid (the target or one of its
// partitions) needs.
func (p *JoinModifyPlan) Leaf(cat *catalog.CatalogState, oid uint32) (*joinLeaf, error) {
	if l := p.Leaves[oid]; l != nil && cat.Tables[oid] == l.Mp.T {
		return l, nil
	}
	t := cat.Tables[oid]
	if t == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", oid)
	}
	l := &joinLeaf{Mp: ModifyPlan{T: t, Indexes: cat.TableIndexes(t), Set: p.Set, Delete: p.Delete, Part: &p.Pu}}
	p.Leaves[oid] = l
	return l, nil
}

// isSystemColumn reports whether name is one of PostgreSQL's system
// columns.
func IsSystemColumn(name string) bool {
	switch name {
	case "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid":
		return true
	}
	return false
}
