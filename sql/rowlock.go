package sql

import (
	"bytes"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// Row locks for the SQL layer: the strength of an UPDATE, how DML waits for
// row lockers, and lockRow — what SELECT ... FOR UPDATE | FOR NO KEY UPDATE
// | FOR SHARE | FOR KEY SHARE [NOWAIT | SKIP LOCKED] and foreign-key checks
// (FOR KEY SHARE on the referenced row) call for each row they lock, as
// PostgreSQL's ExecLockRows calls table_tuple_lock. See storage/rowlock.go
// for the locking itself.

// keysChanged reports whether an UPDATE from old to new changes a column
// of a unique index of the table — PostgreSQL's key columns
// (INDEX_ATTR_BITMAP_KEY), which decide between FOR NO KEY UPDATE and FOR
// UPDATE strength, and so whether FOR KEY SHARE lockers (foreign-key
// checks) make the update wait.
func (p *modifyPlan) keysChanged(old, new []Datum) bool {
	var a, b []byte
	for _, ix := range p.indexes {
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if _, set := p.set[c]; !set {
				continue
			}
			if old[c].Null != new[c].Null {
				return true
			}
			if old[c].Null {
				continue
			}
			typ := []Type{p.t.Cols[c].Type()}
			a = appendKey(a[:0], typ, old[c:c+1])
			b = appendKey(b[:0], typ, new[c:c+1])
			if !bytes.Equal(a, b) {
				return true
			}
		}
	}
	return false
}

// rowWait is how this session's DML and row locks on table t wait for
// conflicting transactions: with its lock_timeout and deadlock_timeout,
// tuple locks tagged with t's OID.
func (s *Executor) rowWait(policy storage.WaitPolicy, t *TableDef) storage.RowWait {
	return storage.RowWait{Policy: policy, Lock: s.lockOptions(false, false), RelOID: t.OID}
}

// lockRow row-locks the version at tid of table t with strength mode for
// the current (sub)transaction (ExecLockRows over heapam_tuple_lock).
// Under READ COMMITTED, if a committed transaction replaced the version,
// the newest version is locked instead provided recheck — the statement's
// WHERE clause over the new values; nil accepts every row — still accepts
// it (EvalPlanQual). locked is false when the row is gone, no longer
// qualifies, or, with storage.WaitSkip (SKIP LOCKED), is held by another
// transaction; otherwise lockedTID and row are the version locked (row is
// nil if tid itself was locked: the caller has its values).
//
// Errors: 55P03 `could not obtain lock on row in relation "t"` with
// storage.WaitError (NOWAIT); 40001 `could not serialize access due to
// concurrent update` (or delete) under REPEATABLE READ; the lock manager's
// 40P01 and 55P03 (lock_timeout); cancellation.
func (s *Executor) lockRow(ec *evalCtx, t *TableDef, tid storage.TID, mode txn.TupleLockMode, policy storage.WaitPolicy, recheck func([]Datum) (bool, error)) (locked bool, lockedTID storage.TID, row []Datum, err error) {
	rel := storage.RelID(t.RelFile)
	for {
		out, err := s.store.LockTuple(ec.ctx, s.proc, &s.txn, rel, tid, mode, s.rowWait(policy, t))
		if err != nil {
			return false, tid, nil, err
		}
		switch out.Result {
		case txn.TMOk:
			return true, tid, row, nil
		case txn.TMWouldBlock:
			if policy == storage.WaitError {
				return false, tid, nil, pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on row in relation \"%s\"", t.Name)
			}
			return false, tid, nil, nil
		case txn.TMUpdated, txn.TMDeleted:
			// a row an UPDATE moved to another partition counts as updated
			// (its ctid is not its own), and cannot be followed
			moved := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
			if s.txn.Isolation() != txn.ReadCommitted {
				what := "update"
				if out.Result == txn.TMDeleted && !moved {
					what = "delete"
				}
				return false, tid, nil, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
			}
			if moved {
				return false, tid, nil, movedError()
			}
			if out.Result == txn.TMDeleted {
				return false, tid, nil, nil
			}
			next, nrow, ok, err := s.latestVersion(ec, t, out.NextTID)
			if err != nil || !ok {
				return false, tid, nil, err
			}
			if recheck != nil {
				if match, err := recheck(nrow); err != nil || !match {
					return false, tid, nil, err
				}
			}
			tid, row = next, nrow
		default: // TMSelfModified, TMInvisible: the row is not there for us
			return false, tid, nil, nil
		}
	}
}

// lockSpec is one strength and wait policy of a FOR ... clause.
type lockSpec struct {
	mode   txn.TupleLockMode
	policy storage.WaitPolicy
	word   string // FOR UPDATE, FOR SHARE, ... for messages
}

func (l *lockSpec) merge(o *lockSpec) {
	if o.mode > l.mode {
		l.mode, l.word = o.mode, o.word
	}
	// NOWAIT beats SKIP LOCKED beats waiting
	if o.policy == storage.WaitError || o.policy == storage.WaitSkip && l.policy == storage.WaitBlock {
		l.policy = o.policy
	}
}

func lockSpecOf(lc *pg.LockingClause) *lockSpec {
	l := &lockSpec{}
	switch lc.Strength {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		l.mode, l.word = txn.LockTupleKeyShare, "FOR KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		l.mode, l.word = txn.LockTupleShare, "FOR SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		l.mode, l.word = txn.LockTupleNoKeyExclusive, "FOR NO KEY UPDATE"
	default:
		l.mode, l.word = txn.LockTupleExclusive, "FOR UPDATE"
	}
	switch lc.WaitPolicy {
	case pg.LockWaitPolicy_LockWaitSkip:
		l.policy = storage.WaitSkip
	case pg.LockWaitPolicy_LockWaitError:
		l.policy = storage.WaitError
	}
	return l
}

// rowLocking is a query level's FOR UPDATE / FOR SHARE clause compiled:
// the tables whose rows each output row locks, and the conditions a
// newer version of a row must still meet (EvalPlanQual).
type rowLocking struct {
	items   []lockItem
	recheck []expr
	scratch []Datum
}

type lockItem struct {
	off, ncols int // the item's place in the level row and its user columns
	spec       lockSpec
}

// lock row-locks the rows behind one output row, given its level row.
// ok is false when a row is skipped (SKIP LOCKED) or gone, or its newest
// version no longer qualifies; changed says that level now holds newer
// versions, whose output must be computed again.
func (x *Executor) lockRows(ec *evalCtx, rl *rowLocking, level []Datum) (ok, changed bool, err error) {
	s := x
	cat := s.cat()
	for _, it := range rl.items {
		ctid := level[it.off+it.ncols+sysColCtid]
		toid := level[it.off+it.ncols+sysColTableoid]
		if ctid.Null || toid.Null {
			continue // the nullable side of an outer join produced no row (refused at analysis)
		}
		t := cat.Tables[uint32(toid.I)]
		if t == nil {
			return false, false, nil
		}
		tid := storage.TID{Block: uint32(ctid.I >> 16), Offset: uint16(ctid.I)}
		recheck := func(nrow []Datum) (bool, error) {
			rl.scratch = append(rl.scratch[:0], level...)
			copy(rl.scratch[it.off:], nrow)
			return passes(ec, rl.recheck, rl.scratch)
		}
		locked, _, nrow, err := s.lockRow(ec, t, tid, it.spec.mode, it.spec.policy, recheck)
		if err != nil || !locked {
			return false, false, err
		}
		if nrow != nil {
			copy(level[it.off:], nrow)
			changed = true
		}
	}
	return true, changed, nil
}

// rowLockClause compiles the query's FOR UPDATE / FOR NO KEY UPDATE / FOR
// SHARE / FOR KEY SHARE clauses (or the one a subquery inherits), with
// PostgreSQL's restrictions (CheckSelectLocking, transformLockingClause):
// it locks the named tables of this level (every table when no OF list)
// and passes the clause down to subqueries in FROM.
func rowLockClause(a *analyzer, sel *pg.SelectStmt, p *selectPlan, fb *fromBuilder, inherited *lockSpec, root planNode, where []expr) error {
	var all *lockSpec // a clause without OF
	byName := map[string]*lockSpec{}
	if inherited != nil {
		c := *inherited
		all = &c
	}
	var first *lockSpec
	for _, n := range sel.LockingClause {
		lc := n.GetLockingClause()
		spec := lockSpecOf(lc)
		if first == nil {
			first = spec
		}
		if len(lc.LockedRels) == 0 {
			if all == nil {
				c := *spec
				all = &c
			} else {
				all.merge(spec)
			}
			continue
		}
		for _, r := range lc.LockedRels {
			rv := r.GetRangeVar()
			if a.sc.relByAlias(rv.Relname) == nil {
				return posErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s\" in %s clause not found in FROM clause", rv.Relname, spec.word), rv.Location)
			}
			if old := byName[rv.Relname]; old != nil {
				old.merge(spec)
			} else {
				c := *spec
				byName[rv.Relname] = &c
			}
		}
	}
	if first == nil {
		first = all
	}
	word := first.word
	switch {
	case p.distinct || len(p.distinctOn) > 0:
		return pgerr.NotSupported("%s is not allowed with DISTINCT clause", word)
	case len(p.groupBy) > 0:
		return pgerr.NotSupported("%s is not allowed with GROUP BY clause", word)
	case p.having != nil:
		return pgerr.NotSupported("%s is not allowed with HAVING clause", word)
	case len(p.aggs) > 0:
		return pgerr.NotSupported("%s is not allowed with aggregate functions", word)
	case p.srf:
		return pgerr.NotSupported("%s is not allowed with set-returning functions in the target list", word)
	}
	nullable := nullableItems(root)
	rl := &rowLocking{}
	for _, r := range a.sc.rels {
		if r.item < 0 {
			continue
		}
		spec := byName[r.alias]
		if spec == nil {
			spec = all
		}
		if spec == nil {
			continue
		}
		leaf := fb.leaves[r.item]
		switch src := leaf.src.(type) {
		case *tableSource, *partitionedSource:
			if nullable&(1<<uint(r.item)) != 0 {
				return pgerr.NotSupported("%s cannot be applied to the nullable side of an outer join", spec.word)
			}
			rl.items = append(rl.items, lockItem{off: leaf.off, ncols: len(r.table.Cols), spec: *spec})
			fb.lockRowShare(r.table)
			if ps, ok := src.(*partitionedSource); ok {
				ps.mode = locks.RowShareLock
			}
		case *subquerySource:
			// the clause reached into the subquery when it was compiled
			// (fromBuilder.subLock)
		case *cteSource:
			if byName[r.alias] != nil {
				return pgerr.NotSupported("%s of a WITH query is not supported", spec.word)
			}
		case *seqSource:
			return pgerr.New(pgerr.WrongObjectType, "cannot lock rows in sequence \"%s\"", src.q.Name)
		}
	}
	if len(rl.items) == 0 {
		return nil
	}
	rl.recheck = append(rl.recheck, where...)
	for _, on := range fb.ons {
		rl.recheck = append(rl.recheck, on.e)
	}
	p.rowLocks = rl
	return nil
}

// lockRowShare makes the plan lock t (and its indexes) in RowShareLock,
// as a SELECT ... FOR UPDATE does, instead of AccessShareLock.
func (fb *fromBuilder) lockRowShare(t *TableDef) {
	cat := fb.a.s.cat()
	oids := map[uint32]bool{t.OID: true}
	for _, ix := range cat.tableIndexes(t) {
		oids[ix.OID] = true
	}
	for i := range fb.rels {
		if oids[fb.rels[i].oid] {
			fb.rels[i].mode = locks.RowShareLock
		}
	}
}

// nullableItems is the set of FROM items on the nullable side of an outer
// join.
func nullableItems(n planNode) uint64 {
	j, ok := n.(*joinNode)
	if !ok {
		return 0
	}
	m := nullableItems(j.left) | nullableItems(j.right)
	switch j.kind {
	case joinLeft:
		m |= j.right.mask()
	case joinRight:
		m |= j.left.mask()
	case joinFull:
		m |= j.mask()
	}
	return m
}

// subLock is the locking clause a subquery in FROM under alias inherits
// from its query: the clause naming it, or the one without OF.
func subLock(sel *pg.SelectStmt, inherited *lockSpec, alias string) *lockSpec {
	var out *lockSpec
	add := func(spec *lockSpec) {
		if out == nil {
			c := *spec
			out = &c
		} else {
			out.merge(spec)
		}
	}
	if inherited != nil {
		add(inherited)
	}
	for _, n := range sel.LockingClause {
		lc := n.GetLockingClause()
		if len(lc.LockedRels) == 0 {
			add(lockSpecOf(lc))
			continue
		}
		for _, r := range lc.LockedRels {
			if r.GetRangeVar().Relname == alias {
				add(lockSpecOf(lc))
			}
		}
	}
	return out
}
