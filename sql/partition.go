package sql

import (
	"fmt"
	"slices"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
)

// Partitioned tables as PostgreSQL 15 has them: the DDL that makes and
// changes them, with PostgreSQL's checks, messages and relation locks.
// Routing and scans are in partroute.go and partscan.go; bounds,
// descriptors and their deparsing in partbound.go.
//
// lockd keeps a partition's columns at the same positions as its
// parent's (a partition inherits the parent's columns and may not declare
// its own), so a row of the parent is a row of every partition.

// applySet replaces a table's or an index's definition ("settable",
// "setindex" catalog operations).
func (c *catalogState) applySet(op *catOp) {
	if op.table != nil {
		t := *op.table
		c.Tables[t.OID] = &t
	}
	if op.index != nil {
		ix := *op.index
		c.Indexes[ix.OID] = &ix
	}
}

// partitionChildren lists t's partitions in bound order.
func (c *catalogState) partitionChildren(t *TableDef) []*TableDef {
	d := c.partDesc(t.OID)
	if d == nil {
		return nil
	}
	out := make([]*TableDef, 0, len(d.parts))
	for _, oid := range d.parts {
		if k := c.Tables[oid]; k != nil {
			out = append(out, k)
		}
	}
	return out
}

// defaultPartition is t's DEFAULT partition (pg_partitioned_table.partdefid),
// or 0.
func (c *catalogState) defaultPartition(t *TableDef) uint32 {
	if d := c.partDesc(t.OID); d != nil && d.def >= 0 {
		return d.parts[d.def]
	}
	return 0
}

// leafPartitions lists the tables with storage under t (t itself if it
// is not partitioned), depth first in bound order.
func (c *catalogState) leafPartitions(t *TableDef) []*TableDef {
	if !t.Partitioned() {
		return []*TableDef{t}
	}
	var out []*TableDef
	for _, k := range c.partitionChildren(t) {
		out = append(out, c.leafPartitions(k)...)
	}
	return out
}

// inheritors is find_all_inheritors without t: every descendant, level by
// level, each level in OID order (the order LOCK TABLE and TRUNCATE lock
// them in).
func (c *catalogState) inheritors(t *TableDef) []*TableDef {
	var out []*TableDef
	queue := []uint32{t.OID}
	for len(queue) > 0 {
		oid := queue[0]
		queue = queue[1:]
		var kids []*TableDef
		for _, k := range c.Tables {
			if k.Parent == oid {
				kids = append(kids, k)
			}
		}
		sort.Slice(kids, func(i, j int) bool { return kids[i].OID < kids[j].OID })
		for _, k := range kids {
			out = append(out, k)
			queue = append(queue, k.OID)
		}
	}
	return out
}

// ancestorOf reports whether a is t or one of t's ancestors.
func (c *catalogState) ancestorOf(a, t *TableDef) bool {
	for t != nil {
		if t.OID == a.OID {
			return true
		}
		t = c.Tables[t.Parent]
	}
	return false
}

// relationLocks is the lock set a statement takes on its target or FROM
// relation at every execution before it runs: for an ordinary table the
// table and its indexes (tableLocks); for a partitioned table only the
// table, since PostgreSQL's planner opens no index of a partitioned table
// (the partitions and their indexes are locked when the statement runs,
// after pruning — see partitionedSource).
func relationLocks(cat *catalogState, t *TableDef, mode locks.LockMode) []relLock {
	if t.Partitioned() {
		return []relLock{{oid: t.OID, mode: mode}}
	}
	return tableLocks(cat, t, mode)
}

// partitionSpec makes t partitioned by spec (PARTITION BY).
func partitionSpec(t *TableDef, spec *pg.PartitionSpec) error {
	strategy := ""
	switch spec.Strategy {
	case pg.PartitionStrategy_PARTITION_STRATEGY_RANGE:
		strategy = partRange
	case pg.PartitionStrategy_PARTITION_STRATEGY_LIST:
		strategy = partList
	case pg.PartitionStrategy_PARTITION_STRATEGY_HASH:
		strategy = partHash
	default:
		return pgerr.NotSupported("this partitioning strategy is not supported")
	}
	if strategy == partList && len(spec.PartParams) > 1 {
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
			return posErr(pgerr.NotSupported("partition keys on expressions are not supported"), el.Location)
		case len(el.Collation) > 0 || len(el.Opclass) > 0:
			return posErr(pgerr.NotSupported("a collation or operator class for a partition key is not supported"), el.Location)
		}
		i := t.colIndex(el.Name)
		if i < 0 {
			return posErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" named in partition key does not exist", el.Name), el.Location)
		}
		typ := t.Cols[i].Type()
		ok := hashableKeyType(typ)
		if strategy != partHash {
			switch categoryOf(typ) {
			case catBool, catInt, catNumeric, catFloat, catString, catDatetime:
				ok = true
			}
		}
		if !ok {
			return posErr(pgerr.NotSupported("%s partitioning on a column of type %s is not supported", strategyName(strategy), typ.Name), el.Location)
		}
		key = append(key, i)
	}
	t.RelKind, t.PartStrategy, t.PartKey = "p", strategy, key
	return nil
}

func strategyName(s string) string {
	switch s {
	case partRange:
		return "range"
	case partList:
		return "list"
	}
	return "hash"
}

// compileCreatePartition compiles CREATE TABLE name PARTITION OF parent
// bound [PARTITION BY ...]; t carries what compileCreateTable already
// parsed (name, UNLOGGED, fillfactor).
func (s *utility) compileCreatePartition(cs *pg.CreateStmt, t *TableDef, st *Stmt) error {
	parentRV := cs.InhRelations[0].GetRangeVar()
	spec, partspec := cs.Partbound, cs.Partspec
	ifNotExists := cs.IfNotExists
	st.Tag = "CREATE TABLE"
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		if _, exists := s.cat().byName[t.Name]; exists && ifNotExists {
			s.notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", t.Name))
			return "CREATE TABLE", nil
		}
		parent, err := s.lockTable(ec, parentRV, locks.AccessExclusiveLock)
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
		if _, exists := s.cat().byName[t.Name]; exists {
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", t.Name)
		}
		nt := *t
		nt.Cols = make([]ColumnDef, len(parent.Cols))
		copy(nt.Cols, parent.Cols)
		stripIdentity(nt.Cols) // seqcols.go
		for i := range nt.Cols {
			// a new table's attributes are its columns (rowlayout.go)
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
		nt.OID = s.catalog.allocOID()
		if !nt.Partitioned() {
			nt.RelFile = nt.OID
			if err := s.store.CreateRelation(storage.RelID(nt.RelFile)); err != nil {
				return "", err
			}
		}
		if err := s.lockNow(ec, nt.OID, locks.AccessExclusiveLock); err != nil {
			return "", err
		}
		if err := s.checkDefaultPartition(ec, parent, bound); err != nil {
			return "", err
		}
		s.addCatOp(&catOp{kind: "create", table: &nt})
		for _, pix := range s.cat().tableIndexes(parent) {
			if err := s.cloneIndexOnto(ec, pix, s.cat().Tables[nt.OID]); err != nil {
				return "", err
			}
		}
		// the foreign keys referencing the parent get clones for it (fkpart.go)
		if err := s.cloneReferencedKeys(ec, s.cat().Tables[parent.OID], s.cat().Tables[nt.OID]); err != nil {
			return "", err
		}
		return "CREATE TABLE", nil
	}
	return nil
}

// lockTable resolves rv, locks it and resolves it again (the definition
// may have changed while the lock was waited for).
func (s *Backend) lockTable(ec *evalCtx, rv *pg.RangeVar, mode locks.LockMode) (*TableDef, error) {
	t, err := s.resolveTable(rv)
	if err != nil {
		return nil, err
	}
	if err := s.lockNow(ec, t.OID, mode); err != nil {
		return nil, err
	}
	return s.resolveTable(rv)
}

// transformBound turns a FOR VALUES clause into a bound of parent's key
// types (transformPartitionBound).
func (s *utility) transformBound(parent *TableDef, spec *pg.PartitionBoundSpec) (*PartBound, error) {
	invalid := func(what string) error {
		return posErr(pgerr.New(pgerr.InvalidTableDefinition, "invalid bound specification for a %s partition", what), spec.Location)
	}
	if spec.IsDefault {
		if parent.PartStrategy == partHash {
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "a hash-partitioned table may not have a default partition")
		}
		return &PartBound{Default: true}, nil
	}
	b := &PartBound{}
	for _, k := range parent.PartKey {
		b.Types = append(b.Types, parent.Cols[k].TypeOID)
	}
	switch parent.PartStrategy {
	case partHash:
		if spec.Strategy != partHash {
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
	case partList:
		if spec.Strategy != partList {
			return nil, invalid("list")
		}
		typ := keyType(parent, 0)
		seen := map[string]bool{}
		for _, n := range spec.Listdatums {
			v, err := s.boundValue(parent, 0, n, false)
			if err != nil {
				return nil, err
			}
			if !v.Null {
				d, _ := parseText(typ, v.Text, nil)
				k := string(appendKey(nil, []Type{typ}, []Datum{d}))
				if seen[k] {
					continue // PostgreSQL keeps one of duplicate values
				}
				seen[k] = true
			} else if slices.ContainsFunc(b.In, func(x BoundValue) bool { return x.Null }) {
				continue
			}
			b.In = append(b.In, v)
		}
	default:
		if spec.Strategy != partRange {
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
			dst   *[]BoundValue
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
					if prev == rangeMax {
						what = "MAXVALUE"
					}
					return nil, posErr(pgerr.New(pgerr.DatatypeMismatch, "every bound following %s must also be %s", what, what), nodeLocation(side.nodes[i]))
				}
			}
		}
	}
	return b, nil
}

func nodeLocation(n *pg.Node) int32 {
	switch {
	case n.GetAConst() != nil:
		return n.GetAConst().Location
	case n.GetColumnRef() != nil:
		return n.GetColumnRef().Location
	case n.GetTypeCast() != nil:
		return n.GetTypeCast().Location
	case n.GetAExpr() != nil:
		return n.GetAExpr().Location
	case n.GetFuncCall() != nil:
		return n.GetFuncCall().Location
	}
	return -1
}

// boundValue evaluates one value of a bound as a constant of key column
// i's type (transformPartitionBoundValue).
func (s *utility) boundValue(parent *TableDef, i int, n *pg.Node, isRange bool) (BoundValue, error) {
	loc := nodeLocation(n)
	if cr := n.GetColumnRef(); cr != nil {
		if isRange && len(cr.Fields) == 1 {
			switch nodeName(cr.Fields[0]) {
			case "minvalue":
				return BoundValue{Kind: rangeMin}, nil
			case "maxvalue":
				return BoundValue{Kind: rangeMax}, nil
			}
		}
		return BoundValue{}, posErr(pgerr.NotSupported("cannot use column reference in partition bound expression"), loc)
	}
	col := &parent.Cols[parent.PartKey[i]]
	typ := col.Type()
	var params []Type
	a := newAnalyzer(&s.Backend, &params)
	e, err := a.expr(n)
	if err != nil {
		return BoundValue{}, err
	}
	if len(params) > 0 {
		return BoundValue{}, posErr(pgerr.NotSupported("cannot use a parameter in partition bound expression"), loc)
	}
	cannot := posErr(pgerr.New(pgerr.DatatypeMismatch, "specified value cannot be cast to type %s for column \"%s\"", formatType(typ.OID, typ.Mod), col.Name), loc)
	switch {
	case isUnknown(e):
		e, err = a.coerceUnknown(e, typ)
	case castable(e.typ(), typ) && (categoryOf(e.typ()) != catString || categoryOf(typ) == catString):
		e, err = a.castTo(e, typ, false)
	default:
		return BoundValue{}, cannot
	}
	if err != nil {
		return BoundValue{}, posErr(pgerr.From(err), loc)
	}
	d, err := e.eval(&a.fold, nil)
	if err != nil {
		return BoundValue{}, posErr(pgerr.From(err), loc)
	}
	if d.Null {
		if isRange {
			return BoundValue{}, pgerr.New(pgerr.InvalidObjectDefinition, "cannot specify NULL in range bound")
		}
		return BoundValue{Null: true}, nil
	}
	if typ.OID == OIDBpchar || typ.OID == OIDVarchar {
		if d, err = coerceString(typ, d.S, false); err != nil {
			return BoundValue{}, posErr(pgerr.From(err), loc)
		}
	}
	return BoundValue{Text: string(appendText(nil, typ, d, nil))}, nil
}

// checkNewBound refuses a bound that is empty or overlaps an existing
// partition of parent (check_new_partition_bound).
func (s *utility) checkNewBound(parent *TableDef, name string, b *PartBound, spec *pg.PartitionBoundSpec) error {
	cat := s.cat()
	d := cat.partDesc(parent.OID)
	partName := func(i int) string { return cat.Tables[d.parts[i]].Name }
	overlap := func(i int, loc int32) error {
		return posErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" would overlap partition \"%s\"", name, partName(i)), loc)
	}
	if b.Default {
		if d.def >= 0 {
			return posErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" conflicts with existing default partition \"%s\"", name, partName(d.def)), spec.Location)
		}
		return nil
	}
	switch parent.PartStrategy {
	case partRange:
		lo, hi := d.parseRange(b.From), d.parseRange(b.To)
		if d.cmpBounds(lo, true, hi, false) >= 0 {
			return posErr(pgerr.New(pgerr.InvalidObjectDefinition, "empty range bound specified for partition \"%s\"", name), nodeLocation(spec.Lowerdatums[0])).
				WithDetail("Specified lower bound " + rangeBoundString(b, b.From) + " is greater than or equal to upper bound " + rangeBoundString(b, b.To) + ".")
		}
		for i := range d.lo {
			if d.cmpBounds(lo, true, d.hi[i], false) < 0 && d.cmpBounds(d.lo[i], true, hi, false) < 0 {
				loc := nodeLocation(spec.Lowerdatums[0])
				if d.cmpBounds(lo, true, d.lo[i], true) < 0 { // the new range reaches into it from below
					loc = nodeLocation(spec.Upperdatums[0])
				}
				return overlap(i, loc)
			}
		}
	case partList:
		for j, v := range b.In {
			loc := nodeLocation(spec.Listdatums[min(j, len(spec.Listdatums)-1)])
			if v.Null {
				if d.nullPart >= 0 {
					return overlap(d.nullPart, loc)
				}
				continue
			}
			if p := d.listLookup(d.parseValue(0, v.Text)); p >= 0 {
				return overlap(p, loc)
			}
		}
	case partHash:
		m, r := b.Modulus, b.Remainder
		n := len(d.mods)
		if n > 0 {
			factor := func(i int, divisible bool) error {
				det := fmt.Sprintf("The new modulus %d is not a factor of %d, the modulus of existing partition \"%s\".", m, d.mods[i], partName(i))
				if divisible {
					det = fmt.Sprintf("The new modulus %d is not divisible by %d, the modulus of existing partition \"%s\".", m, d.mods[i], partName(i))
				}
				return pgerr.New(pgerr.InvalidObjectDefinition, "every hash partition modulus must be a factor of the next larger modulus").WithDetail(det)
			}
			// the greatest (modulus, remainder) <= the new one
			off := sort.Search(n, func(i int) bool { return d.mods[i] > m || d.mods[i] == m && d.rems[i] > r }) - 1
			if off < 0 {
				if d.mods[0]%m != 0 {
					return factor(0, false)
				}
			} else {
				if m%d.mods[off] != 0 {
					return factor(off, true)
				}
				if off+1 < n && d.mods[off+1]%m != 0 {
					return factor(off+1, false)
				}
			}
			for i := range d.mods {
				mi, ri := d.mods[i], d.rems[i]
				if mi <= m && r%mi == ri || mi > m && ri%m == r {
					return posErr(pgerr.New(pgerr.InvalidObjectDefinition, "partition \"%s\" would overlap partition \"%s\"", name, partName(i)), spec.Location)
				}
			}
		}
	}
	return nil
}

// boundContains reports whether a row whose key under parent's
// descriptor d is key satisfies bound b.
func boundContains(d *partDesc, b *PartBound, key []Datum) bool {
	switch {
	case b.Default:
		p := d.route(key)
		return p < 0 || p == d.def
	case d.strategy == partHash:
		return partitionHash(d.types, key)%uint64(b.Modulus) == uint64(b.Remainder)
	case d.strategy == partList:
		for _, v := range b.In {
			if v.Null {
				if key[0].Null {
					return true
				}
				continue
			}
			if !key[0].Null {
				if c, _ := d.cmps[0](d.parseValue(0, v.Text), key[0]); c == 0 {
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
	return d.cmpBoundKey(d.parseRange(b.From), key) <= 0 && d.cmpBoundKey(d.parseRange(b.To), key) > 0
}

func partitionKey(d *partDesc, row []Datum, buf []Datum) []Datum {
	buf = buf[:0]
	for _, k := range d.key {
		buf = append(buf, row[k])
	}
	return buf
}

// scanRows calls fn for every visible row of t (of its leaf partitions
// if it is partitioned).
func (s *Executor) scanRows(ec *evalCtx, t *TableDef, fn func(row []Datum) error) error {
	for _, leaf := range s.cat().leafPartitions(t) {
		if err := s.scanTable(ec, newTableSource(leaf, leaf.Name), fn); err != nil {
			return err
		}
	}
	return nil
}

// checkDefaultPartition: a new partition of parent may not take rows the
// DEFAULT partition already holds. PostgreSQL locks the default partition
// AccessExclusiveLock and scans it.
func (s *utility) checkDefaultPartition(ec *evalCtx, parent *TableDef, b *PartBound) error {
	d := s.cat().partDesc(parent.OID)
	if b.Default || d.def < 0 {
		return nil
	}
	def := s.cat().Tables[d.parts[d.def]]
	if err := s.lockNow(ec, def.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	var key []Datum
	return s.scanRows(ec, def, func(row []Datum) error {
		key = partitionKey(d, row, key)
		if boundContains(d, b, key) {
			return pgerr.New(pgerr.CheckViolation, "updated partition constraint for default partition \"%s\" would be violated by some row", def.Name)
		}
		return nil
	})
}
