package plan

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/txn"
)

// INSERT ... ON CONFLICT [ (cols) [WHERE ...] | ON CONSTRAINT name ]
// DO NOTHING | DO UPDATE SET ... [WHERE ...], with PostgreSQL's
// speculative insertion protocol (nodeModifyTable.c ExecInsert and
// ExecOnConflictUpdate, execIndexing.c):
//
//  1. Pre-check: look the row's key up in each arbiter index with a dirty
//     snapshot (sql/exec/unique.go). A version another transaction is inserting or
//     deleting is waited for — its transactionid, or its speculative token
//     while its insertion is speculative — and the index looked at again.
//     A live version is the conflict: DO NOTHING skips the row; DO UPDATE
//     goes to 3.
//  2. No conflict: take ExclusiveLock on a new speculative insertion token
//     of the (sub)transaction's xid, insert the tuple speculatively
//     (storage/speculative.go) and its index entries; an arbiter index's
//     entry is checked and inserted as one step (sql/exec/unique.go) and any live
//     or running version under the key makes it a conflict
//     (UNIQUE_CHECK_PARTIAL).
//     Without one the insertion is confirmed; with one the tuple is
//     super-deleted and the row starts again at 1 — where it now waits
//     for the other inserter. Then the token lock is released. Of two
//     sessions racing for one key exactly one inserts; the other waits
//     and then skips or updates: never 23505, never a lost update.
//  3. DO UPDATE locks the conflicting version as UPDATE would (FOR NO KEY
//     UPDATE, FOR UPDATE when SET assigns a unique index column): the
//     tuple lock and a wait for a running locker or updater. A version
//     replaced or deleted meanwhile sends READ COMMITTED back to 1
//     (no EvalPlanQual: the newer version might not conflict any more)
//     and is 40001 under REPEATABLE READ, as is a conflicting version the
//     transaction's snapshot cannot see. A version this command inserted
//     or updated is 21000 ("cannot affect row a second time"). Then the
//     DO UPDATE WHERE clause is checked over the existing row and
//     excluded (the row proposed for insertion), and SET applied as an
//     UPDATE of the locked version; a row WHERE rejects stays locked.
//
// Relation locks are PostgreSQL's: RowExclusiveLock on the table; the
// planner's inference of the arbiter indexes opens (and keeps locked,
// RowExclusiveLock) every index of the table — for ON CONSTRAINT those up
// to the constraint's, in OID order — unless a cached generic plan runs;
// while the statement runs, every index of the table written is locked
// RowExclusiveLock and released at its end (ExecOpenIndices,
// ExecCloseIndices). A partitioned table's partitions are routed to and
// locked as INSERT does (sql/exec/routing.go), its arbiters being the partitions'
// indexes of the partitioned indexes inferred.

// onConflict is a compiled ON CONFLICT clause.
type onConflict struct {
	Update bool
	// arbiters are the indexes of the table named that decide a conflict;
	// nil with any: every unique index is one (DO NOTHING without an
	// inference clause)
	arbiters []uint32
	any      bool
	Set      map[int]expr.Expr // DO UPDATE: column → value over the level row
	Where    expr.Expr
	Mode     txn.TupleLockMode // the strength of the row lock
	ncols    int
	ExclOff  int           // where excluded starts in the level row
	Level    []types.Datum // [existing row, ctid, tableoid][excluded]

	// analysis results finishOnConflict turns into arbiters
	dup        error        // two SET assignments to one column
	conIndex   uint32       // ON CONSTRAINT: its index
	inferCols  map[int]bool // (cols): the columns named
	inferExprs bool         // (cols) names an expression or system column
}

// specHook, set only by tests, runs at two steps of a speculative
// insertion: "heap" (the tuple is in, no index entry yet) and "indexed"
// (its index entries are in, the insertion not yet confirmed or undone).
var SpecHook func(step string)

// compileOnConflict compiles ins's ON CONFLICT clause for table t under
// alias, and returns the scope RETURNING may not see (excluded). The
// arbiter indexes are inferred by finishOnConflict, after RETURNING, as
// PostgreSQL's planner infers them after parse analysis.
func (s *Planner) compileOnConflict(ins *pg.InsertStmt, t *catalog.TableDef, alias string, params *[]types.Type) (*onConflict, *analyze.Scope, error) {
	occ := ins.OnConflictClause
	oc := &onConflict{Update: occ.Action == pg.OnConflictAction_ONCONFLICT_UPDATE, ncols: len(t.Cols),
		Mode: txn.LockTupleNoKeyExclusive}
	infer := occ.Infer
	if oc.Update && infer == nil {
		return nil, nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
			WithHint("For example, ON CONFLICT (column_name)."), occ.Location)
	}
	if infer != nil {
		if err := s.inferArbiters(infer, t, alias, params, oc); err != nil {
			return nil, nil, err
		}
	} else {
		oc.any = true
	}
	if !oc.Update {
		return oc, nil, nil
	}
	if err := analyze.IdentitySetList(t, occ.TargetList); err != nil { // sql/analyze/sequences.go
		return nil, nil, err
	}

	// DO UPDATE: SET and WHERE see the existing row under the table's
	// alias and the proposed one as excluded
	a := NewAnalyzer(&s.Backend, params)
	sc := analyze.NewScope(nil)
	la := a.Level(sc)
	fb := &fromBuilder{a: la, sc: sc}
	if _, err := fb.addLeaf(NewTableSource(t, alias), alias, nil, len(t.Cols), t, -1); err != nil {
		return nil, nil, err
	}
	excl := &ExcludedSource{}
	for i := range t.Cols {
		excl.cols = append(excl.cols, types.Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type()})
	}
	oc.ExclOff = sc.Width
	// added nameless, then named: PostgreSQL does not check excluded
	// against the target's alias ("INSERT INTO t AS excluded" works)
	if _, err := fb.addLeaf(excl, "", nil, len(excl.cols), nil, -1); err != nil {
		return nil, nil, err
	}
	sc.Rels[len(sc.Rels)-1].Alias = "excluded"
	var dup error
	var err error
	if oc.Set, dup, err = s.compileSetList(la.NoAggs("UPDATE"), t, occ.TargetList); err != nil {
		return nil, nil, err
	}
	if occ.WhereClause != nil {
		wa := la.NoAggs("WHERE")
		w, err := wa.Expr(occ.WhereClause)
		if err != nil {
			return nil, nil, err
		}
		if oc.Where, err = wa.AsBool(w, "WHERE", analyze.ExprLocation(occ.WhereClause)); err != nil {
			return nil, nil, err
		}
	}
	oc.dup = dup
	oc.Level = make([]types.Datum, sc.Width)
	// FOR UPDATE strength when SET assigns a key column
	// (ExecUpdateLockMode)
	for _, ix := range s.Cat().TableIndexes(t) {
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if _, ok := oc.Set[c]; ok {
				oc.Mode = txn.LockTupleExclusive
			}
		}
	}
	hidden := analyze.NewScope(nil)
	hidden.Rels = []*analyze.NsRel{{Alias: "excluded", Item: -1}}
	return oc, hidden, nil
}

// inferArbiters resolves the inference clause: ON CONSTRAINT's name, or
// the columns (transformOnConflictArbiter). The indexes they match are
// found by finishOnConflict.
func (s *Planner) inferArbiters(infer *pg.InferClause, t *catalog.TableDef, alias string, params *[]types.Type, oc *onConflict) error {
	cat := s.Cat()
	ixs := cat.TableIndexes(t)
	sort.Slice(ixs, func(i, j int) bool { return ixs[i].OID < ixs[j].OID })
	if infer.Conname != "" {
		for _, ix := range ixs {
			if ix.Name == infer.Conname && (ix.IsConstraint || ix.Primary) {
				oc.conIndex = ix.OID
				return nil
			}
		}
		for _, con := range cat.Constraints {
			if con.Table == t.OID && con.Name == infer.Conname { // a CHECK or FOREIGN KEY
				return pgerr.New(pgerr.WrongObjectType, "constraint in ON CONFLICT clause has no associated index")
			}
		}
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", infer.Conname, t.Name)
	}
	a := NewAnalyzer(&s.Backend, params)
	SingleTable(a, NewTableSource(t, alias), alias)
	cols := map[int]bool{}
	exprs := false // an element that is no plain column: no index of lockd's matches
	for _, n := range infer.IndexElems {
		el := n.GetIndexElem()
		switch {
		case el.Ordering != pg.SortByDir_SORTBY_DEFAULT:
			return expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "ASC/DESC is not allowed in ON CONFLICT clause"), infer.Location)
		case el.NullsOrdering != pg.SortByNulls_SORTBY_NULLS_DEFAULT:
			return expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "NULLS FIRST/LAST is not allowed in ON CONFLICT clause"), infer.Location)
		}
		var e expr.Expr
		var err error
		if el.Expr != nil {
			e, err = a.Expr(el.Expr)
		} else {
			// a bare column, resolved where the clause stands
			e, _, _, err = a.Sc.LookupColumn("", el.Name, infer.Location)
		}
		if err != nil {
			return err
		}
		match, err := inferCollationOpclass(el, e, infer.Location)
		if err != nil {
			return err
		}
		c, ok := e.(*expr.ColExpr)
		switch {
		case !ok || !match:
			exprs = true
		case c.I < len(t.Cols):
			cols[c.I] = true
		default:
			exprs = true // a system column
		}
	}
	if infer.WhereClause != nil {
		wa := a.NoAggs("index predicates")
		w, err := wa.Expr(infer.WhereClause)
		if err != nil {
			return err
		}
		if _, err := wa.AsBool(w, "WHERE", analyze.ExprLocation(infer.WhereClause)); err != nil {
			return err
		}
		// lockd has no partial indexes: every unique index satisfies it
	}
	oc.inferCols, oc.inferExprs = cols, exprs
	return nil
}

// finishOnConflict ends the analysis with what PostgreSQL's rewriter and
// planner find: two assignments to one column, then the arbiter indexes
// (infer_arbiter_indexes; 42P10 when none matches). It returns the plan's
// relation locks: the table and the indexes the inference opens.
func (s *Planner) finishOnConflict(oc *onConflict, t *catalog.TableDef) ([]expr.RelLock, error) {
	if oc.dup != nil {
		return nil, oc.dup
	}
	rels := []expr.RelLock{{Oid: t.OID, Mode: locks.RowExclusiveLock}}
	if oc.any {
		return rels, nil
	}
	ixs := s.Cat().TableIndexes(t)
	sort.Slice(ixs, func(i, j int) bool { return ixs[i].OID < ixs[j].OID })
	for _, ix := range ixs {
		rels = append(rels, expr.RelLock{Oid: ix.OID, Mode: locks.RowExclusiveLock, PlanOnly: true})
		if oc.conIndex != 0 {
			if ix.OID == oc.conIndex {
				oc.arbiters = []uint32{ix.OID}
				return rels, nil
			}
			continue
		}
		if ix.Unique && !oc.inferExprs && sameColumnsAs(ix.Cols, oc.inferCols) {
			oc.arbiters = append(oc.arbiters, ix.OID)
		}
	}
	if len(oc.arbiters) == 0 {
		return nil, pgerr.New(pgerr.InvalidColumnReference, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	return rels, nil
}

func sameColumnsAs(cols []int, set map[int]bool) bool {
	for _, c := range cols {
		if !set[c] {
			return false
		}
	}
	for c := range set {
		found := false
		for _, x := range cols {
			found = found || x == c
		}
		if !found {
			return false
		}
	}
	return true
}

// leafArbiters picks the arbiters among the indexes of the table a row
// goes in: the indexes inferred, or a partition's indexes of them.
func (oc *onConflict) LeafArbiters(cat *catalog.CatalogState, indexes []*catalog.IndexDef) []*catalog.IndexDef {
	var out []*catalog.IndexDef
	for _, ix := range indexes {
		if !ix.Unique {
			continue
		}
		if oc.any || oc.isArbiter(cat, ix) {
			out = append(out, ix)
		}
	}
	return out
}

func (oc *onConflict) isArbiter(cat *catalog.CatalogState, ix *catalog.IndexDef) bool {
	for x := ix; x != nil; x = cat.Indexes[x.Parent] {
		for _, a := range oc.arbiters {
			if x.OID == a {
				return true
			}
		}
		if x.Parent == 0 {
			break
		}
	}
	return false
}

func ContainsIndex(list []*catalog.IndexDef, ix *catalog.IndexDef) bool {
	for _, x := range list {
		if x == ix {
			return true
		}
	}
	return false
}

// btreeOpclassInput is the input type of each built-in btree operator
// class lockd's types have, for ON CONFLICT inference; 0 for the pattern
// classes, which no index of lockd's uses.
var btreeOpclassInput = map[string]uint32{
	"bool_ops": types.OIDBool, "bytea_ops": types.OIDBytea, "char_ops": types.OIDChar, "name_ops": types.OIDName,
	"int2_ops": types.OIDInt2, "int4_ops": types.OIDInt4, "int8_ops": types.OIDInt8, "oid_ops": types.OIDOid, "tid_ops": types.OIDTid,
	"float4_ops": types.OIDFloat4, "float8_ops": types.OIDFloat8, "numeric_ops": types.OIDNumeric,
	"text_ops": types.OIDText, "varchar_ops": types.OIDText, "bpchar_ops": types.OIDBpchar,
	"date_ops": types.OIDDate, "timestamp_ops": types.OIDTimestamp, "timestamptz_ops": types.OIDTimestamptz, "interval_ops": types.OIDInterval,
	"text_pattern_ops": 0, "varchar_pattern_ops": 0, "bpchar_pattern_ops": 0,
}

// inferCollationOpclass reports whether an inference element's COLLATE
// and operator class match what lockd's indexes have for the element's
// type — the default collation for text types, the type's default btree
// class (infer_collation_opclass_match); unknown names are PostgreSQL's
// 42704 errors.
func inferCollationOpclass(el *pg.IndexElem, e expr.Expr, loc int32) (bool, error) {
	typ := e.Type().OID
	match := true
	if n := len(el.Collation); n > 0 {
		name := el.Collation[n-1].GetString_().GetSval()
		switch name {
		case "default":
			match = typ == types.OIDText || typ == types.OIDVarchar || typ == types.OIDBpchar
		case "C", "POSIX", "ucs_basic":
			match = typ == types.OIDName && name == "C"
		default:
			return false, expr.PosErr(pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name), loc)
		}
	}
	if n := len(el.Opclass); n > 0 {
		name := el.Opclass[n-1].GetString_().GetSval()
		in, ok := btreeOpclassInput[name]
		if !ok {
			return false, pgerr.New(pgerr.UndefinedObject, "operator class \"%s\" does not exist for access method \"btree\"", name)
		}
		if typ == types.OIDVarchar {
			typ = types.OIDText // a varchar column's index uses text_ops
		}
		match = match && in == typ
	}
	return match, nil
}
