package plan

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/txn"
)

type TxnHeader = txn.TupleHeader

// insertPlan is a compiled INSERT.
type InsertPlan struct {
	T        *catalog.TableDef
	Targets  []int         // column position of each supplied value
	Rows     [][]expr.Expr // VALUES rows (typed to the target columns)
	Sel      *SelectPlan
	Defs     []expr.Expr // DEFAULT expression per column (nil = NULL)
	Indexes  []*catalog.IndexDef
	Ret      *Returning
	Route    *PartRouter // a partitioned table or a partition (sql/exec/routing.go)
	Conflict *onConflict // ON CONFLICT (upsert.go)
	IxLocks  ExecIndexLocks
}

func (s *Planner) CompileInsert(ins *pg.InsertStmt, params *[]types.Type, st *Stmt) error {
	if ins.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	t, err := s.ResolveTable(ins.Relation)
	if err != nil {
		return err
	}
	cat := s.Cat()
	p := &InsertPlan{T: t, Indexes: cat.TableIndexes(t)}
	if t.Partitioned() || t.Parent != 0 {
		p.Route = NewPartRouter(t)
	}
	if len(ins.Cols) == 0 {
		for i := range t.Cols {
			p.Targets = append(p.Targets, i)
		}
	}
	for _, c := range ins.Cols {
		rt := c.GetResTarget()
		i := t.ColIndex(rt.Name)
		if i < 0 {
			return expr.PosErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name), rt.Location)
		}
		p.Targets = append(p.Targets, i)
	}
	a := NewAnalyzer(&s.Backend, params)
	for i := range t.Cols {
		var d expr.Expr
		if t.Cols[i].Default != "" {
			if d, err = s.CompileDefault(a, &t.Cols[i]); err != nil {
				return err
			}
		}
		p.Defs = append(p.Defs, d)
	}
	sel := ins.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
		// INSERT ... DEFAULT VALUES
		p.Rows = [][]expr.Expr{{}}
		p.Targets = nil
	case len(sel.ValuesLists) > 0:
		n := -1
		for _, vl := range sel.ValuesLists {
			items := vl.GetList().Items
			if n < 0 {
				n = len(items)
			} else if len(items) != n {
				return expr.PosErr(pgerr.New(pgerr.SyntaxError, "VALUES lists must all be the same length"), analyze.ExprLocation(items[0]))
			}
		}
		if err := p.fitTargets(ins, n, func(i int) int32 { return analyze.ExprLocation(sel.ValuesLists[0].GetList().Items[i]) }); err != nil {
			return err
		}
		for _, vl := range sel.ValuesLists {
			items := vl.GetList().Items
			row := make([]expr.Expr, len(items))
			for j, it := range items {
				if it.GetSetToDefault() != nil {
					row[j] = p.Defs[p.Targets[j]]
					if row[j] == nil {
						row[j] = &expr.ConstExpr{T: t.Cols[p.Targets[j]].Type(), D: types.NullDatum}
					}
					continue
				}
				e, err := a.Expr(it)
				if err != nil {
					return err
				}
				if row[j], err = a.AssignTo(e, &t.Cols[p.Targets[j]]); err != nil {
					return err
				}
			}
			p.Rows = append(p.Rows, row)
		}
	default:
		sp, err := s.CompileSelect(sel, params)
		if err != nil {
			return err
		}
		if err := p.fitTargets(ins, len(sp.Cols), func(i int) int32 { return sp.locs[i] }); err != nil {
			return err
		}
		for j := range sp.Targets {
			e, err := a.AssignTo(sp.Targets[j], &t.Cols[p.Targets[j]])
			if err != nil {
				return err
			}
			sp.Targets[j] = e
		}
		p.Sel = sp
		st.Rels = append(st.Rels, sp.Rels...)
	}
	alias := t.Name
	if ins.Relation.Alias != nil {
		alias = ins.Relation.Alias.Aliasname
	}
	var hidden *analyze.Scope
	if ins.OnConflictClause != nil {
		if p.Conflict, hidden, err = s.compileOnConflict(ins, t, alias, params); err != nil {
			return err
		}
	}
	if p.Ret, err = s.compileReturningHiding(ins.ReturningList, t, alias, params, hidden); err != nil {
		return err
	}
	if p.Ret != nil {
		st.Cols = p.Ret.cols
	}
	if p.Conflict != nil {
		rels, err := s.finishOnConflict(p.Conflict, t)
		if err != nil {
			return err
		}
		st.Rels = append(st.Rels, rels...)
	} else {
		// the table only: the executor locks the indexes while it runs
		st.Rels = append(st.Rels, expr.RelLock{Oid: t.OID, Mode: locks.RowExclusiveLock})
	}
	st.Tag = "INSERT"
	st.Writes = true
	st.Plan = p
	return nil
}

// fitTargets checks the number n of values per row against the target
// columns (transformInsertRow): more values than columns is an error, and
// so are fewer when the statement lists its columns; without a list the
// first n columns get the values and the others their defaults. loc is
// the position of value i.
func (p *InsertPlan) fitTargets(ins *pg.InsertStmt, n int, loc func(i int) int32) error {
	switch {
	case n > len(p.Targets):
		return expr.PosErr(pgerr.New(pgerr.SyntaxError, "INSERT has more expressions than target columns"), loc(len(p.Targets)))
	case n < len(p.Targets) && len(ins.Cols) > 0:
		return expr.PosErr(pgerr.New(pgerr.SyntaxError, "INSERT has more target columns than expressions"), ins.Cols[n].GetResTarget().Location)
	}
	p.Targets = p.Targets[:n]
	return nil
}

func (s *Planner) CompileDefault(a *analyze.Analyzer, c *catalog.ColumnDef) (expr.Expr, error) {
	tree, err := pg.Parse("SELECT " + c.Default)
	if err != nil {
		return nil, err
	}
	n := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
	e, err := a.Expr(n)
	if err != nil {
		return nil, err
	}
	return a.AssignTo(e, c)
}

// checkNotNull enforces NOT NULL (23502) with PostgreSQL's message.
func CheckNotNull(t *catalog.TableDef, row []types.Datum) error {
	for i := range t.Cols {
		if t.Cols[i].NotNull && row[i].Null {
			return pgerr.New(pgerr.NotNullViolation, "null value in column \"%s\" of relation \"%s\" violates not-null constraint", t.Cols[i].Name, t.Name).
				WithDetail("Failing row contains "+FailingRow(t, row)+".").OnColumn(t.Name, t.Cols[i].Name)
		}
	}
	return nil
}

func FailingRow(t *catalog.TableDef, row []types.Datum) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range row {
		if i > 0 {
			b.WriteString(", ")
		}
		if row[i].Null {
			b.WriteString("null")
		} else {
			b.WriteString(catalog.ClipValue(string(types.AppendText(nil, t.Cols[i].Type(), row[i], nil))))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func Fillfactor(t *catalog.TableDef) int {
	if t.Fillfactor == 0 {
		return 100
	}
	return t.Fillfactor
}
