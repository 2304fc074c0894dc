package plan

import (
	"bytes"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
)

// Row locks for the SQL layer: the strength of an UPDATE, how DML waits for
// row lockers, and lockRow — what SELECT ... FOR UPDATE | FOR NO KEY UPDATE
// | FOR SHARE | FOR KEY SHARE [NOWAIT | SKIP LOCKED] and foreign-key checks
// (FOR KEY SHARE on the referenced row) call for each row they lock, as
// PostgreSQL's ExecLockRows calls table_tuple_lock. See storage/locktuple.go
// for the locking itself.

// KeysChanged reports whether an UPDATE from old to new changes a column
// of a unique index of the table — PostgreSQL's key columns
// (INDEX_ATTR_BITMAP_KEY), which decide between FOR NO KEY UPDATE and FOR
// UPDATE strength, and so whether FOR KEY SHARE lockers (foreign-key
// checks) make the update wait.
func (p *ModifyPlan) KeysChanged(old, new []types.Datum) bool {
	return p.indexedChanged(old, new, true)
}

// HotAllowed reports whether an UPDATE from old to new leaves every
// indexed column of the table as it was, compared as the index keys
// encode them (heap_update's HOT test on INDEX_ATTR_BITMAP_HOT_BLOCKING,
// which compares the datums' bytes): the new version may then be a
// heap-only tuple that no index names (storage/hot.go).
func (p *ModifyPlan) HotAllowed(old, new []types.Datum) bool {
	return !p.indexedChanged(old, new, false)
}

func (p *ModifyPlan) indexedChanged(old, new []types.Datum, uniqueOnly bool) bool {
	var abuf, bbuf [32]byte
	for _, ix := range p.Indexes {
		if uniqueOnly && !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if _, set := p.Set[c]; !set {
				continue
			}
			if old[c].Null != new[c].Null {
				return true
			}
			if old[c].Null {
				continue
			}
			typ := [1]types.Type{p.T.Cols[c].Type()}
			a := catalog.AppendKey(abuf[:0], typ[:], old[c:c+1])
			b := catalog.AppendKey(bbuf[:0], typ[:], new[c:c+1])
			if !bytes.Equal(a, b) {
				return true
			}
		}
	}
	return false
}

// modifyPlan is a compiled UPDATE or DELETE.
type ModifyPlan struct {
	T       *catalog.TableDef
	Src     *TableSource
	Where   expr.Expr
	Set     map[int]expr.Expr // UPDATE: column → new value over the old row
	Indexes []*catalog.IndexDef
	Delete  bool
	Ret     *Returning
	Parts   *PartitionedSource // a partitioned table (partitions.go)
	Part    *PartUpdate        // a partition (sql/exec/routing.go)
}

func (s *Planner) CompileUpdate(up *pg.UpdateStmt, params *[]types.Type, st *Stmt) error {
	if up.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	if len(up.FromClause) > 0 { // updatefrom.go
		return s.compileJoinModify(up.Relation, up.FromClause, up.WhereClause, up.TargetList, up.ReturningList, false, params, st)
	}
	p, a, err := s.modifyCommon(up.Relation, up.WhereClause, params)
	if err != nil {
		return err
	}
	var dup error
	if p.Set, dup, err = s.compileSetList(a.NoAggs("UPDATE"), p.T, up.TargetList); err != nil {
		return err
	}
	if p.Ret, err = s.compileReturning(up.ReturningList, p.T, p.Src.alias, params); err != nil {
		return err
	}
	if dup != nil {
		return dup // found by PostgreSQL's rewriter, after parse analysis
	}
	if p.Ret != nil {
		st.Cols = p.Ret.cols
	}
	st.Rels = relationLocks(s.Cat(), p.T, locks.RowExclusiveLock)
	st.Tag = "UPDATE"
	st.Writes = true
	st.Plan = p
	return nil
}

func (s *Planner) CompileDelete(del *pg.DeleteStmt, params *[]types.Type, st *Stmt) error {
	if del.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	if len(del.UsingClause) > 0 { // updatefrom.go
		return s.compileJoinModify(del.Relation, del.UsingClause, del.WhereClause, nil, del.ReturningList, true, params, st)
	}
	p, _, err := s.modifyCommon(del.Relation, del.WhereClause, params)
	if err != nil {
		return err
	}
	p.Delete = true
	if p.Ret, err = s.compileReturning(del.ReturningList, p.T, p.Src.alias, params); err != nil {
		return err
	}
	if p.Ret != nil {
		st.Cols = p.Ret.cols
	}
	st.Rels = relationLocks(s.Cat(), p.T, locks.RowExclusiveLock)
	st.Tag = "DELETE"
	st.Writes = true
	st.Plan = p
	return nil
}

func (s *Planner) modifyCommon(rv *pg.RangeVar, where *pg.Node, params *[]types.Type) (*ModifyPlan, *analyze.Analyzer, error) {
	t, err := s.ResolveTable(rv)
	if err != nil {
		return nil, nil, err
	}
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	src := NewTableSource(t, alias)
	a := NewAnalyzer(&s.Backend, params)
	SingleTable(a, src, alias)
	p := &ModifyPlan{T: t, Src: src, Indexes: s.Cat().TableIndexes(t)}
	if where != nil {
		w, err := a.Expr(where)
		if err != nil {
			return nil, nil, err
		}
		if p.Where, err = a.AsBool(w, "WHERE", -1); err != nil {
			return nil, nil, err
		}
		src.useIndex(s.Cat(), p.Where)
		if !t.Partitioned() {
			src.considerBitmap(&s.Backend, p.Where)
		}
	}
	switch {
	case t.Partitioned():
		p.Parts = newPartitionedSource(t, alias, locks.RowExclusiveLock)
		p.Parts.Only = !rv.Inh
		p.Parts.filter(s.Cat(), p.Where)
	case t.Parent != 0:
		p.Part = &PartUpdate{} // rows may not leave a partition named directly
	}
	return p, a, nil
}

type Target struct {
	Tid storage.TID
	Row []types.Datum
}

func FirstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
