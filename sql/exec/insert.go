package exec

import (
	"strings"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// checkConstraints enforces t's CHECK constraints on a new row version
// (23514 with the failing row, as ExecConstraints reports it).
func (s *Executor) checkConstraints(ec *expr.EvalCtx, t *catalog.TableDef, row []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for i := range rc.checks {
		c := &rc.checks[i]
		v, err := c.E.Eval(ec, row)
		if err != nil {
			return err
		}
		if !v.Null && v.I == 0 {
			return pgerr.New(pgerr.CheckViolation, "new row for relation \"%s\" violates check constraint \"%s\"", t.Name, c.Name).
				WithDetail("Failing row contains "+plan.FailingRow(t, row)+".").OnConstraint(t.Name, c.Name)
		}
	}
	return nil
}

// buildInsertRow makes a full table row from target values and defaults;
// row is the statement's buffer (the row is written, never kept: index
// keys and foreign-key events copy what they need); set marks the
// columns the statement gives.
func (x *Executor) buildInsertRow(ec *expr.EvalCtx, p *plan.InsertPlan, vals, row []types.Datum, set []bool) error {
	for j, c := range p.Targets {
		row[c] = vals[j]
	}
	for i := range row {
		if set[i] {
			continue
		}
		if p.Defs[i] == nil {
			row[i] = types.NullDatum
			continue
		}
		v, err := p.Defs[i].Eval(ec, nil)
		if err != nil {
			return err
		}
		row[i] = v
	}
	return nil
}

func (s *Executor) execInsert(ec *expr.EvalCtx, p *plan.InsertPlan, emit func([]types.Datum) error) (int64, error) {
	var n int64
	if p.Route != nil {
		s.routeBegin(p.Route)
		defer s.routeEnd(p.Route)
	}
	if !p.T.Partitioned() {
		defer s.closeIndexLocks(&p.IxLocks)
		if err := s.openIndexLocks(ec, &p.IxLocks, p.T); err != nil {
			return 0, err
		}
	}
	row := s.takeRow(len(p.T.Cols)) // scratch (executor.go)
	defer s.giveRow(row)
	set := make([]bool, len(p.T.Cols))
	for _, c := range p.Targets {
		set[c] = true
	}
	insertOne := func(vals []types.Datum) error {
		if err := s.buildInsertRow(ec, p, vals, row, set); err != nil {
			return err
		}
		if p.Conflict != nil {
			done, err := s.upsertRow(ec, p, row, emit)
			if done {
				n++
			}
			return err
		}
		var tid storage.TID
		var err error
		leaf := p.T
		if p.Route != nil {
			tid, leaf, err = s.routeInsertTID(ec, p.Route, row)
		} else {
			tid, err = s.InsertRow(ec, p.T, p.Indexes, row)
		}
		if err != nil {
			return err
		}
		n++
		return s.emitReturning(ec, p.Ret, row, tid, leaf, emit)
	}
	if p.Sel != nil {
		// each row goes in as the SELECT produces it: the rows this
		// command inserts carry its command id, which its own scans do
		// not see (as in PostgreSQL), so INSERT INTO t SELECT ... FROM t
		// reads only the rows that were there before
		if err := s.RunSelect(ec, p.Sel, insertOne); err != nil {
			return 0, err
		}
		return n, nil
	}
	vals := s.takeRow(len(p.Targets))
	defer s.giveRow(vals)
	for _, r := range p.Rows {
		for j, e := range r {
			v, err := e.Eval(ec, nil)
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

// insertRow writes a row and its index entries, enforcing NOT NULL, CHECK
// constraints and unique indexes.
func (s *Executor) InsertRow(ec *expr.EvalCtx, t *catalog.TableDef, indexes []*catalog.IndexDef, row []types.Datum) (storage.TID, error) {
	if err := plan.CheckNotNull(t, row); err != nil {
		return storage.TID{}, err
	}
	if err := s.checkConstraints(ec, t, row); err != nil { // CHECK constraints
		return storage.TID{}, err
	}
	if _, err := s.Txn.AssignXid(); err != nil {
		return storage.TID{}, err
	}
	s.rowBuf = catalog.AppendRow(s.rowBuf[:0], t, row)
	tid, err := s.Store.Insert(ec.Ctx, s.Proc, &s.Txn, storage.RelID(t.RelFile), s.rowBuf, plan.Fillfactor(t))
	if err != nil {
		return storage.TID{}, err
	}
	s.TabStats.Inserted(t.OID, 1) // pg_stat_all_tables (sql/stats)
	if err := s.insertIndexEntries(ec, t, indexes, row, tid); err != nil {
		return storage.TID{}, err
	}
	return tid, s.afterInsertRow(t, tid, row) // queue its foreign-key checks (ri.go)
}

func (s *Executor) insertIndexEntries(ec *expr.EvalCtx, t *catalog.TableDef, indexes []*catalog.IndexDef, row []types.Datum, tid storage.TID) error {
	for _, ix := range indexes {
		key, null := s.IndexKey(t, ix, row)
		if ix.Unique && !null { // a key with a NULL is never a duplicate
			if err := s.insertUnique(ec, t, ix, row, key, tid); err != nil {
				return err
			}
			continue
		}
		if err := s.Store.IndexInsert(s.Proc, storage.RelID(ix.RelFile), key, tid); err != nil {
			return err
		}
	}
	return nil
}

// IndexKey encodes row's key for ix and reports whether a key column is
// NULL. Keys with NULLs are indexed too (they sort after every value, as
// PostgreSQL's default NULLS LAST), so scans of a key prefix and IS NULL
// find them, but they are never duplicates of one another.
func (s *Executor) IndexKey(t *catalog.TableDef, ix *catalog.IndexDef, row []types.Datum) (key []byte, null bool) {
	return s.AppendIndexKey(nil, t, ix, row)
}

// AppendIndexKey appends row's key for ix to dst (IndexKey's encoding).
func (s *Executor) AppendIndexKey(dst []byte, t *catalog.TableDef, ix *catalog.IndexDef, row []types.Datum) (key []byte, null bool) {
	var typs [4]types.Type
	var vals [4]types.Datum
	ts, vs := typs[:0], vals[:0]
	for _, c := range ix.Cols {
		null = null || row[c].Null
		ts = append(ts, t.Cols[c].Type())
		vs = append(vs, row[c])
	}
	return catalog.AppendKey(dst, ts, vs), null
}

func (s *Executor) UniqueViolation(t *catalog.TableDef, ix *catalog.IndexDef, row []types.Datum) error {
	var names, vals []string
	for _, c := range ix.Cols {
		names = append(names, t.Cols[c].Name)
		vals = append(vals, string(types.AppendText(nil, t.Cols[c].Type(), row[c], nil)))
	}
	return pgerr.New(pgerr.UniqueViolation, "duplicate key value violates unique constraint \"%s\"", ix.Name).
		WithDetail("Key ("+strings.Join(names, ", ")+")=("+strings.Join(vals, ", ")+") already exists.").
		OnConstraint(t.Name, ix.Name)
}

// emit evaluates the list for a written row and sends the result.
func (x *Executor) emitReturning(ec *expr.EvalCtx, r *plan.Returning, row []types.Datum, tid storage.TID, table *catalog.TableDef, emit func([]types.Datum) error) error {
	if r == nil {
		return nil
	}
	copy(r.Buf, row[:r.Ncols])
	r.Buf[r.Ncols+plan.SysColCtid] = tidDatum(tid)
	r.Buf[r.Ncols+plan.SysColTableoid] = types.IntDatum(int64(table.OID))
	for i, t := range r.Targets {
		v, err := t.Eval(ec, r.Buf)
		if err != nil {
			return err
		}
		r.Out[i] = v
	}
	return emit(r.Out)
}
