package exec

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// pkVisible reports whether the referenced table — a partitioned one: the
// partition the key routes to — has a row visible to the snapshot under
// the key setKey loaded (keyOK: it could) in its unique index.
func (s *Executor) PkVisible(ec *expr.EvalCtx, fk *fkRef, keyOK bool) (bool, error) {
	if !keyOK {
		return false, nil
	}
	t, ts := fk.pkSource(s.Cat())
	if ts == nil {
		return false, nil
	}
	var tids []storage.TID
	if err := s.Store.IndexLookup(s.Proc, storage.RelID(ts.Index.RelFile), fk.keyBytes(), func(tid storage.TID) bool {
		tids = append(tids, tid)
		return true
	}); err != nil {
		return false, err
	}
	rel := storage.RelID(t.RelFile)
	for _, tid := range tids {
		visible, err := s.Store.Fetch(s.Proc, &s.Txn, rel, tid, func(*plan.TxnHeader, []byte) {})
		if err != nil {
			return false, err
		}
		if visible {
			return true, nil
		}
	}
	return false, nil
}

// --- looking up a key in a partitioned table

// routeKey finds the leaf partition of fk.parent that can hold the key in
// fk.keys (set by setKey), and the partitions on the way to it; ok is
// false when no partition holds it.
func (fk *fkRef) routeKey(cat *catalog.CatalogState) (path []*catalog.TableDef, ok bool) {
	if cap(fk.row) < len(fk.parent.Cols) {
		fk.row = make([]types.Datum, len(fk.parent.Cols))
	}
	row := fk.row[:len(fk.parent.Cols)]
	for i := range row {
		row[i] = types.NullDatum
	}
	for i, c := range fk.index.Cols {
		row[c] = fk.keys[i].D
	}
	path = fk.path[:0]
	defer func() { fk.path = path }()
	node := fk.parent
	for node.Partitioned() {
		d := cat.PartDesc(node.OID)
		if d == nil {
			return path, false
		}
		fk.pkey = catalog.PartitionKey(d, row, fk.pkey[:0])
		i := d.Route(fk.pkey)
		if i < 0 {
			return path, false
		}
		if node = cat.Tables[d.Parts[i]]; node == nil {
			return path, false
		}
		path = append(path, node)
	}
	return path, true
}

// leafSource is the lookup of the key in leaf partition leaf's index of
// the key's index tree (nil if it has none).
func (fk *fkRef) leafSource(cat *catalog.CatalogState, leaf *catalog.TableDef) *plan.TableSource {
	if ts, ok := fk.leaves[leaf.OID]; ok {
		return ts
	}
	if fk.leaves == nil {
		fk.leaves = map[uint32]*plan.TableSource{}
	}
	var ts *plan.TableSource
	if ix := cat.IndexOfPartition(fk.index, leaf); ix != nil {
		ts = plan.NewTableSource(leaf, leaf.Name)
		ts.Index = ix
		for _, k := range fk.keys {
			ts.KeyArgs = append(ts.KeyArgs, k)
			ts.KeyTyps = append(ts.KeyTyps, k.T)
		}
	}
	fk.leaves[leaf.OID] = ts
	return ts
}

// pkSource returns where the key in fk.keys is looked up: the referenced
// table, or the leaf partition it routes to (nil, nil when none can hold
// it).
func (fk *fkRef) pkSource(cat *catalog.CatalogState) (*catalog.TableDef, *plan.TableSource) {
	if !fk.parent.Partitioned() {
		return fk.parent, fk.pk
	}
	path, ok := fk.routeKey(cat)
	if !ok || len(path) == 0 {
		return nil, nil
	}
	leaf := path[len(path)-1]
	return leaf, fk.leafSource(cat, leaf)
}

// riLockPK takes the relation locks of an RI query q that reads the
// referenced table of fk for the key in fk.keys (keyOK false: a key that
// matches nothing). For an ordinary table those are riLockRelation's; for
// a partitioned one those of the plan PostgreSQL's plan cache gives the
// execution (see the file comment).
func (s *Executor) riLockPK(ec *expr.EvalCtx, fk *fkRef, q riQuery, keyOK bool) error {
	if !fk.parent.Partitioned() {
		return s.riLockRelation(ec, fk.parent, locks.RowShareLock, fk.index, s.riPlan(q, false) != expr.GenericReuse)
	}
	cat := s.Cat()
	var path []*catalog.TableDef
	if keyOK {
		path, _ = fk.routeKey(cat)
	}
	// a generic plan holds every partition, a custom plan those on the
	// key's path: PostgreSQL's costs favour the custom plan whenever the
	// generic one holds more
	kind := s.riPlan(q, fk.parts > len(path))
	mode := locks.RowShareLock
	if err := s.LockNow(ec, fk.parent.OID, mode); err != nil {
		return err
	}
	switch kind {
	case expr.CustomPlan:
		for _, t := range path {
			if err := s.LockNow(ec, t.OID, mode); err != nil {
				return err
			}
			if !t.Partitioned() {
				for _, ix := range cat.TableIndexes(t) {
					if err := s.LockNow(ec, ix.OID, mode); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case expr.GenericBuild:
		for _, k := range cat.PartitionChildren(fk.parent) {
			if err := s.LockTree(ec, k, mode); err != nil {
				return err
			}
		}
		return nil
	}
	// the cached generic plan: its range table, then the index of the
	// partition run-time pruning leaves
	var lockAll func(t *catalog.TableDef) error
	lockAll = func(t *catalog.TableDef) error {
		for _, k := range cat.PartitionChildren(t) {
			if err := s.LockNow(ec, k.OID, mode); err != nil {
				return err
			}
			if err := lockAll(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := lockAll(fk.parent); err != nil {
		return err
	}
	if len(path) > 0 {
		if ts := fk.leafSource(cat, path[len(path)-1]); ts != nil {
			return s.LockNow(ec, ts.Index.OID, mode)
		}
	}
	return nil
}

// riSnapshot is what SPI does before each RI query: make the
// transaction's own work visible and take a new snapshot.
func (s *Executor) riSnapshot() {
	s.Txn.CommandCounterIncrement()
	s.Txn.StatementSnapshot()
}

// riLatestSnapshot is riSnapshot for the RI queries that must also see
// rows committed since a REPEATABLE READ transaction's snapshot
// (ri_PerformCheck's detectNewRows: the referenced side's checks and
// actions): a snapshot as of now until restore.
func (s *Executor) riLatestSnapshot() (restore func()) {
	s.Txn.CommandCounterIncrement()
	return s.Txn.UseLatestSnapshot()
}

// riPlan returns how PostgreSQL's plan cache plans this execution of RI
// query q (choose_custom_plan, as planFor does for prepared statements):
// five custom plans, then at the sixth a generic plan is planned, and kept
// unless prunes — the generic plan holds partitions the custom plans
// pruned, which its cost counts — sends it back to custom plans;
// plan_cache_mode forces either.
func (s *Executor) riPlan(q riQuery, prunes bool) expr.PlanKind {
	if s.ri.runs == nil {
		s.ri.runs = map[riQuery]*riPlanState{}
	}
	st := s.ri.runs[q]
	if st == nil {
		st = &riPlanState{}
		s.ri.runs[q] = st
	}
	switch mode := s.Settings.String("plan_cache_mode"); {
	case mode == "force_custom_plan":
		st.customs++
		return expr.CustomPlan
	case mode == "force_generic_plan" || st.choice == plan.ChoiceGeneric:
		if st.generic {
			return expr.GenericReuse
		}
		st.generic = true
		return expr.GenericBuild
	case st.choice == plan.ChoiceCustom || st.customs < plan.CustomPlansFirst:
		st.customs++
		return expr.CustomPlan
	}
	st.generic = true
	if prunes {
		st.choice = plan.ChoiceCustom // the generic plan was planned, a custom plan runs
		st.customs++
	} else {
		st.choice = plan.ChoiceGeneric
	}
	return expr.GenericBuild
}

// riLockRelation takes the relation locks of an RI query's plan over t:
// the table, and every index when planned afresh (custom), else the one
// it reads (used, if any).
func (s *Executor) riLockRelation(ec *expr.EvalCtx, t *catalog.TableDef, mode locks.LockMode, used *catalog.IndexDef, custom bool) error {
	if err := s.LockNow(ec, t.OID, mode); err != nil {
		return err
	}
	if custom {
		for _, ix := range s.Cat().TableIndexes(t) {
			if err := s.LockNow(ec, ix.OID, mode); err != nil {
				return err
			}
		}
		return nil
	}
	if used != nil {
		return s.LockNow(ec, used.OID, mode)
	}
	return nil
}

// riCheck is RI_FKey_check: the new row must find its key in the
// referenced table, which is locked FOR KEY SHARE.
func (s *Executor) riCheck(ec *expr.EvalCtx, ev *riEvent) error {
	fk := ev.fk
	live, err := s.rowLive(ev.rel, ev.tid)
	if err != nil || !live {
		return err // a row deleted or updated again since: its last version is checked
	}
	nulls := 0
	for _, v := range ev.new {
		if v.Null {
			nulls++
		}
	}
	if nulls == len(ev.new) || nulls > 0 && fk.con.Match != catalog.FkMatchFull {
		return nil
	}
	if nulls > 0 {
		return MatchFullError(ev.rel, fk.con)
	}
	keyOK := fk.SetKey(ec, ev.new, fk.FkTypes)
	if err := s.riLockPK(ec, fk, riQuery{fk.con.OID, 'c'}, keyOK); err != nil {
		return err
	}
	var found bool
	if fk.parent.Partitioned() {
		// RI_FKey_check looks into a partitioned table with a snapshot as
		// of now (detectNewRows), also under REPEATABLE READ
		restore := s.riLatestSnapshot()
		found, err = s.riLockReferenced(ec, fk, keyOK)
		restore()
	} else {
		s.riSnapshot()
		found, err = s.riLockReferenced(ec, fk, keyOK)
	}
	if err != nil || found {
		return err
	}
	return fk.NotPresent(ev.rel, ev.new)
}

// riLockReferenced looks the key setKey loaded (keyOK: it could) up in the
// referenced table — a partitioned one in the partition that can hold it
// — and locks the row FOR KEY SHARE; false when no live row has the key.
func (s *Executor) riLockReferenced(ec *expr.EvalCtx, fk *fkRef, keyOK bool) (bool, error) {
	if !keyOK {
		return false, nil
	}
	rel, ts := fk.pkSource(s.Cat())
	if ts == nil {
		return false, nil
	}
	want := make([]types.Datum, len(fk.keys))
	for i, k := range fk.keys {
		want[i] = k.D
	}
	found := false
	err := s.ScanTableTIDs(ec, ts, func(tid storage.TID, _ []types.Datum) error {
		locked, _, _, err := s.LockRow(ec, rel, tid, txn.LockTupleKeyShare, storage.WaitBlock, func(nrow []types.Datum) (bool, error) {
			for i, c := range fk.index.Cols {
				if nrow[c].Null || string(catalog.AppendKey(nil, fk.keyTyps[i:i+1], nrow[c:c+1])) != string(catalog.AppendKey(nil, fk.keyTyps[i:i+1], want[i:i+1])) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if locked {
			found = true
			return expr.ErrStopScan
		}
		return nil
	})
	if err != nil && err != expr.ErrStopScan {
		return false, err
	}
	return found, nil
}

// rowLive reports whether the row version at tid is still the live one
// for this transaction (SnapshotSelf): not deleted or updated by it, nor
// by a committed transaction, and its inserter did not abort.
func (s *Executor) rowLive(t *catalog.TableDef, tid storage.TID) (bool, error) {
	live := false
	txns := s.Txns
	_, err := s.Store.FetchAny(s.Proc, storage.RelID(t.RelFile), tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) {
		if !s.Txn.IsCurrent(h.Xmin) && txns.Status(h.Xmin) != txn.Committed {
			return
		}
		if s.Txn.IsOnlyLocked(h) {
			live = true
			return
		}
		u := txns.UpdateXid(h)
		live = !s.Txn.IsCurrent(u) && txns.Status(u) != txn.Committed
	})
	return live, err
}

// riRestrict is ri_restrict: the old key must not be referenced any more.
// For NO ACTION, another row of the referenced table now holding the key
// will do (ri_Check_Pk_Match); RESTRICT allows no substitute.
func (s *Executor) riRestrict(ec *expr.EvalCtx, ev *riEvent, noAction bool) error {
	fk := ev.fk
	if err := s.LockNow(ec, fk.Child.OID, locks.RowShareLock); err != nil {
		return err
	}
	if noAction {
		keyOK := fk.SetKey(ec, ev.old, fk.pkTypes)
		if err := s.riLockPK(ec, fk, riQuery{fk.con.OID, 'm'}, keyOK); err != nil {
			return err
		}
		restore := s.riLatestSnapshot()
		found, err := s.riLockReferenced(ec, fk, keyOK)
		restore()
		if err != nil || found {
			return err
		}
	}
	want := make([]types.Datum, len(ev.old))
	for i, v := range ev.old {
		d, err := types.CastDatum(ec.FormatCtx(), v, fk.pkTypes[i], fk.FkTypes[i], false)
		if err != nil {
			return nil // no referencing value can equal it
		}
		want[i] = d
	}
	type source struct {
		t  *catalog.TableDef
		ts *plan.TableSource
	}
	var sources []source
	cat := s.Cat()
	custom := s.riPlan(riQuery{fk.con.OID, 'r'}, false) != expr.GenericReuse
	for _, leaf := range s.LeafTables(fk.Child) {
		ts := plan.NewTableSource(leaf, leaf.Name)
		eq := map[int]expr.Expr{}
		for i, c := range fk.con.Cols {
			eq[c] = &expr.ConstExpr{T: fk.FkTypes[i], D: want[i]}
		}
		ts.UseIndexKeys(cat, eq)
		if err := s.riLockRelation(ec, leaf, locks.RowShareLock, ts.Index, custom); err != nil {
			return err
		}
		sources = append(sources, source{leaf, ts})
	}
	restore := s.riLatestSnapshot()
	defer restore()
	matches := func(row []types.Datum) bool {
		for i, c := range fk.con.Cols {
			if row[c].Null || string(catalog.AppendKey(nil, fk.FkTypes[i:i+1], row[c:c+1])) != string(catalog.AppendKey(nil, fk.FkTypes[i:i+1], want[i:i+1])) {
				return false
			}
		}
		return true
	}
	for _, src := range sources {
		found := false
		err := s.ScanTableTIDs(ec, src.ts, func(tid storage.TID, row []types.Datum) error {
			if !matches(row) {
				return nil
			}
			locked, _, _, err := s.LockRow(ec, src.t, tid, txn.LockTupleKeyShare, storage.WaitBlock, func(nrow []types.Datum) (bool, error) {
				return matches(nrow), nil
			})
			if err != nil {
				return err
			}
			if locked {
				found = true
				return expr.ErrStopScan
			}
			return nil
		})
		if err != nil && err != expr.ErrStopScan {
			return err
		}
		if found {
			return fk.stillReferenced(ev.old)
		}
	}
	return nil
}

// riAction runs the referential action kind ('D' cascade delete, 'U'
// cascade update, 'N' set null, 'S' set default) for the old key, as the
// statement PostgreSQL builds for it.
func (s *Executor) riAction(ec *expr.EvalCtx, ev *riEvent, kind byte) error {
	fk := ev.fk
	st, err := s.riActionStmt(fk, kind)
	if err != nil {
		return err
	}
	var params []types.Datum
	conv := func(vals []types.Datum) error {
		for i, v := range vals {
			d, err := types.CastDatum(ec.FormatCtx(), v, fk.pkTypes[i], fk.FkTypes[i], false)
			if err != nil {
				return err
			}
			params = append(params, d)
		}
		return nil
	}
	if kind == 'U' {
		if err := conv(ev.new); err != nil {
			return err
		}
	}
	if err := conv(ev.old); err != nil {
		return nil // no referencing value can equal the old key
	}
	// the locks of PostgreSQL's plan for it: custom plans lock every index,
	// the generic plan from the seventh execution on only those it reads
	if err := s.LockRelations(ec.Ctx, st.Rels, s.riPlan(riQuery{fk.con.OID, kind}, false) == expr.GenericReuse); err != nil {
		return err
	}
	restore := s.riLatestSnapshot()
	defer restore()
	mark := len(s.ri.queue)
	nec := &expr.EvalCtx{B: &s.Backend, Exec: s, Ctx: ec.Ctx, Params: params}
	_, err = s.RunPlan(nec, st, func([]types.Datum) error { return nil })
	if err == nil {
		err = s.riFire(nec, mark)
	}
	s.ri.queue = s.ri.queue[:mark]
	return err
}

// riActionStmt compiles (once per catalog version) the statement of a
// referential action:
//
//	DELETE FROM [ONLY] fk WHERE fkcol = $1 [AND ...]
//	UPDATE [ONLY] fk SET fkcol = $1 [, ...] WHERE fkcol = $n+1 [AND ...]
//	UPDATE [ONLY] fk SET fkcol = NULL | DEFAULT [, ...] WHERE fkcol = $1 [AND ...]
func (s *Executor) riActionStmt(fk *fkRef, kind byte) (*plan.Stmt, error) {
	q := riQuery{fk.con.OID, kind}
	if st := s.ri.plans[q]; st != nil && st.CatVer == s.Cat().Version {
		return st, nil
	}
	only := "ONLY "
	if fk.Child.Partitioned() {
		only = ""
	}
	rel := only + types.QuoteIdent(fk.Child.Name)
	n := len(fk.con.Cols)
	var params []types.Type
	var b strings.Builder
	where := func(first int) {
		for i, c := range fk.con.Cols {
			if i == 0 {
				b.WriteString(" WHERE ")
			} else {
				b.WriteString(" AND ")
			}
			b.WriteString(types.QuoteIdent(fk.Child.Cols[c].Name) + " = $" + strconv.Itoa(first+i))
			params = append(params, fk.FkTypes[i])
		}
	}
	if kind == 'D' {
		b.WriteString("DELETE FROM " + rel)
		where(1)
	} else {
		b.WriteString("UPDATE " + rel + " SET ")
		for i, c := range fk.con.Cols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(types.QuoteIdent(fk.Child.Cols[c].Name) + " = ")
			switch kind {
			case 'U':
				b.WriteString("$" + strconv.Itoa(i+1))
				params = append(params, fk.FkTypes[i])
			case 'N':
				b.WriteString("NULL")
			default:
				b.WriteString("DEFAULT")
			}
		}
		first := 1
		if kind == 'U' {
			first = n + 1
		}
		where(first)
	}
	text := b.String()
	tree, err := pg.Parse(text)
	if err != nil {
		return nil, err
	}
	st, err := s.Spi(tree.Stmts[0].Stmt, text, &params)
	if err != nil {
		return nil, err
	}
	if s.ri.plans == nil {
		s.ri.plans = map[riQuery]*plan.Stmt{}
	}
	s.ri.plans[q] = st
	return st, nil
}
