package exec

import (
	"fmt"
	"strings"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// --- rows moving between partitions

// afterMoveDelete queues what deleting the row from leaf t does when an
// UPDATE moves it to another partition: the ON DELETE actions of foreign
// keys that reference t itself. Its clones' are skipped: the moved row's
// update event of the table the UPDATE named stands for them
// (AfterTriggerSaveEvent).
func (s *Executor) afterMoveDelete(t *catalog.TableDef, old []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !fk.con.IsClone() && !anyNull(old, fk.con.RefCols) {
			s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKDelete, old: pick(old, fk.con.RefCols)})
		}
	}
	return nil
}

// afterMoveUpdate queues the ON UPDATE events of a row that an UPDATE of
// root moved out of leaf t, with the foreign keys referencing root
// (ExecCrossPartitionUpdateForeignKey). A foreign key that references a
// partitioned table between t and root directly cannot be enforced that
// way: 0A000, as in PostgreSQL.
func (s *Executor) afterMoveUpdate(t *catalog.TableDef, root uint32, set map[int]expr.Expr, old, new []types.Datum) error {
	cat := s.Cat()
	rt := cat.Tables[root]
	if rt == nil {
		return nil
	}
	for a := cat.Tables[t.Parent]; a != nil && a.OID != root; a = cat.Tables[a.Parent] {
		for _, con := range cat.ReferencingKeys(a.OID) {
			if !con.IsClone() {
				return pgerr.NotSupported("cannot move tuple across partitions when a non-root ancestor of the source partition is directly referenced in a foreign key").
					WithDetail(fmt.Sprintf("A foreign key points to ancestor \"%s\" but not the root ancestor \"%s\".", a.Name, rt.Name)).
					WithHint(fmt.Sprintf("Consider defining the foreign key on table \"%s\".", rt.Name))
			}
		}
	}
	rc, err := s.relConstraints(rt)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !touches(set, fk.con.RefCols) || anyNull(old, fk.con.RefCols) || keysEqual(fk.pkTypes, old, new, fk.con.RefCols) {
			continue
		}
		s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKUpdate, old: pick(old, fk.con.RefCols), new: pick(new, fk.con.RefCols)})
	}
	return nil
}

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
// sql/commands/foreignkeypart.go describes. CASCADE, SET NULL and SET DEFAULT run the UPDATE or
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
	// leaf partition, built when first used (sql/commands/foreignkeypart.go)
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
