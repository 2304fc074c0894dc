package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

func lockSpecOf(lc *pg.LockingClause) *analyze.LockSpec {
	l := &analyze.LockSpec{}
	switch lc.Strength {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		l.Mode, l.Word = txn.LockTupleKeyShare, "FOR KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		l.Mode, l.Word = txn.LockTupleShare, "FOR SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		l.Mode, l.Word = txn.LockTupleNoKeyExclusive, "FOR NO KEY UPDATE"
	default:
		l.Mode, l.Word = txn.LockTupleExclusive, "FOR UPDATE"
	}
	switch lc.WaitPolicy {
	case pg.LockWaitPolicy_LockWaitSkip:
		l.Policy = storage.WaitSkip
	case pg.LockWaitPolicy_LockWaitError:
		l.Policy = storage.WaitError
	}
	return l
}

// rowLocking is a query level's FOR UPDATE / FOR SHARE clause compiled:
// the tables whose rows each output row locks, and the conditions a
// newer version of a row must still meet (EvalPlanQual).
type RowLocking struct {
	Items   []lockItem
	Recheck []expr.Expr
	Scratch []types.Datum
}

type lockItem struct {
	Off, Ncols int // the item's place in the level row and its user columns
	Spec       analyze.LockSpec
}

// rowLockClause compiles the query's FOR UPDATE / FOR NO KEY UPDATE / FOR
// SHARE / FOR KEY SHARE clauses (or the one a subquery inherits), with
// PostgreSQL's restrictions (CheckSelectLocking, transformLockingClause):
// it locks the named tables of this level (every table when no OF list)
// and passes the clause down to subqueries in FROM.
func rowLockClause(a *analyze.Analyzer, sel *pg.SelectStmt, p *SelectPlan, fb *fromBuilder, inherited *analyze.LockSpec, root PlanNode, where []expr.Expr) error {
	var all *analyze.LockSpec // a clause without OF
	byName := map[string]*analyze.LockSpec{}
	if inherited != nil {
		c := *inherited
		all = &c
	}
	var first *analyze.LockSpec
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
				all.Merge(spec)
			}
			continue
		}
		for _, r := range lc.LockedRels {
			rv := r.GetRangeVar()
			if a.Sc.RelByAlias(rv.Relname) == nil {
				return expr.PosErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s\" in %s clause not found in FROM clause", rv.Relname, spec.Word), rv.Location)
			}
			if old := byName[rv.Relname]; old != nil {
				old.Merge(spec)
			} else {
				c := *spec
				byName[rv.Relname] = &c
			}
		}
	}
	if first == nil {
		first = all
	}
	word := first.Word
	switch {
	case p.Distinct || len(p.DistinctOn) > 0:
		return pgerr.NotSupported("%s is not allowed with DISTINCT clause", word)
	case len(p.GroupBy) > 0:
		return pgerr.NotSupported("%s is not allowed with GROUP BY clause", word)
	case p.Having != nil:
		return pgerr.NotSupported("%s is not allowed with HAVING clause", word)
	case len(p.Aggs) > 0:
		return pgerr.NotSupported("%s is not allowed with aggregate functions", word)
	case p.Srf:
		return pgerr.NotSupported("%s is not allowed with set-returning functions in the target list", word)
	}
	nullable := nullableItems(root)
	rl := &RowLocking{}
	for _, r := range a.Sc.Rels {
		if r.Item < 0 {
			continue
		}
		spec := byName[r.Alias]
		if spec == nil {
			spec = all
		}
		if spec == nil {
			continue
		}
		leaf := fb.leaves[r.Item]
		switch src := leaf.Src.(type) {
		case *TableSource, *PartitionedSource:
			if nullable&(1<<uint(r.Item)) != 0 {
				return pgerr.NotSupported("%s cannot be applied to the nullable side of an outer join", spec.Word)
			}
			rl.Items = append(rl.Items, lockItem{Off: leaf.Off, Ncols: len(r.Table.Cols), Spec: *spec})
			fb.lockRowShare(r.Table)
			if ps, ok := src.(*PartitionedSource); ok {
				ps.Mode = locks.RowShareLock
			}
		case *SubquerySource:
			// the clause reached into the subquery when it was compiled
			// (fromBuilder.subLock)
		case *CteSource:
			if byName[r.Alias] != nil {
				return pgerr.NotSupported("%s of a WITH query is not supported", spec.Word)
			}
		case *SeqSource:
			return pgerr.New(pgerr.WrongObjectType, "cannot lock rows in sequence \"%s\"", src.Q.Name)
		}
	}
	if len(rl.Items) == 0 {
		return nil
	}
	rl.Recheck = append(rl.Recheck, where...)
	for _, on := range fb.ons {
		rl.Recheck = append(rl.Recheck, on.e)
	}
	p.RowLocks = rl
	return nil
}

// lockRowShare makes the plan lock t (and its indexes) in RowShareLock,
// as a SELECT ... FOR UPDATE does, instead of AccessShareLock.
func (fb *fromBuilder) lockRowShare(t *catalog.TableDef) {
	cat := fb.a.S.Cat()
	oids := map[uint32]bool{t.OID: true}
	for _, ix := range cat.TableIndexes(t) {
		oids[ix.OID] = true
	}
	for i := range fb.rels {
		if oids[fb.rels[i].Oid] {
			fb.rels[i].Mode = locks.RowShareLock
		}
	}
}

// nullableItems is the set of FROM items on the nullable side of an outer
// join.
func nullableItems(n PlanNode) uint64 {
	j, ok := n.(*JoinNode)
	if !ok {
		return 0
	}
	m := nullableItems(j.Left) | nullableItems(j.Right)
	switch j.Kind {
	case JoinLeft:
		m |= j.Right.mask()
	case JoinRight:
		m |= j.Left.mask()
	case JoinFull:
		m |= j.mask()
	}
	return m
}

// subLock is the locking clause a subquery in FROM under alias inherits
// from its query: the clause naming it, or the one without OF.
func subLock(sel *pg.SelectStmt, inherited *analyze.LockSpec, alias string) *analyze.LockSpec {
	var out *analyze.LockSpec
	add := func(spec *analyze.LockSpec) {
		if out == nil {
			c := *spec
			out = &c
		} else {
			out.Merge(spec)
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
