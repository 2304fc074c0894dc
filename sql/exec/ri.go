package exec

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// Referential integrity at run time, as PostgreSQL's ri_triggers.c does
// it with its AFTER ROW triggers.
//
// Writing a row queues events: an inserted row, or an updated one whose
// foreign-key columns changed, is to be checked against the referenced
// table (RI_FKey_check_ins / _upd; an UPDATE that leaves the columns alone
// queues nothing, RI_FKey_fk_upd_check_required); a deleted referenced row,
// or one whose key changed, is to be looked for in the referencing tables
// (the action triggers; RI_FKey_pk_upd_check_required). The statement's
// events fire when it ends (AfterTriggerEndQuery): per row, first the
// referenced-side ones, then the referencing-side ones, each group in
// constraint order — the order of PostgreSQL's trigger names.
//
// Each check is PostgreSQL's RI query, done directly: after a
// CommandCounterIncrement and a new snapshot (as SPI gives one; under
// REPEATABLE READ the transaction's, except that the referenced side's
// queries look with one taken now), the
// referenced key is looked up in the referenced table's unique index and
// the row found is locked FOR KEY SHARE (lockRow: waits for a deleter or
// key updater, follows a concurrent update under READ COMMITTED); the
// referencing rows are looked for by an index covering the foreign-key
// columns or else a scan, and locked FOR KEY SHARE too. Relation locks are
// those of the RI query's plan: RowShareLock on the table and, for the
// first six executions of each query in a session (PostgreSQL's plan
// cache builds custom plans five times, then a generic plan, each planning
// locking every index), on all its indexes; afterwards only on the index
// the plan uses (riPlan; plan_cache_mode forces either plan, as it does
// in PostgreSQL). A partitioned referenced table is looked into as
// fkpart.go describes. CASCADE, SET NULL and SET DEFAULT run the UPDATE or
// DELETE PostgreSQL runs, compiled once per session; their own events fire
// at their end, nested.

// fkRef is a foreign key resolved for execution in one session.
type fkRef struct {
	con     *catalog.ConstraintDef
	Child   *catalog.TableDef // conrelid (may be partitioned)
	parent  *catalog.TableDef // confrelid
	index   *catalog.IndexDef // conindid
	FkTypes []types.Type      // of con.Cols
	pkTypes []types.Type      // of con.RefCols
	// keyPos[i] is the position in con.Cols / con.RefCols of the index's
	// column i
	keyPos []int
	// pk looks the referenced key up (keys holds its values, of keyTyps);
	// for a partitioned referenced table leaves holds the lookup in each
	// leaf partition, built when first used (fkpart.go)
	pk      *plan.TableSource
	keys    []*expr.ConstExpr
	keyTyps []types.Type
	leaves  map[uint32]*plan.TableSource
	parts   int // the partitions under a partitioned referenced table
	// scratch of routeKey
	row, pkey []types.Datum
	path      []*catalog.TableDef
}

func (s *Executor) NewFKRef(con *catalog.ConstraintDef) (*fkRef, error) {
	cat := s.Cat()
	fk := &fkRef{con: con, Child: cat.Tables[con.Table], parent: cat.Tables[con.RefTable], index: cat.Indexes[con.RefIndex]}
	if fk.Child == nil || fk.parent == nil || fk.index == nil {
		return nil, pgerr.New(pgerr.InternalError, "foreign key constraint \"%s\" is broken", con.Name)
	}
	for i := range con.Cols {
		fk.FkTypes = append(fk.FkTypes, fk.Child.Cols[con.Cols[i]].Type())
		fk.pkTypes = append(fk.pkTypes, fk.parent.Cols[con.RefCols[i]].Type())
	}
	for _, c := range fk.index.Cols {
		for j, rc := range con.RefCols {
			if rc == c {
				fk.keyPos = append(fk.keyPos, j)
			}
		}
		k := &expr.ConstExpr{T: fk.parent.Cols[c].Type()}
		fk.keys = append(fk.keys, k)
		fk.keyTyps = append(fk.keyTyps, k.T)
	}
	if fk.parent.Partitioned() {
		fk.parts = len(cat.Inheritors(fk.parent))
		return fk, nil
	}
	fk.pk = plan.NewTableSource(fk.parent, fk.parent.Name)
	fk.pk.Index = fk.index
	for _, k := range fk.keys {
		fk.pk.KeyArgs = append(fk.pk.KeyArgs, k)
		fk.pk.KeyTyps = append(fk.pk.KeyTyps, k.T)
	}
	return fk, nil
}

// setKey loads vals (in constraint order, of types from) as the key the
// referenced-table lookup uses; false when a value has no equal in the
// referenced type (it then references nothing).
func (fk *fkRef) SetKey(ec *expr.EvalCtx, vals []types.Datum, from []types.Type) bool {
	for i, j := range fk.keyPos {
		v, err := types.CastDatum(ec.FormatCtx(), vals[j], from[j], fk.pkTypes[j], false)
		if err != nil {
			return false
		}
		fk.keys[i].D = v
	}
	return true
}

// pkKey is the referenced index's key for vals.
func (fk *fkRef) PkKey(ec *expr.EvalCtx, vals []types.Datum, from []types.Type) ([]byte, bool) {
	if !fk.SetKey(ec, vals, from) {
		return nil, false
	}
	return fk.keyBytes(), true
}

// keyBytes is the index key of the values in fk.keys.
func (fk *fkRef) keyBytes() []byte {
	ds := make([]types.Datum, len(fk.keys))
	for i, k := range fk.keys {
		ds[i] = k.D
	}
	return catalog.AppendKey(nil, fk.keyTyps, ds)
}

// notPresent is the referencing side's violation (ri_ReportViolation).
func (fk *fkRef) NotPresent(rel *catalog.TableDef, vals []types.Datum) error {
	return pgerr.New(pgerr.ForeignKeyViolation, "insert or update on table \"%s\" violates foreign key constraint \"%s\"", rel.Name, fk.con.Name).
		WithDetail("Key ("+KeyNames(rel, fk.con.Cols)+")=("+KeyValues(fk.FkTypes, vals)+") is not present in table \""+fk.parent.Name+"\".").
		OnConstraint(rel.Name, fk.con.Name)
}

// stillReferenced is the referenced side's violation.
func (fk *fkRef) stillReferenced(vals []types.Datum) error {
	return pgerr.New(pgerr.ForeignKeyViolation, "update or delete on table \"%s\" violates foreign key constraint \"%s\" on table \"%s\"", fk.parent.Name, fk.con.Name, fk.Child.Name).
		WithDetail("Key ("+KeyNames(fk.parent, fk.con.RefCols)+")=("+KeyValues(fk.pkTypes, vals)+") is still referenced from table \""+fk.Child.Name+"\".").
		OnConstraint(fk.Child.Name, fk.con.Name)
}

func MatchFullError(rel *catalog.TableDef, con *catalog.ConstraintDef) error {
	return pgerr.New(pgerr.ForeignKeyViolation, "insert or update on table \"%s\" violates foreign key constraint \"%s\"", rel.Name, con.Name).
		WithDetail("MATCH FULL does not allow mixing of null and nonnull key values.").OnConstraint(rel.Name, con.Name)
}

func KeyNames(t *catalog.TableDef, cols []int) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = t.Cols[c].Name
	}
	return strings.Join(names, ", ")
}

func KeyValues(keyTypes []types.Type, vals []types.Datum) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if v.Null {
			out[i] = "null"
		} else {
			out[i] = string(types.AppendText(nil, keyTypes[i], v, nil))
		}
	}
	return strings.Join(out, ", ")
}

// relCons is what a table's rows must satisfy, compiled for a session.
type relCons struct {
	checks []plan.CheckCons
	out    []*fkRef // foreign keys of the table and its partitioned ancestors
	in     []*fkRef // foreign keys referencing the table
}

// relConstraints returns t's compiled constraints, nil when it has none.
func (s *Executor) relConstraints(t *catalog.TableDef) (*relCons, error) {
	cat := s.Cat()
	if len(cat.Constraints) == 0 {
		return nil, nil
	}
	if s.ri.rels == nil || s.ri.ver != cat.Version {
		s.ri.rels = map[uint32]*relCons{}
		s.ri.ver = cat.Version
	}
	if rc, ok := s.ri.rels[t.OID]; ok {
		return rc, nil
	}
	checks, err := s.CompileChecks(t)
	if err != nil {
		return nil, err
	}
	rc := &relCons{checks: checks}
	for _, con := range append(append([]*catalog.ConstraintDef(nil), cat.TableConstraintDefs(t.OID)...), cat.InheritedConstraints(t)...) {
		if con.Kind != catalog.ConForeign || con.IsClone() { // a clone acts for the referenced side only
			continue
		}
		fk, err := s.NewFKRef(con)
		if err != nil {
			return nil, err
		}
		rc.out = append(rc.out, fk)
	}
	for _, con := range cat.ReferencingKeys(t.OID) {
		fk, err := s.NewFKRef(con)
		if err != nil {
			return nil, err
		}
		rc.in = append(rc.in, fk)
	}
	if len(rc.checks) == 0 && len(rc.out) == 0 && len(rc.in) == 0 {
		rc = nil
	}
	s.ri.rels[t.OID] = rc
	return rc, nil
}

// riState is a session's referential-integrity machinery.
type riState struct {
	ver   uint64                   // catalog version rels was built for
	rels  map[uint32]*relCons      // by table OID
	queue []riEvent                // the events of the running statement (and those it nests)
	runs  map[riQuery]*riPlanState // each RI query's plan cache entry
	plans map[riQuery]*plan.Stmt   // compiled CASCADE / SET NULL / SET DEFAULT statements
}

// riPlanState is what PostgreSQL's plan cache knows of one RI query
// (SPI_prepare'd once per session and kept): how many custom plans it
// made, whether a generic plan is cached, and what choose_custom_plan
// settled on after the sixth execution.
type riPlanState struct {
	customs int
	generic bool
	choice  plan.PlanChoice
}

// riQuery names one of a constraint's RI queries (ri_BuildQueryKey).
type riQuery struct {
	con  uint32
	kind byte // 'c' check, 'm' pk match, 'r' restrict, 'D' cascade delete, 'U' cascade update, 'N' set null, 'S' set default
}

type riKind uint8

const (
	riCheckInsert riKind = iota // RI_FKey_check_ins
	riCheckUpdate               // RI_FKey_check_upd
	riPKDelete                  // the ON DELETE action
	riPKUpdate                  // the ON UPDATE action
)

// riEvent is one queued RI trigger event.
type riEvent struct {
	fk   *fkRef
	kind riKind
	rel  *catalog.TableDef // the referencing side: the table holding the row
	tid  storage.TID       // the referencing side: the new row version
	old  []types.Datum     // the referenced side: the old key (con.RefCols order)
	new  []types.Datum     // the new values: FK columns (con.Cols order), or the new key
}

func pick(row []types.Datum, cols []int) []types.Datum {
	out := make([]types.Datum, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// fkNeedsCheck: the new FK values must be looked up (not all NULL, and
// for MATCH SIMPLE none NULL; MATCH FULL reports a mix when it fires).
func fkNeedsCheck(con *catalog.ConstraintDef, row []types.Datum) bool {
	nulls := 0
	for _, c := range con.Cols {
		if row[c].Null {
			nulls++
		}
	}
	return nulls == 0 || nulls < len(con.Cols) && con.Match == catalog.FkMatchFull
}

// afterInsertRow queues the checks of a row inserted into t (a leaf).
func (s *Executor) afterInsertRow(t *catalog.TableDef, tid storage.TID, row []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.out {
		if fkNeedsCheck(fk.con, row) {
			s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riCheckInsert, rel: t, tid: tid, new: pick(row, fk.con.Cols)})
		}
	}
	return nil
}

// afterUpdateRow queues the events of a row of t updated from old to new
// (now at tid) by an UPDATE that set the columns in set.
func (s *Executor) afterUpdateRow(t *catalog.TableDef, set map[int]expr.Expr, old []types.Datum, tid storage.TID, new []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !touches(set, fk.con.RefCols) || anyNull(old, fk.con.RefCols) || keysEqual(fk.pkTypes, old, new, fk.con.RefCols) {
			continue
		}
		s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKUpdate, old: pick(old, fk.con.RefCols), new: pick(new, fk.con.RefCols)})
	}
	for _, fk := range rc.out {
		if !touches(set, fk.con.Cols) || !fkNeedsCheck(fk.con, new) || keysEqual(fk.FkTypes, old, new, fk.con.Cols) {
			continue
		}
		s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riCheckUpdate, rel: t, tid: tid, new: pick(new, fk.con.Cols)})
	}
	return nil
}

// afterDeleteRow queues the ON DELETE actions for a row deleted from t.
func (s *Executor) afterDeleteRow(t *catalog.TableDef, old []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !anyNull(old, fk.con.RefCols) {
			s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKDelete, old: pick(old, fk.con.RefCols)})
		}
	}
	return nil
}

func touches(set map[int]expr.Expr, cols []int) bool {
	for _, c := range cols {
		if _, ok := set[c]; ok {
			return true
		}
	}
	return false
}

func anyNull(row []types.Datum, cols []int) bool {
	for _, c := range cols {
		if row[c].Null {
			return true
		}
	}
	return false
}

// keysEqual compares the columns of two rows by their binary images
// (ri_KeysEqual).
func keysEqual(keyTypes []types.Type, a, b []types.Datum, cols []int) bool {
	for i, c := range cols {
		if a[c].Null != b[c].Null {
			return false
		}
		if a[c].Null {
			continue
		}
		t := keyTypes[i : i+1]
		if string(catalog.AppendKey(nil, t, a[c:c+1])) != string(catalog.AppendKey(nil, t, b[c:c+1])) {
			return false
		}
	}
	return true
}

// afterStatement fires the events the statement queued, unless it failed
// (then they are dropped with it).
func (s *Executor) AfterStatement(ec *expr.EvalCtx, err error) error {
	if err == nil && len(s.ri.queue) > 0 {
		err = s.riFire(ec, 0)
	}
	s.ri.queue = s.ri.queue[:0]
	return err
}

// riFire fires the queued events from index from on, in order; events
// that the actions queue are fired by those actions themselves.
func (s *Executor) riFire(ec *expr.EvalCtx, from int) error {
	for i := from; i < len(s.ri.queue); i++ {
		ev := s.ri.queue[i]
		if err := s.riFireOne(ec, &ev); err != nil {
			return err
		}
	}
	s.ri.queue = s.ri.queue[:from]
	return nil
}

func (s *Executor) riFireOne(ec *expr.EvalCtx, ev *riEvent) error {
	con := ev.fk.con
	var action byte
	switch ev.kind {
	case riCheckInsert, riCheckUpdate:
		return s.riCheck(ec, ev)
	case riPKDelete:
		action = con.OnDelete
	default:
		action = con.OnUpdate
	}
	switch action {
	case catalog.FkRestrict:
		return s.riRestrict(ec, ev, false)
	case catalog.FkCascade:
		if ev.kind == riPKDelete {
			return s.riAction(ec, ev, 'D')
		}
		return s.riAction(ec, ev, 'U')
	case catalog.FkSetNull:
		return s.riAction(ec, ev, 'N')
	case catalog.FkSetDefault:
		if err := s.riAction(ec, ev, 'S'); err != nil {
			return err
		}
	}
	return s.riRestrict(ec, ev, true) // NO ACTION, and SET DEFAULT's recheck
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
	switch mode := s.Gucs.String("plan_cache_mode"); {
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
	nec := &expr.EvalCtx{S: &s.Backend, Exec: s, Ctx: ec.Ctx, Params: params}
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
