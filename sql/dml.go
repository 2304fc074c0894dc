package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

type txnHeader = txn.TupleHeader

const boolAnd = pg.BoolExprType_AND_EXPR

// resolveTable finds a table by RangeVar in the session's catalog view.
func (s *Backend) resolveTable(rv *pg.RangeVar) (*TableDef, error) {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return nil, tableNotFound(rv.Schemaname+"."+rv.Relname, rv.Location)
	}
	t := s.cat().table(rv.Relname)
	if t == nil {
		return nil, tableNotFound(rv.Relname, rv.Location)
	}
	return t, nil
}

// insertPlan is a compiled INSERT.
type insertPlan struct {
	t        *TableDef
	targets  []int    // column position of each supplied value
	rows     [][]expr // VALUES rows (typed to the target columns)
	sel      *selectPlan
	defs     []expr // DEFAULT expression per column (nil = NULL)
	indexes  []*IndexDef
	ret      *returning
	route    *partRouter // a partitioned table or a partition (partroute.go)
	conflict *onConflict // ON CONFLICT (upsert.go)
	ixLocks  execIndexLocks
}

func (s *planner) compileInsert(ins *pg.InsertStmt, params *[]Type, st *Stmt) error {
	if ins.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	t, err := s.resolveTable(ins.Relation)
	if err != nil {
		return err
	}
	cat := s.cat()
	p := &insertPlan{t: t, indexes: cat.tableIndexes(t)}
	if t.Partitioned() || t.Parent != 0 {
		p.route = newPartRouter(t)
	}
	if len(ins.Cols) == 0 {
		for i := range t.Cols {
			p.targets = append(p.targets, i)
		}
	}
	for _, c := range ins.Cols {
		rt := c.GetResTarget()
		i := t.colIndex(rt.Name)
		if i < 0 {
			return posErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name), rt.Location)
		}
		p.targets = append(p.targets, i)
	}
	a := newAnalyzer(&s.Backend, params)
	for i := range t.Cols {
		var d expr
		if t.Cols[i].Default != "" {
			if d, err = s.compileDefault(a, &t.Cols[i]); err != nil {
				return err
			}
		}
		p.defs = append(p.defs, d)
	}
	sel := ins.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
		// INSERT ... DEFAULT VALUES
		p.rows = [][]expr{{}}
		p.targets = nil
	case len(sel.ValuesLists) > 0:
		n := -1
		for _, vl := range sel.ValuesLists {
			items := vl.GetList().Items
			if n < 0 {
				n = len(items)
			} else if len(items) != n {
				return posErr(pgerr.New(pgerr.SyntaxError, "VALUES lists must all be the same length"), exprLocation(items[0]))
			}
		}
		if err := p.fitTargets(ins, n, func(i int) int32 { return exprLocation(sel.ValuesLists[0].GetList().Items[i]) }); err != nil {
			return err
		}
		for _, vl := range sel.ValuesLists {
			items := vl.GetList().Items
			row := make([]expr, len(items))
			for j, it := range items {
				if it.GetSetToDefault() != nil {
					row[j] = p.defs[p.targets[j]]
					if row[j] == nil {
						row[j] = &constExpr{t: t.Cols[p.targets[j]].Type(), d: NullDatum}
					}
					continue
				}
				e, err := a.expr(it)
				if err != nil {
					return err
				}
				if row[j], err = a.assignTo(e, &t.Cols[p.targets[j]]); err != nil {
					return err
				}
			}
			p.rows = append(p.rows, row)
		}
	default:
		sp, err := s.compileSelect(sel, params)
		if err != nil {
			return err
		}
		if err := p.fitTargets(ins, len(sp.cols), func(i int) int32 { return sp.locs[i] }); err != nil {
			return err
		}
		for j := range sp.targets {
			e, err := a.assignTo(sp.targets[j], &t.Cols[p.targets[j]])
			if err != nil {
				return err
			}
			sp.targets[j] = e
		}
		p.sel = sp
		st.rels = append(st.rels, sp.rels...)
	}
	alias := t.Name
	if ins.Relation.Alias != nil {
		alias = ins.Relation.Alias.Aliasname
	}
	var hidden *scope
	if ins.OnConflictClause != nil {
		if p.conflict, hidden, err = s.compileOnConflict(ins, t, alias, params); err != nil {
			return err
		}
	}
	if p.ret, err = s.compileReturningHiding(ins.ReturningList, t, alias, params, hidden); err != nil {
		return err
	}
	if p.ret != nil {
		st.cols = p.ret.cols
	}
	if p.conflict != nil {
		rels, err := s.finishOnConflict(p.conflict, t)
		if err != nil {
			return err
		}
		st.rels = append(st.rels, rels...)
	} else {
		// the table only: the executor locks the indexes while it runs
		st.rels = append(st.rels, relLock{oid: t.OID, mode: locks.RowExclusiveLock})
	}
	st.Tag = "INSERT"
	st.writes = true
	st.plan = p
	return nil
}

// fitTargets checks the number n of values per row against the target
// columns (transformInsertRow): more values than columns is an error, and
// so are fewer when the statement lists its columns; without a list the
// first n columns get the values and the others their defaults. loc is
// the position of value i.
func (p *insertPlan) fitTargets(ins *pg.InsertStmt, n int, loc func(i int) int32) error {
	switch {
	case n > len(p.targets):
		return posErr(pgerr.New(pgerr.SyntaxError, "INSERT has more expressions than target columns"), loc(len(p.targets)))
	case n < len(p.targets) && len(ins.Cols) > 0:
		return posErr(pgerr.New(pgerr.SyntaxError, "INSERT has more target columns than expressions"), ins.Cols[n].GetResTarget().Location)
	}
	p.targets = p.targets[:n]
	return nil
}

// assignTo converts e for storing into column c (an assignment cast).
func (a *analyzer) assignTo(e expr, c *ColumnDef) (expr, error) {
	t := c.Type()
	if isUnknown(e) {
		return a.coerceUnknown(e, t)
	}
	if e.typ().OID == t.OID && (t.Mod < 0 || e.typ().Mod == t.Mod) {
		return e, nil
	}
	if !assignable(e.typ(), t) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", c.Name, t.Name, e.typ().Name).
			WithHint("You will need to rewrite or cast the expression.")
	}
	return a.castTo(e, t, false)
}

func (s *planner) compileDefault(a *analyzer, c *ColumnDef) (expr, error) {
	tree, err := pg.Parse("SELECT " + c.Default)
	if err != nil {
		return nil, err
	}
	n := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
	e, err := a.expr(n)
	if err != nil {
		return nil, err
	}
	return a.assignTo(e, c)
}

// buildRow makes a full table row from target values and defaults.
func (x *Executor) buildInsertRow(ec *evalCtx, p *insertPlan, vals []Datum) ([]Datum, error) {
	row := make([]Datum, len(p.t.Cols))
	set := make([]bool, len(p.t.Cols))
	for j, c := range p.targets {
		row[c] = vals[j]
		set[c] = true
	}
	for i := range row {
		if set[i] {
			continue
		}
		if p.defs[i] == nil {
			row[i] = NullDatum
			continue
		}
		v, err := p.defs[i].eval(ec, nil)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

func (s *Executor) execInsert(ec *evalCtx, p *insertPlan, emit func([]Datum) error) (int64, error) {
	var n int64
	if p.route != nil {
		s.routeBegin(p.route)
		defer s.routeEnd(p.route)
	}
	if !p.t.Partitioned() {
		defer s.closeIndexLocks(&p.ixLocks)
		if err := s.openIndexLocks(ec, &p.ixLocks, p.t); err != nil {
			return 0, err
		}
	}
	insertOne := func(vals []Datum) error {
		row, err := s.buildInsertRow(ec, p, vals)
		if err != nil {
			return err
		}
		if p.conflict != nil {
			done, err := s.upsertRow(ec, p, row, emit)
			if done {
				n++
			}
			return err
		}
		var tid storage.TID
		leaf := p.t
		if p.route != nil {
			tid, leaf, err = s.routeInsertTID(ec, p.route, row)
		} else {
			tid, err = s.insertRow(ec, p.t, p.indexes, row)
		}
		if err != nil {
			return err
		}
		n++
		return s.emitReturning(ec, p.ret, row, tid, leaf, emit)
	}
	if p.sel != nil {
		// materialise first: the SELECT must not see the rows inserted
		var rows [][]Datum
		if err := s.runSelect(ec, p.sel, func(r []Datum) error {
			rows = append(rows, append([]Datum(nil), r...))
			return nil
		}); err != nil {
			return 0, err
		}
		for _, r := range rows {
			if err := insertOne(r); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	vals := make([]Datum, len(p.targets))
	for _, r := range p.rows {
		for j, e := range r {
			v, err := e.eval(ec, nil)
			if err != nil {
				return 0, err
			}
			vals[j] = v
		}
		if err := insertOne(vals); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// checkNotNull enforces NOT NULL (23502) with PostgreSQL's message.
func checkNotNull(t *TableDef, row []Datum) error {
	for i := range t.Cols {
		if t.Cols[i].NotNull && row[i].Null {
			return pgerr.New(pgerr.NotNullViolation, "null value in column \"%s\" of relation \"%s\" violates not-null constraint", t.Cols[i].Name, t.Name).
				WithDetail("Failing row contains "+failingRow(t, row)+".").OnColumn(t.Name, t.Cols[i].Name)
		}
	}
	return nil
}

func failingRow(t *TableDef, row []Datum) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range row {
		if i > 0 {
			b.WriteString(", ")
		}
		if row[i].Null {
			b.WriteString("null")
		} else {
			b.WriteString(clipValue(string(appendText(nil, t.Cols[i].Type(), row[i], nil))))
		}
	}
	b.WriteByte(')')
	return b.String()
}

// insertRow writes a row and its index entries, enforcing NOT NULL, CHECK
// constraints and unique indexes.
func (s *Executor) insertRow(ec *evalCtx, t *TableDef, indexes []*IndexDef, row []Datum) (storage.TID, error) {
	if err := checkNotNull(t, row); err != nil {
		return storage.TID{}, err
	}
	if err := s.checkConstraints(ec, t, row); err != nil { // CHECK constraints (check.go)
		return storage.TID{}, err
	}
	if _, err := s.txn.AssignXid(); err != nil {
		return storage.TID{}, err
	}
	s.rowBuf = appendRow(s.rowBuf[:0], t, row)
	tid, err := s.store.Insert(ec.ctx, s.proc, &s.txn, storage.RelID(t.RelFile), s.rowBuf, fillfactor(t))
	if err != nil {
		return storage.TID{}, err
	}
	if err := s.insertIndexEntries(ec, t, indexes, row, tid); err != nil {
		return storage.TID{}, err
	}
	return tid, s.afterInsertRow(t, tid, row) // queue its foreign-key checks (ri.go)
}

func fillfactor(t *TableDef) int {
	if t.Fillfactor == 0 {
		return 100
	}
	return t.Fillfactor
}

func (s *Executor) insertIndexEntries(ec *evalCtx, t *TableDef, indexes []*IndexDef, row []Datum, tid storage.TID) error {
	for _, ix := range indexes {
		key := s.indexKey(t, ix, row)
		if key == nil {
			continue // NULLs are not indexed for uniqueness here
		}
		if ix.Unique {
			if err := s.insertUnique(ec, t, ix, row, key, tid); err != nil {
				return err
			}
			continue
		}
		if err := s.store.IndexInsert(s.proc, storage.RelID(ix.RelFile), key, tid); err != nil {
			return err
		}
	}
	return nil
}

// indexKey encodes row's key for ix; nil when a key column is NULL.
func (s *Executor) indexKey(t *TableDef, ix *IndexDef, row []Datum) []byte {
	var typs [4]Type
	var vals [4]Datum
	ts, vs := typs[:0], vals[:0]
	for _, c := range ix.Cols {
		if row[c].Null {
			return nil
		}
		ts = append(ts, t.Cols[c].Type())
		vs = append(vs, row[c])
	}
	return appendKey(nil, ts, vs)
}

func (s *Executor) uniqueViolation(t *TableDef, ix *IndexDef, row []Datum) error {
	var names, vals []string
	for _, c := range ix.Cols {
		names = append(names, t.Cols[c].Name)
		vals = append(vals, string(appendText(nil, t.Cols[c].Type(), row[c], nil)))
	}
	return pgerr.New(pgerr.UniqueViolation, "duplicate key value violates unique constraint \"%s\"", ix.Name).
		WithDetail("Key ("+strings.Join(names, ", ")+")=("+strings.Join(vals, ", ")+") already exists.").
		OnConstraint(t.Name, ix.Name)
}
