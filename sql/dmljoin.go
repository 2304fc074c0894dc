package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// UPDATE ... FROM and DELETE ... USING: the target table joined with
// other FROM items, one level row per combination (scope.go), as
// PostgreSQL plans them — a join whose rows carry the target's ctid and
// tableoid, under a ModifyTable node.
//
// Locks are PostgreSQL's: the target RowExclusiveLock (a partitioned
// target: the table when the statement is planned, the partitions pruning
// keeps and their indexes when it runs, partscan.go), every other table
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
type joinModifyPlan struct {
	t       *TableDef // the target named
	from    planNode
	width   int
	oneTime []expr       // conditions over no FROM item
	off     int          // where the target's columns start in the level row
	recheck []expr       // every WHERE and ON condition, for EvalPlanQual
	set     map[int]expr // UPDATE: column → new value over the level row
	delete  bool
	ret     []expr // RETURNING over the level row (the new version for UPDATE)
	retBuf  []Datum
	retOut  []Datum
	leaves  map[uint32]*joinLeaf // the target's leaf partitions met, by OID
	pu      partUpdate
}

// joinLeaf is a table whose rows the statement changes: the target, or
// one of its leaf partitions.
type joinLeaf struct {
	mp modifyPlan // t, indexes, set and part, for keysChanged
}

// compileJoinModify compiles UPDATE (del false) or DELETE with FROM (or
// USING) items.
func (s *planner) compileJoinModify(rv *pg.RangeVar, from []*pg.Node, where *pg.Node, setList, retList []*pg.Node, del bool, params *[]Type, st *Stmt) error {
	t, err := s.resolveTable(rv)
	if err != nil {
		return err
	}
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	cat := s.cat()
	a := newAnalyzer(&s.Backend, params)
	sc := newScope(nil)
	la := a.level(sc)
	fb := &fromBuilder{a: la, sc: sc}
	p := &joinModifyPlan{t: t, delete: del, leaves: map[uint32]*joinLeaf{}}

	// A plain target goes last, on the inner side of its join, so that
	// an equality with the other items can look it up in its index; a
	// partitioned one first, scanned partition by partition.
	var target rowSource
	if t.Partitioned() {
		ps := newPartitionedSource(t, alias, locks.RowExclusiveLock)
		ps.only = !rv.Inh
		target = ps
	} else {
		target = newTableSource(t, alias)
	}
	addTarget := func() (planNode, error) {
		p.off = sc.width
		leaf, err := fb.addLeaf(target, alias, nil, len(t.Cols), t, rv.Location)
		if err != nil {
			return nil, err
		}
		return leaf, nil
	}
	var root planNode
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
			root = &joinNode{kind: joinInner, left: root, right: node}
		}
	}
	if !t.Partitioned() {
		leaf, err := addTarget()
		if err != nil {
			return err
		}
		root = &joinNode{kind: joinInner, left: root, right: leaf}
		// * lists the target's columns first, as in PostgreSQL
		var tcols, others []nsColumn
		for _, c := range sc.star {
			if c.item == fb.nitems-1 {
				tcols = append(tcols, c)
			} else {
				others = append(others, c)
			}
		}
		sc.star = append(tcols, others...)
	}
	p.from = root

	var conds []expr
	if where != nil {
		wa := la.noAggs("WHERE")
		w, err := wa.expr(where)
		if err != nil {
			return err
		}
		if w, err = wa.asBool(w, "WHERE", exprLocation(where)); err != nil {
			return err
		}
		conds = conjuncts(w)
	}
	var dup error
	if !del {
		if p.set, dup, err = s.compileSetList(la.noAggs("UPDATE"), t, setList); err != nil {
			return err
		}
	}
	if len(retList) > 0 {
		rp := &selectPlan{}
		if err := targetList(la.noAggs("RETURNING"), fb, retList, rp); err != nil {
			return err
		}
		p.ret, st.cols = rp.targets, rp.cols
		p.retOut = make([]Datum, len(rp.targets))
	}
	if dup != nil {
		return dup
	}
	p.recheck = append(p.recheck, conds...)
	for _, on := range fb.ons {
		p.recheck = append(p.recheck, on.e)
	}
	if p.oneTime, err = fb.place(root, conds); err != nil {
		return err
	}
	fb.markPlanOnly()
	p.width = sc.width
	p.retBuf = make([]Datum, p.width)

	st.rels = append(relationLocks(cat, t, locks.RowExclusiveLock), fb.rels...)
	st.writes = true
	st.Tag = "UPDATE"
	if del {
		st.Tag = "DELETE"
	}
	st.plan = p
	return nil
}

// compileSetList compiles the SET list of an UPDATE (or of ON CONFLICT DO
// UPDATE) against table t: column position → new value, typed for the
// column. Two assignments to one column are reported in dup, which the
// caller raises after the rest of the statement is analysed (PostgreSQL's
// rewriter finds them, after parse analysis).
func (s *planner) compileSetList(a *analyzer, t *TableDef, list []*pg.Node) (set map[int]expr, dup error, err error) {
	set = map[int]expr{}
	for _, n := range list {
		rt := n.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, nil, pgerr.NotSupported("UPDATE of array elements or subfields is not supported")
		}
		i := t.colIndex(rt.Name)
		if i < 0 && isSystemColumn(rt.Name) {
			return nil, nil, posErr(pgerr.NotSupported("cannot assign to system column \"%s\"", rt.Name), rt.Location)
		}
		if i < 0 {
			return nil, nil, posErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name), rt.Location)
		}
		val := rt.Val
		if mar := val.GetMultiAssignRef(); mar != nil {
			// (a, b) = (x, y): column colno takes the row's item colno
			row := mar.Source.GetRowExpr()
			switch {
			case mar.Source.GetSubLink() != nil:
				return nil, nil, pgerr.NotSupported("UPDATE SET (...) = (SELECT ...) is not supported")
			case row == nil:
				return nil, nil, posErr(pgerr.NotSupported("source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"), exprLocation(mar.Source))
			case len(row.Args) != int(mar.Ncolumns):
				return nil, nil, posErr(pgerr.New(pgerr.SyntaxError, "number of columns does not match number of values"), exprLocation(mar.Source))
			}
			val = row.Args[mar.Colno-1]
		}
		var e expr
		if val.GetSetToDefault() != nil {
			if t.Cols[i].Default != "" {
				if e, err = s.compileDefault(a, &t.Cols[i]); err != nil {
					return nil, nil, err
				}
			} else {
				e = &constExpr{t: t.Cols[i].Type(), d: NullDatum}
			}
		} else {
			if e, err = a.expr(val); err != nil {
				return nil, nil, err
			}
			lit := e
			if e, err = a.assignTo(e, &t.Cols[i]); err != nil {
				return nil, nil, a.literalError(err, lit, &t.Cols[i], val)
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
func (p *joinModifyPlan) leaf(cat *catalogState, oid uint32) (*joinLeaf, error) {
	if l := p.leaves[oid]; l != nil && cat.Tables[oid] == l.mp.t {
		return l, nil
	}
	t := cat.Tables[oid]
	if t == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", oid)
	}
	l := &joinLeaf{mp: modifyPlan{t: t, indexes: cat.tableIndexes(t), set: p.set, delete: p.delete, part: &p.pu}}
	p.leaves[oid] = l
	return l, nil
}

func (s *Executor) execJoinModify(ec *evalCtx, p *joinModifyPlan, emit func([]Datum) error) (int64, error) {
	if ok, err := passes(ec, p.oneTime, nil); err != nil || !ok {
		return 0, err
	}
	clear(p.leaves)
	// a partition named directly keeps its rows; through a partitioned
	// ancestor they move to the partition their new key belongs in
	p.pu = partUpdate{router: p.pu.router}
	if p.t.Partitioned() {
		p.pu.root = p.t.OID
	}
	defer s.finishPartUpdate(&p.pu)

	buf := make([]Datum, p.width)
	var rows [][]Datum
	err := s.runNode(ec, p.from, buf, func() error {
		if ec.tick++; ec.tick&1023 == 0 {
			if err := checkCancel(ec); err != nil {
				return err
			}
		}
		rows = append(rows, append([]Datum(nil), buf...))
		return nil
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if _, err := s.txn.AssignXid(); err != nil {
		return 0, err
	}
	var n int64
	for _, level := range rows {
		done, err := s.joinModifyRow(ec, p, level, emit)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// joinModifyRow changes the target row of one combination, following it
// to its newest version under READ COMMITTED; done is false when the row
// was skipped (changed by this command already, gone, or no longer
// qualifying).
func (s *Executor) joinModifyRow(ec *evalCtx, p *joinModifyPlan, level []Datum, emit func([]Datum) error) (done bool, err error) {
	nc := len(p.t.Cols)
	ctid, toid := level[p.off+nc+sysColCtid], level[p.off+nc+sysColTableoid]
	if ctid.Null || toid.Null {
		return false, nil
	}
	l, err := p.leaf(s.cat(), uint32(toid.I))
	if err != nil {
		return false, err
	}
	t := l.mp.t
	rel := storage.RelID(t.RelFile)
	tid := storage.TID{Block: uint32(ctid.I >> 16), Offset: uint16(ctid.I)}
	newRow := make([]Datum, nc)
	for {
		var out storage.UpdateOutcome
		var moved bool
		var movedTID storage.TID
		var movedTo *TableDef
		if p.delete {
			out, err = s.store.Delete(ec.ctx, s.proc, &s.txn, rel, tid, s.rowWait(storage.WaitBlock, t))
		} else {
			old := level[p.off : p.off+nc]
			for i := range newRow {
				if e, ok := p.set[i]; ok {
					v, err := e.eval(ec, level)
					if err != nil {
						return false, err
					}
					newRow[i] = v
				} else {
					newRow[i] = old[i]
				}
			}
			if t.Parent != 0 {
				if moved, out, movedTID, movedTo, err = s.moveRow(ec, &l.mp, tid, old, newRow); err != nil {
					return false, err
				}
			}
			if !moved {
				if err := checkNotNull(t, newRow); err != nil {
					return false, err
				}
				if err := s.checkConstraints(ec, t, newRow); err != nil { // check.go
					return false, err
				}
				s.rowBuf = appendRow(s.rowBuf[:0], t, newRow)
				out, err = s.store.Update(ec.ctx, s.proc, &s.txn, rel, tid, s.rowBuf, fillfactor(t),
					l.mp.keysChanged(old, newRow), s.rowWait(storage.WaitBlock, t))
			}
		}
		if err != nil {
			return false, err
		}
		switch out.Result {
		case txn.TMOk:
			switch {
			case p.delete:
				if err := s.afterDeleteRow(t, level[p.off:p.off+nc]); err != nil { // foreign keys (ri.go)
					return false, err
				}
				return true, s.emitJoinReturning(ec, p, level, nil, tid, t, emit)
			case moved:
				return true, s.emitJoinReturning(ec, p, level, newRow, movedTID, movedTo, emit)
			}
			if err := s.insertIndexEntries(ec, t, l.mp.indexes, newRow, out.NewTID); err != nil {
				return false, err
			}
			if err := s.afterUpdateRow(t, l.mp.set, level[p.off:p.off+nc], out.NewTID, newRow); err != nil { // foreign keys (ri.go)
				return false, err
			}
			return true, s.emitJoinReturning(ec, p, level, newRow, out.NewTID, t, emit)
		case txn.TMBeingModified:
			if err := s.txn.WaitForOptions(ec.ctx, out.WaitXid, s.lockOptions(false, false)); err != nil {
				return false, err
			}
			continue
		case txn.TMUpdated, txn.TMDeleted:
			movedAway := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
			if s.txn.Isolation() != txn.ReadCommitted {
				what := "update"
				if out.Result == txn.TMDeleted && !movedAway {
					what = "delete"
				}
				return false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
			}
			if movedAway {
				return false, movedError()
			}
			if out.Result == txn.TMDeleted {
				return false, nil
			}
			next, nrow, ok, err := s.latestVersion(ec, t, out.NextTID)
			if err != nil || !ok {
				return false, err
			}
			copy(level[p.off:], nrow)
			if ok, err := passes(ec, p.recheck, level); err != nil || !ok {
				return false, err
			}
			tid = next
			continue
		}
		return false, nil // TMSelfModified (changed by this command already), TMInvisible
	}
}

// moveRow is the row movement of an UPDATE through a partitioned table:
// when newRow no longer belongs in partition mp.t, the old version is
// deleted there and newRow routed to its partition (movedTID and movedTo
// say where it went); moved reports that the deletion was attempted and
// out is its outcome.
func (s *Executor) moveRow(ec *evalCtx, mp *modifyPlan, tid storage.TID, old, newRow []Datum) (moved bool, out storage.UpdateOutcome, movedTID storage.TID, movedTo *TableDef, err error) {
	if fitsPartition(s.cat(), mp.t, newRow) {
		return false, out, movedTID, nil, nil
	}
	router := mp.part.mover()
	if router == nil {
		return false, out, movedTID, nil, partitionViolation(mp.t, newRow)
	}
	rel := storage.RelID(mp.t.RelFile)
	out, err = s.store.Delete(ec.ctx, s.proc, &s.txn, rel, tid, s.rowWait(storage.WaitBlock, mp.t))
	if err != nil || out.Result != txn.TMOk {
		return true, out, movedTID, nil, err
	}
	if err := s.store.MarkMovedPartitions(s.proc, &s.txn, rel, tid); err != nil {
		return true, out, movedTID, nil, err
	}
	if err := s.afterMoveDelete(mp.t, old); err != nil { // foreign keys (fkpart.go)
		return true, out, movedTID, nil, err
	}
	row := append([]Datum(nil), newRow...)
	if movedTID, movedTo, err = s.routeInsertTID(ec, router, row); err != nil {
		return true, out, movedTID, movedTo, err
	}
	return true, out, movedTID, movedTo, s.afterMoveUpdate(mp.t, mp.part.root, mp.set, old, row)
}

// emitReturning evaluates RETURNING over the level row, the target's part
// replaced by the row written (nil: the level row's, for DELETE) at tid of
// table t.
func (x *Executor) emitJoinReturning(ec *evalCtx, p *joinModifyPlan, level, row []Datum, tid storage.TID, t *TableDef, emit func([]Datum) error) error {
	if p.ret == nil {
		return nil
	}
	buf := p.retBuf
	copy(buf, level)
	nc := len(p.t.Cols)
	if row != nil {
		copy(buf[p.off:p.off+nc], row)
	}
	buf[p.off+nc+sysColCtid] = tidDatum(tid)
	buf[p.off+nc+sysColTableoid] = intDatum(int64(t.OID))
	for i, e := range p.ret {
		v, err := e.eval(ec, buf)
		if err != nil {
			return err
		}
		p.retOut[i] = v
	}
	return emit(p.retOut)
}

// isSystemColumn reports whether name is one of PostgreSQL's system
// columns.
func isSystemColumn(name string) bool {
	switch name {
	case "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid":
		return true
	}
	return false
}

// literalError gives the error of assigning lit to column c the position
// of the literal (val) when the literal's text is no value of the column's
// type, as PostgreSQL's parser reports input function errors; a value too
// long for the column's type modifier fails later, at no position.
func (a *analyzer) literalError(err error, lit expr, c *ColumnDef, val *pg.Node) error {
	k, ok := lit.(*constExpr)
	pe, isPg := err.(*pgerr.Error)
	if !ok || !isPg || k.d.Null || !isUnknown(k) {
		return err
	}
	base := c.Type()
	base.Mod = -1
	if _, perr := parseText(base, k.d.S, a.fold.formatCtx()); perr == nil {
		return err
	}
	return posErr(pe, exprLocation(val))
}
