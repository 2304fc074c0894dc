package commands

import (
	"fmt"
	"slices"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// --- DROP, TRUNCATE, VACUUM, LOCK of partitioned tables

// dropPartitionTree drops t when it is partitioned or a partition: the
// parent of a partition is locked first, then t, its partitions and
// their indexes, all AccessExclusiveLock (as PostgreSQL's dependency
// walk does).
func (s *Utility) dropPartitionTree(ec *expr.EvalCtx, t *catalog.TableDef) error {
	var def uint32 // the default partition's constraint changes with its siblings
	if t.Parent != 0 {
		if err := s.LockNow(ec, t.Parent, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if d := s.Cat().PartDesc(t.Parent); d != nil && d.Def >= 0 && d.Parts[d.Def] != t.OID {
			def = d.Parts[d.Def]
		}
	}
	var drop func(t *catalog.TableDef) error
	drop = func(t *catalog.TableDef) error {
		if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if t = s.Cat().Tables[t.OID]; t == nil {
			return nil
		}
		for _, child := range s.Cat().PartitionChildren(t) {
			if err := drop(child); err != nil {
				return err
			}
		}
		op := &catalog.CatOp{Kind: "drop", Oid: t.OID, OldFile: t.RelFile, OldIdx: map[uint32]uint32{}}
		for _, ix := range s.Cat().TableIndexes(t) {
			if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			op.OldIdx[ix.OID] = ix.RelFile
		}
		s.AddCatOp(op)
		return nil
	}
	if err := drop(t); err != nil {
		return err
	}
	if def != 0 {
		return s.LockNow(ec, def, locks.AccessExclusiveLock)
	}
	return nil
}

// --- ALTER TABLE ... ATTACH / DETACH PARTITION

// isPartitionCmd reports whether at is ATTACH or DETACH PARTITION.
func isPartitionCmd(at *pg.AlterTableStmt) bool {
	for _, c := range at.Cmds {
		switch c.GetAlterTableCmd().Subtype {
		case pg.AlterTableType_AT_AttachPartition, pg.AlterTableType_AT_DetachPartition, pg.AlterTableType_AT_DetachPartitionFinalize:
			return true
		}
	}
	return false
}

func (s *Utility) compileAlterPartition(at *pg.AlterTableStmt, st *plan.Stmt) error {
	if len(at.Cmds) != 1 {
		return pgerr.NotSupported("ATTACH or DETACH PARTITION together with other ALTER TABLE commands is not supported")
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	pc := cmd.GetDef().GetPartitionCmd()
	rv := at.Relation
	st.Tag = "ALTER TABLE"
	switch cmd.Subtype {
	case pg.AlterTableType_AT_AttachPartition:
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			return "ALTER TABLE", s.attachPartition(ec, rv, pc)
		}
	case pg.AlterTableType_AT_DetachPartitionFinalize:
		return pgerr.NotSupported("ALTER TABLE ... DETACH PARTITION ... FINALIZE is not supported")
	default:
		if pc.Concurrent {
			st.NoBlock = "ALTER TABLE ... DETACH CONCURRENTLY"
			st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
				return "", pgerr.NotSupported("ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY is not supported")
			}
			return nil
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			return "ALTER TABLE", s.detachPartition(ec, rv, pc)
		}
	}
	return nil
}

func (s *Utility) attachPartition(ec *expr.EvalCtx, rv *pg.RangeVar, pc *pg.PartitionCmd) error {
	// PostgreSQL 12+: ShareUpdateExclusiveLock on the parent, so reads and
	// writes of the parent go on while a partition is attached.
	parent, err := s.LockTable(ec, rv, locks.ShareUpdateExclusiveLock)
	if err != nil {
		return err
	}
	if !parent.Partitioned() {
		return pgerr.New(pgerr.InvalidObjectDefinition, "table \"%s\" is not partitioned", parent.Name)
	}
	child, err := s.LockTable(ec, pc.Name, locks.AccessExclusiveLock)
	if err != nil {
		return err
	}
	// a partitioned table's partitions too (find_all_inheritors, against
	// circularity and for the scan of their rows)
	if _, err := s.lockInheritors(ec, child, locks.AccessExclusiveLock); err != nil {
		return err
	}
	cat := s.Cat()
	switch {
	case child.Parent != 0:
		return pgerr.New(pgerr.WrongObjectType, "\"%s\" is already a partition", child.Name)
	case cat.AncestorOf(child, parent):
		return pgerr.New(pgerr.DuplicateTable, "circular inheritance not allowed").
			WithDetail(fmt.Sprintf("\"%s\" is already a child of \"%s\".", child.Name, parent.Name))
	}
	if err := checkPartitionColumns(parent, child); err != nil {
		return err
	}
	if err := s.attachChecks(parent, child); err != nil { // constraint.go
		return err
	}
	bound, err := s.transformBound(parent, pc.Bound)
	if err != nil {
		return err
	}
	if err := s.checkNewBound(parent, child.Name, bound, pc.Bound); err != nil {
		return err
	}
	d := s.Cat().PartDesc(parent.OID)
	if d.Def >= 0 && !bound.Default {
		if err := s.checkDefaultPartition(ec, parent, bound); err != nil {
			return err
		}
	}
	// the existing rows must satisfy the new partition constraint
	var key []types.Datum
	if err := s.ScanRows(ec, child, func(row []types.Datum) error {
		key = catalog.PartitionKey(d, row, key)
		if !boundContains(d, bound, key) {
			return pgerr.New(pgerr.CheckViolation, "partition constraint of relation \"%s\" is violated by some row", child.Name)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.attachForeignKeys(ec, parent, child); err != nil { // constraint.go
		return err
	}
	nt := *child
	nt.Parent, nt.Bound = parent.OID, bound
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	for _, pix := range s.Cat().TableIndexes(parent) {
		if err := s.cloneIndexOnto(ec, pix, s.Cat().Tables[child.OID]); err != nil {
			return err
		}
	}
	// the foreign keys referencing the parent get clones for it (foreignkeypart.go)
	return s.cloneReferencedKeys(ec, s.Cat().Tables[parent.OID], s.Cat().Tables[child.OID])
}

// checkPartitionColumns checks that child can be a partition of parent: PostgreSQL's
// messages for missing, extra and different columns; lockd also needs the
// columns in the parent's order.
func checkPartitionColumns(parent, child *catalog.TableDef) error {
	for _, c := range child.Cols {
		if parent.ColIndex(c.Name) < 0 {
			return pgerr.New(pgerr.DatatypeMismatch, "table \"%s\" contains column \"%s\" not found in parent \"%s\"", child.Name, c.Name, parent.Name).
				WithDetail("The new partition may contain only the columns present in parent.")
		}
	}
	for i, pc := range parent.Cols {
		j := child.ColIndex(pc.Name)
		if j < 0 {
			return pgerr.New(pgerr.DatatypeMismatch, "child table is missing column \"%s\"", pc.Name)
		}
		cc := child.Cols[j]
		if cc.TypeOID != pc.TypeOID || cc.TypeMod != pc.TypeMod {
			return pgerr.New(pgerr.DatatypeMismatch, "child table \"%s\" has different type for column \"%s\"", child.Name, pc.Name)
		}
		if pc.NotNull && !cc.NotNull {
			return pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" in child table must be marked NOT NULL", pc.Name)
		}
		if j != i {
			return pgerr.NotSupported("attaching a table whose columns are in a different order than its parent's is not supported")
		}
	}
	return nil
}

func (s *Utility) detachPartition(ec *expr.EvalCtx, rv *pg.RangeVar, pc *pg.PartitionCmd) error {
	parent, err := s.LockTable(ec, rv, locks.AccessExclusiveLock)
	if err != nil {
		return err
	}
	if !parent.Partitioned() {
		return pgerr.New(pgerr.InvalidObjectDefinition, "table \"%s\" is not partitioned", parent.Name)
	}
	child, err := s.ResolveTable(pc.Name)
	if err != nil {
		return err
	}
	if child.Parent != parent.OID {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" is not a partition of relation \"%s\"", child.Name, parent.Name)
	}
	if err := s.LockNow(ec, child.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	// the default partition's constraint changes with its siblings
	if d := s.Cat().PartDesc(parent.OID); d.Def >= 0 && d.Parts[d.Def] != child.OID {
		if err := s.LockNow(ec, d.Parts[d.Def], locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	// foreign keys referencing the partition through their clones
	if err := s.detachReferencedKeys(ec, parent, s.Cat().Tables[child.OID]); err != nil { // foreignkeypart.go
		return err
	}
	child = s.Cat().Tables[child.OID]
	for _, ix := range s.Cat().TableIndexes(child) {
		if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if ix.Parent != 0 {
			nix := *ix
			nix.Parent = 0
			s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
		}
	}
	if err := s.detachConstraints(ec, child); err != nil { // the inherited constraints stay with it (constraint.go)
		return err
	}
	nt := *child
	nt.Parent, nt.Bound = 0, nil
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	return nil
}

// partitionSpec makes t partitioned by spec (PARTITION BY).
func partitionSpec(t *catalog.TableDef, spec *pg.PartitionSpec) error {
	strategy := ""
	switch spec.Strategy {
	case pg.PartitionStrategy_PARTITION_STRATEGY_RANGE:
		strategy = catalog.PartRange
	case pg.PartitionStrategy_PARTITION_STRATEGY_LIST:
		strategy = catalog.PartList
	case pg.PartitionStrategy_PARTITION_STRATEGY_HASH:
		strategy = catalog.PartHash
	default:
		return pgerr.NotSupported("this partitioning strategy is not supported")
	}
	if strategy == catalog.PartList && len(spec.PartParams) > 1 {
		return pgerr.New(pgerr.InvalidObjectDefinition, "cannot use \"list\" partition strategy with more than one column")
	}
	if t.Fillfactor != 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"fillfactor\"")
	}
	var key []int
	for _, p := range spec.PartParams {
		el := p.GetPartitionElem()
		switch {
		case el.Expr != nil:
			return expr.PosErr(pgerr.NotSupported("partition keys on expressions are not supported"), el.Location)
		case len(el.Collation) > 0 || len(el.Opclass) > 0:
			return expr.PosErr(pgerr.NotSupported("a collation or operator class for a partition key is not supported"), el.Location)
		}
		i := t.ColIndex(el.Name)
		if i < 0 {
			return expr.PosErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" named in partition key does not exist", el.Name), el.Location)
		}
		typ := t.Cols[i].Type()
		ok := catalog.HashableKeyType(typ)
		if strategy != catalog.PartHash {
			switch types.CategoryOf(typ) {
			case types.CatBool, types.CatInt, types.CatNumeric, types.CatFloat, types.CatString, types.CatDatetime:
				ok = true
			}
		}
		if !ok {
			return expr.PosErr(pgerr.NotSupported("%s partitioning on a column of type %s is not supported", strategyName(strategy), typ.Name), el.Location)
		}
		key = append(key, i)
	}
	t.RelKind, t.PartStrategy, t.PartKey = "p", strategy, key
	return nil
}

func strategyName(s string) string {
	switch s {
	case catalog.PartRange:
		return "range"
	case catalog.PartList:
		return "list"
	}
	return "hash"
}

// compileCreatePartition compiles CREATE TABLE name PARTITION OF parent
// bound [PARTITION BY ...]; t carries what compileCreateTable already
// parsed (name, UNLOGGED, fillfactor).
func (s *Utility) compileCreatePartition(cs *pg.CreateStmt, t *catalog.TableDef, st *plan.Stmt) error {
	parentRV := cs.InhRelations[0].GetRangeVar()
	spec, partspec := cs.Partbound, cs.Partspec
	ifNotExists := cs.IfNotExists
	st.Tag = "CREATE TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if _, exists := s.Cat().ByName[t.Name]; exists && ifNotExists {
			s.Notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", t.Name))
			return "CREATE TABLE", nil
		}
		parent, err := s.LockTable(ec, parentRV, locks.AccessExclusiveLock)
		if err != nil {
			return "", err
		}
		if !parent.Partitioned() {
			return "", pgerr.New(pgerr.InvalidObjectDefinition, "\"%s\" is not partitioned", parent.Name)
		}
		bound, err := s.transformBound(parent, spec)
		if err != nil {
			return "", err
		}
		if _, exists := s.Cat().ByName[t.Name]; exists {
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", t.Name)
		}
		nt := *t
		nt.Cols = make([]catalog.ColumnDef, len(parent.Cols))
		copy(nt.Cols, parent.Cols)
		stripIdentity(nt.Cols) // columnsequences.go
		for i := range nt.Cols {
			// a new table's attributes are its columns (sql/catalog/rowlayout.go)
			nt.Cols[i].Attnum, nt.Cols[i].Missing = 0, nil
		}
		nt.Parent, nt.Bound = parent.OID, bound
		if partspec != nil {
			if err := partitionSpec(&nt, partspec); err != nil {
				return "", err
			}
		}
		if err := s.checkNewBound(parent, nt.Name, bound, spec); err != nil {
			return "", err
		}
		nt.OID = s.Catalog.AllocOID()
		if !nt.Partitioned() {
			nt.RelFile = nt.OID
			if err := s.Store.CreateRelation(storage.RelID(nt.RelFile)); err != nil {
				return "", err
			}
		}
		if err := s.LockNow(ec, nt.OID, locks.AccessExclusiveLock); err != nil {
			return "", err
		}
		if err := s.checkDefaultPartition(ec, parent, bound); err != nil {
			return "", err
		}
		s.AddCatOp(&catalog.CatOp{Kind: "create", Table: &nt})
		for _, pix := range s.Cat().TableIndexes(parent) {
			if err := s.cloneIndexOnto(ec, pix, s.Cat().Tables[nt.OID]); err != nil {
				return "", err
			}
		}
		// the foreign keys referencing the parent get clones for it (foreignkeypart.go)
		if err := s.cloneReferencedKeys(ec, s.Cat().Tables[parent.OID], s.Cat().Tables[nt.OID]); err != nil {
			return "", err
		}
		return "CREATE TABLE", nil
	}
	return nil
}

// transformBound turns a FOR VALUES clause into a bound of parent's key
// types (transformPartitionBound).
func (s *Utility) transformBound(parent *catalog.TableDef, spec *pg.PartitionBoundSpec) (*catalog.PartBound, error) {
	invalid := func(what string) error {
		return expr.PosErr(pgerr.New(pgerr.InvalidTableDefinition, "invalid bound specification for a %s partition", what), spec.Location)
	}
	if spec.IsDefault {
		if parent.PartStrategy == catalog.PartHash {
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "a hash-partitioned table may not have a default partition")
		}
		return &catalog.PartBound{Default: true}, nil
	}
	b := &catalog.PartBound{}
	for _, k := range parent.PartKey {
		b.Types = append(b.Types, parent.Cols[k].TypeOID)
	}
	switch parent.PartStrategy {
	case catalog.PartHash:
		if spec.Strategy != catalog.PartHash {
			return nil, invalid("hash")
		}
		switch {
		case spec.Modulus <= 0:
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "modulus for hash partition must be an integer value greater than zero")
		case spec.Remainder < 0:
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "remainder for hash partition must be an integer value greater than or equal to zero")
		case spec.Remainder >= spec.Modulus:
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "remainder for hash partition must be less than modulus")
		}
		b.Modulus, b.Remainder = int(spec.Modulus), int(spec.Remainder)
	case catalog.PartList:
		if spec.Strategy != catalog.PartList {
			return nil, invalid("list")
		}
		typ := catalog.KeyType(parent, 0)
		seen := map[string]bool{}
		for _, n := range spec.Listdatums {
			v, err := s.boundValue(parent, 0, n, false)
			if err != nil {
				return nil, err
			}
			if !v.Null {
				d, _ := types.ParseText(typ, v.Text, nil)
				k := string(catalog.AppendKey(nil, []types.Type{typ}, []types.Datum{d}))
				if seen[k] {
					continue // PostgreSQL keeps one of duplicate values
				}
				seen[k] = true
			} else if slices.ContainsFunc(b.In, func(x catalog.BoundValue) bool { return x.Null }) {
				continue
			}
			b.In = append(b.In, v)
		}
	default:
		if spec.Strategy != catalog.PartRange {
			return nil, invalid("range")
		}
		n := len(parent.PartKey)
		if len(spec.Lowerdatums) != n {
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "FROM must specify exactly one value per partitioning column")
		}
		if len(spec.Upperdatums) != n {
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "TO must specify exactly one value per partitioning column")
		}
		for _, side := range []struct {
			nodes []*pg.Node
			dst   *[]catalog.BoundValue
		}{{spec.Lowerdatums, &b.From}, {spec.Upperdatums, &b.To}} {
			for i, n := range side.nodes {
				v, err := s.boundValue(parent, i, n, true)
				if err != nil {
					return nil, err
				}
				*side.dst = append(*side.dst, v)
			}
			// validateInfiniteBounds
			vals := *side.dst
			for i := 1; i < len(vals); i++ {
				prev := vals[i-1].Kind
				if prev != 0 && vals[i].Kind != prev {
					what := "MINVALUE"
					if prev == catalog.RangeMax {
						what = "MAXVALUE"
					}
					return nil, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "every bound following %s must also be %s", what, what), analyze.NodeLocation(side.nodes[i]))
				}
			}
		}
	}
	return b, nil
}

// boundValue evaluates one value of a bound as a constant of key column
// i's type (transformPartitionBoundValue).
func (s *Utility) boundValue(parent *catalog.TableDef, i int, n *pg.Node, isRange bool) (catalog.BoundValue, error) {
	loc := analyze.NodeLocation(n)
	if analyze.IsColumnRef(n) {
		if name, _, ok := analyze.BareColumnName(n); isRange && ok {
			switch name {
			case "minvalue":
				return catalog.BoundValue{Kind: catalog.RangeMin}, nil
			case "maxvalue":
				return catalog.BoundValue{Kind: catalog.RangeMax}, nil
			}
		}
		return catalog.BoundValue{}, expr.PosErr(pgerr.NotSupported("cannot use column reference in partition bound expression"), loc)
	}
	col := &parent.Cols[parent.PartKey[i]]
	typ := col.Type()
	var params []types.Type
	a := plan.NewAnalyzer(&s.Backend, &params)
	e, err := a.Expr(n)
	if err != nil {
		return catalog.BoundValue{}, err
	}
	if len(params) > 0 {
		return catalog.BoundValue{}, expr.PosErr(pgerr.NotSupported("cannot use a parameter in partition bound expression"), loc)
	}
	cannot := expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "specified value cannot be cast to type %s for column \"%s\"", types.FormatType(typ.OID, typ.Mod), col.Name), loc)
	switch {
	case analyze.IsUnknown(e):
		e, err = a.CoerceUnknown(e, typ)
	case analyze.Castable(e.Type(), typ) && (types.CategoryOf(e.Type()) != types.CatString || types.CategoryOf(typ) == types.CatString):
		e, err = a.CastTo(e, typ, false)
	default:
		return catalog.BoundValue{}, cannot
	}
	if err != nil {
		return catalog.BoundValue{}, expr.PosErr(pgerr.From(err), loc)
	}
	d, err := e.Eval(&a.Fold, nil)
	if err != nil {
		return catalog.BoundValue{}, expr.PosErr(pgerr.From(err), loc)
	}
	if d.Null {
		if isRange {
			return catalog.BoundValue{}, pgerr.New(pgerr.InvalidObjectDefinition, "cannot specify NULL in range bound")
		}
		return catalog.BoundValue{Null: true}, nil
	}
	if typ.OID == types.OIDBpchar || typ.OID == types.OIDVarchar {
		if d, err = types.CoerceString(typ, d.S, false); err != nil {
			return catalog.BoundValue{}, expr.PosErr(pgerr.From(err), loc)
		}
	}
	return catalog.BoundValue{Text: string(types.AppendText(nil, typ, d, nil))}, nil
}

// checkNewBound refuses a bound that is empty or overlaps an existing
// partition of parent (check_new_partition_bound).
func (s *Utility) checkNewBound(parent *catalog.TableDef, name string, b *catalog.PartBound, spec *pg.PartitionBoundSpec) error {
	cat := s.Cat()
	d := cat.PartDesc(parent.OID)
	partName := func(i int) string { return cat.Tables[d.Parts[i]].Name }
	overlap := func(i int, loc int32) error {
		return expr.PosErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" would overlap partition \"%s\"", name, partName(i)), loc)
	}
	if b.Default {
		if d.Def >= 0 {
			return expr.PosErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" conflicts with existing default partition \"%s\"", name, partName(d.Def)), spec.Location)
		}
		return nil
	}
	switch parent.PartStrategy {
	case catalog.PartRange:
		lo, hi := d.ParseRange(b.From), d.ParseRange(b.To)
		if d.CmpBounds(lo, true, hi, false) >= 0 {
			return expr.PosErr(pgerr.New(pgerr.InvalidObjectDefinition, "empty range bound specified for partition \"%s\"", name), analyze.NodeLocation(spec.Lowerdatums[0])).
				WithDetail("Specified lower bound " + catalog.RangeBoundString(b, b.From) + " is greater than or equal to upper bound " + catalog.RangeBoundString(b, b.To) + ".")
		}
		for i := range d.Lo {
			if d.CmpBounds(lo, true, d.Hi[i], false) < 0 && d.CmpBounds(d.Lo[i], true, hi, false) < 0 {
				loc := analyze.NodeLocation(spec.Lowerdatums[0])
				if d.CmpBounds(lo, true, d.Lo[i], true) < 0 { // the new range reaches into it from below
					loc = analyze.NodeLocation(spec.Upperdatums[0])
				}
				return overlap(i, loc)
			}
		}
	case catalog.PartList:
		for j, v := range b.In {
			loc := analyze.NodeLocation(spec.Listdatums[min(j, len(spec.Listdatums)-1)])
			if v.Null {
				if d.NullPart >= 0 {
					return overlap(d.NullPart, loc)
				}
				continue
			}
			if p := d.ListLookup(d.ParseValue(0, v.Text)); p >= 0 {
				return overlap(p, loc)
			}
		}
	case catalog.PartHash:
		m, r := b.Modulus, b.Remainder
		n := len(d.Mods)
		if n > 0 {
			factor := func(i int, divisible bool) error {
				det := fmt.Sprintf("The new modulus %d is not a factor of %d, the modulus of existing partition \"%s\".", m, d.Mods[i], partName(i))
				if divisible {
					det = fmt.Sprintf("The new modulus %d is not divisible by %d, the modulus of existing partition \"%s\".", m, d.Mods[i], partName(i))
				}
				return pgerr.New(pgerr.InvalidObjectDefinition, "every hash partition modulus must be a factor of the next larger modulus").WithDetail(det)
			}
			// the greatest (modulus, remainder) <= the new one
			off := sort.Search(n, func(i int) bool { return d.Mods[i] > m || d.Mods[i] == m && d.Rems[i] > r }) - 1
			if off < 0 {
				if d.Mods[0]%m != 0 {
					return factor(0, false)
				}
			} else {
				if m%d.Mods[off] != 0 {
					return factor(off, true)
				}
				if off+1 < n && d.Mods[off+1]%m != 0 {
					return factor(off+1, false)
				}
			}
			for i := range d.Mods {
				mi, ri := d.Mods[i], d.Rems[i]
				if mi <= m && r%mi == ri || mi > m && ri%m == r {
					return expr.PosErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" would overlap partition \"%s\"", name, partName(i)), spec.Location)
				}
			}
		}
	}
	return nil
}

// boundContains reports whether a row whose key under parent's
// descriptor d is key satisfies bound b.
func boundContains(d *catalog.PartDesc, b *catalog.PartBound, key []types.Datum) bool {
	switch {
	case b.Default:
		p := d.Route(key)
		return p < 0 || p == d.Def
	case d.Strategy == catalog.PartHash:
		return catalog.PartitionHash(d.Types, key)%uint64(b.Modulus) == uint64(b.Remainder)
	case d.Strategy == catalog.PartList:
		for _, v := range b.In {
			if v.Null {
				if key[0].Null {
					return true
				}
				continue
			}
			if !key[0].Null {
				if c, _ := d.Cmps[0](d.ParseValue(0, v.Text), key[0]); c == 0 {
					return true
				}
			}
		}
		return false
	}
	for _, k := range key {
		if k.Null {
			return false
		}
	}
	return d.CmpBoundKey(d.ParseRange(b.From), key) <= 0 && d.CmpBoundKey(d.ParseRange(b.To), key) > 0
}

// checkDefaultPartition: a new partition of parent may not take rows the
// DEFAULT partition already holds. PostgreSQL locks the default partition
// AccessExclusiveLock and scans it.
func (s *Utility) checkDefaultPartition(ec *expr.EvalCtx, parent *catalog.TableDef, b *catalog.PartBound) error {
	d := s.Cat().PartDesc(parent.OID)
	if b.Default || d.Def < 0 {
		return nil
	}
	def := s.Cat().Tables[d.Parts[d.Def]]
	if err := s.LockNow(ec, def.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	var key []types.Datum
	return s.ScanRows(ec, def, func(row []types.Datum) error {
		key = catalog.PartitionKey(d, row, key)
		if boundContains(d, b, key) {
			return pgerr.New(pgerr.CheckViolation, "updated partition constraint for default partition \"%s\" would be violated by some row", def.Name)
		}
		return nil
	})
}
