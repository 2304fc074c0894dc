package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
)

// Scans of partitioned tables, with partition pruning and PostgreSQL's
// locks.
//
// A partitionedSource is the rowSource of a partitioned table in FROM (and
// the target of UPDATE and DELETE). At plan time the statement locks only
// the partitioned table itself (relationLocks). At every execution, before
// reading anything, the source prunes the partitions the WHERE clause
// excludes — with the values of the execution's parameters — and locks
// each partition that survives, then that partition's indexes, in
// partition bound order and depth first through sub-partitioned
// partitions, in the statement's mode (AccessShareLock to read,
// RowExclusiveLock to write). That is the order and the set PostgreSQL's
// planner locks with plan-time pruning (expand_partitioned_rtentry, then
// get_relation_info for each partition); pruned partitions are not
// locked, and the planner opens no index of a partitioned table. lockd
// plans a statement once and prunes at each execution with its bound
// parameter values, which corresponds to PostgreSQL's plan-time pruning of
// a custom plan. An execution PostgreSQL would run with a generic plan
// (plancache.go) locks what that plan holds instead: every partition
// pruning on constants keeps, and when the plan is cached and reused only
// the index each partition that pruning on the parameters keeps is
// scanned by. Each partition is read with its own tableSource, so an
// equality on a unique index of the partitions is an index lookup in each
// surviving partition.
//
// Pruning follows PostgreSQL's rules (partprune.c): comparisons =, <, <=,
// >, >= and BETWEEN of a partition key column with a constant or parameter
// (ANDed comparisons of one column are combined into one range), IN lists,
// IS NULL, and AND/OR of those. Range partitions prune on ranges of the
// first key column and, for multi-column keys, on equality of every key
// column; list partitions on equality and ranges; hash partitions on
// equality (or IS NULL) of every key column. The DEFAULT partition is
// kept when the pruned range reaches a value no other partition holds.

// partitionedSource reads a partitioned table. It belongs to one
// session's plan; open and scan run at execution.
type partitionedSource struct {
	root  uint32 // the partitioned table named
	alias string
	cols  []Column
	mode  locks.LockMode
	where expr
	only  bool // FROM ONLY t: the partitioned table alone, which holds no rows

	gen  uint64    // catalog generation tree was built for
	tree *partNode // the partition tree with per-partition plans

	leafBuf []*partNode // reused by open
	sub     modifyPlan  // reused by execModifyPartitioned
	pu      partUpdate
}

// partNode is one table of the partition tree.
type partNode struct {
	t     *TableDef
	desc  *partDesc   // partitioned tables only
	kids  []*partNode // aligned with desc.parts
	prune pruneStep   // pruning of kids, compiled against desc
	ts    *tableSource
	idx   []*IndexDef
}

// newPartitionedSource is the rowSource of partitioned table t read (or
// written) in mode.
func newPartitionedSource(t *TableDef, alias string, mode locks.LockMode) *partitionedSource {
	ps := &partitionedSource{root: t.OID, alias: alias, mode: mode}
	for i := range t.Cols {
		ps.cols = append(ps.cols, Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type(), TableOID: t.OID, Attnum: t.attnum(i)})
	}
	// the partitions' rows carry their ctid and tableoid
	ps.cols = append(ps.cols,
		Column{Name: "ctid", Type: TypeTid, TableOID: t.OID, Attnum: -1},
		Column{Name: "tableoid", Type: TypeOid, TableOID: t.OID, Attnum: -6})
	return ps
}

func (ps *partitionedSource) name() string      { return ps.alias }
func (ps *partitionedSource) columns() []Column { return ps.cols }

// filter gives the source the statement's WHERE clause, which prunes
// partitions and picks index lookups within them. where must be over this
// source's columns alone (colExpr.i is a position in columns()); a planner
// with several relations passes the conjuncts that read only this one.
func (ps *partitionedSource) filter(cat *catalogState, where expr) {
	ps.where = where
	ps.build(cat)
}

// relLocks are the locks the statement takes before it runs: the
// partitioned table only.
func (ps *partitionedSource) relLocks() []relLock { return []relLock{{oid: ps.root, mode: ps.mode}} }

func (ps *partitionedSource) build(cat *catalogState) {
	ps.gen = cat.gen
	ps.tree = ps.node(cat, cat.Tables[ps.root])
}

func (ps *partitionedSource) node(cat *catalogState, t *TableDef) *partNode {
	if t == nil {
		return nil
	}
	n := &partNode{t: t}
	if !t.Partitioned() {
		n.ts = newTableSource(t, ps.alias)
		n.ts.useIndex(cat, ps.where)
		n.idx = cat.tableIndexes(t)
		return n
	}
	n.desc = cat.partDesc(t.OID)
	n.prune = compilePrune(n.desc, ps.where)
	for _, oid := range n.desc.parts {
		n.kids = append(n.kids, ps.node(cat, cat.Tables[oid]))
	}
	return n
}

// open prunes and locks the partitions for one execution and returns the
// leaf partitions to read, in order.
func (x *Executor) openPartitions(ec *evalCtx, ps *partitionedSource) ([]*partNode, error) {
	if ps.only {
		return nil, nil
	}
	s := x
	if cat := s.cat(); ps.tree == nil || ps.gen != cat.gen {
		ps.build(cat)
	}
	leaves := ps.leafBuf[:0]
	defer func() { ps.leafBuf = leaves }()
	if err := x.openPartitionNode(ec, ps, ps.tree, &leaves, true); err != nil {
		return nil, err
	}
	if ps.gen != s.cat().gen {
		// a partition changed (TRUNCATE, CREATE INDEX) while its lock was
		// waited for: plan the partitions again; the locks are held now
		ps.build(s.cat())
		leaves = leaves[:0]
		if err := x.openPartitionNode(ec, ps, ps.tree, &leaves, true); err != nil {
			return nil, err
		}
	}
	return leaves, nil
}

// openNode locks n's partitions and collects the leaves to read. scan is
// false under a partition that run-time pruning removed but a generic
// plan still locks.
func (x *Executor) openPartitionNode(ec *evalCtx, ps *partitionedSource, n *partNode, leaves *[]*partNode, scan bool) error {
	if n == nil {
		return nil
	}
	if n.desc == nil {
		if scan {
			*leaves = append(*leaves, n)
		}
		return nil
	}
	// planKeep is what the plan holds, runKeep what this execution reads:
	// the same for a custom plan, which prunes on the parameter values
	// when it is planned; a generic plan prunes only on constants when it
	// is planned and on parameters when the executor starts (PostgreSQL's
	// initial pruning), after every planned partition is locked
	var planKeep, runKeep []bool
	if n.prune != nil {
		var err error
		if upTo := ec.plan.pruneUpTo(); n.prune.deps() <= upTo {
			if runKeep, err = n.prune.eval(ec, n.desc); err != nil {
				return err
			}
			planKeep = runKeep
		} else {
			ec.pruneUpTo = upTo
			planKeep, err = n.prune.eval(ec, n.desc)
			ec.pruneUpTo = 0
			if err != nil {
				return err
			}
			planKeep = append([]bool(nil), planKeep...) // eval reuses its buffer
			if runKeep, err = n.prune.eval(ec, n.desc); err != nil {
				return err
			}
			if !sameKeep(planKeep, runKeep) {
				ec.runtimePruned = true
			}
		}
	}
	s := x
	for i, kid := range n.kids {
		if kid == nil || planKeep != nil && !planKeep[i] {
			continue
		}
		run := scan && (runKeep == nil || runKeep[i])
		if err := s.lockNow(ec, kid.t.OID, ps.mode); err != nil {
			return err
		}
		switch {
		case ec.plan != genericReuse || ps.mode != locks.AccessShareLock:
			// the planner opens every index of a partition it plans
			// (get_relation_info), and the executor every index of a
			// partition it writes (ExecOpenIndices)
			for _, ix := range kid.idx {
				if err := s.lockNow(ec, ix.OID, ps.mode); err != nil {
					return err
				}
			}
		case run && kid.ts != nil && kid.ts.index != nil:
			// a cached generic plan that reads: the executor opens only
			// the index a surviving partition is scanned by
			if err := s.lockNow(ec, kid.ts.index.OID, ps.mode); err != nil {
				return err
			}
		}
		if err := x.openPartitionNode(ec, ps, kid, leaves, run); err != nil {
			return err
		}
	}
	return nil
}

// sameKeep reports whether two keep sets (nil = all) are equal.
func sameKeep(a, b []bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil || a == nil && !hasFalse(b) || b == nil && !hasFalse(a)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasFalse(k []bool) bool {
	for _, v := range k {
		if !v {
			return true
		}
	}
	return false
}

// scan calls fn for every visible row of every partition not pruned.
func (x *Executor) scanPartitioned(ec *evalCtx, ps *partitionedSource, fn func(row []Datum) error) error {
	leaves, err := x.openPartitions(ec, ps)
	if err != nil {
		return err
	}
	for _, lf := range leaves {
		if err := x.scanTable(ec, lf.ts, fn); err != nil {
			return err
		}
	}
	return nil
}

// execModifyPartitioned runs an UPDATE or DELETE of a partitioned table:
// each partition not pruned is modified as a table of its own, and rows
// whose partition key an UPDATE changes move to their new partition.
func (s *Executor) execModifyPartitioned(ec *evalCtx, p *modifyPlan, emit func([]Datum) error) (int64, error) {
	leaves, err := s.openPartitions(ec, p.parts)
	if err != nil {
		return 0, err
	}
	var pu *partUpdate
	if !p.delete {
		pu = &p.parts.pu
		*pu = partUpdate{root: p.t.OID, router: pu.router}
		defer s.finishPartUpdate(pu)
	}
	var n int64
	sub := &p.parts.sub
	for _, lf := range leaves {
		*sub = modifyPlan{t: lf.t, src: lf.ts, where: p.where, set: p.set, indexes: lf.idx, delete: p.delete, part: pu, ret: p.ret}
		k, err := s.execModify(ec, sub, emit)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// --- pruning

// pruneStep decides which partitions of one partitioned table a WHERE
// clause can reach. eval returns nil for "all".
type pruneStep interface {
	eval(ec *evalCtx, d *partDesc) ([]bool, error)
	deps() valueDep // the most any of its values depends on
}

// keyCond is a comparison of key column col (its position in the key)
// with a value computed at execution.
type keyCond struct {
	col int
	op  string   // "=", "<", "<=", ">", ">=", "isnull"
	val expr     // nil for isnull
	dep valueDep // what val reads: when PostgreSQL can prune on it
}

// pruneAnd intersects the range its conditions leave per key column with
// the results of its sub-steps.
type pruneAnd struct {
	conds []keyCond
	subs  []pruneStep

	ranges []colRange // scratch, reused at each execution
	used   []bool
	keep   []bool
}

type pruneOr struct{ subs []pruneStep }

// pruneIn is key IN (values).
type pruneIn struct {
	col  int
	vals []expr
	dep  valueDep // the most any value depends on
}

// compilePrune turns where into a prune step for d's key; nil means no
// pruning.
func compilePrune(d *partDesc, where expr) pruneStep {
	if where == nil || d == nil {
		return nil
	}
	return pruneOf(d, where)
}

func pruneOf(d *partDesc, e expr) pruneStep {
	switch x := e.(type) {
	case *boolExpr:
		switch x.op {
		case boolAnd:
			and := &pruneAnd{}
			for _, a := range x.args {
				if c, ok := keyCondOf(d, a); ok {
					and.conds = append(and.conds, c)
				} else if st := pruneOf(d, a); st != nil {
					and.subs = append(and.subs, st)
				}
			}
			if len(and.conds) == 0 && len(and.subs) == 0 {
				return nil
			}
			return and
		case pg.BoolExprType_OR_EXPR:
			or := &pruneOr{}
			for _, a := range x.args {
				st := pruneOf(d, a)
				if st == nil {
					return nil
				}
				or.subs = append(or.subs, st)
			}
			return or
		}
	case *inExpr:
		if x.not {
			return nil
		}
		col := keyColumnOf(d, x.arg)
		if col < 0 {
			return nil
		}
		for _, v := range x.list {
			if !isRowFree(v) {
				return nil
			}
		}
		in := &pruneIn{col: col, vals: x.list, dep: depConst}
		for _, v := range x.list {
			in.dep = max(in.dep, valueDepOf(v))
		}
		return in
	}
	if c, ok := keyCondOf(d, e); ok {
		return &pruneAnd{conds: []keyCond{c}}
	}
	return nil
}

var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// keyCondOf recognises key op value, value op key and key IS NULL.
func keyCondOf(d *partDesc, e expr) (keyCond, bool) {
	switch x := e.(type) {
	case *binopExpr:
		if _, ok := flipped[x.op]; !ok {
			return keyCond{}, false
		}
		if col := keyColumnOf(d, x.l); col >= 0 && isRowFree(x.r) {
			return keyCond{col: col, op: x.op, val: x.r, dep: valueDepOf(x.r)}, true
		}
		if col := keyColumnOf(d, x.r); col >= 0 && isRowFree(x.l) {
			return keyCond{col: col, op: flipped[x.op], val: x.l, dep: valueDepOf(x.l)}, true
		}
	case *nullTestExpr:
		if col := keyColumnOf(d, x.arg); col >= 0 && x.isNull {
			return keyCond{col: col, op: "isnull"}, true
		}
	}
	return keyCond{}, false
}

// keyColumnOf returns the key position of the column e reads, or -1. A
// column compared as a wider integer, or a varchar compared as text,
// still prunes (the operators are in the key's operator family, as in
// PostgreSQL); other casts of the column do not.
func keyColumnOf(d *partDesc, e expr) int {
	if c, ok := e.(*castExpr); ok {
		if c.explicit { // an expression on the key, not the key
			return -1
		}
		from, to := c.arg.typ(), c.t
		switch {
		case categoryOf(from) == catInt && categoryOf(to) == catInt && from.OID != OIDOid && to.OID != OIDOid:
		case from.OID == OIDVarchar && to.OID == OIDText:
		default:
			return -1
		}
		e = c.arg
	}
	c, ok := e.(*colExpr)
	if !ok {
		return -1
	}
	for i, k := range d.key {
		if k == c.i {
			return i
		}
	}
	return -1
}

// colRange is what ANDed conditions allow for one key column.
type colRange struct {
	lo, hi         Datum
	hasLo, hasHi   bool
	loIncl, hiIncl bool
	isNull         bool
	empty          bool
	eq             bool // lo == hi, both inclusive
}

func (r *colRange) point() bool { return r.eq }

// narrow applies op v to r.
func (r *colRange) narrow(cmp func(a, b Datum) (int, error), op string, v Datum) {
	lower := func(incl bool) {
		if !r.hasLo {
			r.lo, r.hasLo, r.loIncl = v, true, incl
			return
		}
		if c, _ := cmp(v, r.lo); c > 0 || c == 0 && !incl {
			r.lo, r.loIncl = v, incl
		}
	}
	upper := func(incl bool) {
		if !r.hasHi {
			r.hi, r.hasHi, r.hiIncl = v, true, incl
			return
		}
		if c, _ := cmp(v, r.hi); c < 0 || c == 0 && !incl {
			r.hi, r.hiIncl = v, incl
		}
	}
	switch op {
	case "=":
		lower(true)
		upper(true)
	case ">":
		lower(false)
	case ">=":
		lower(true)
	case "<":
		upper(false)
	case "<=":
		upper(true)
	}
	if r.hasLo && r.hasHi {
		c, _ := cmp(r.lo, r.hi)
		r.empty = r.empty || c > 0 || c == 0 && !(r.loIncl && r.hiIncl)
		r.eq = c == 0 && r.loIncl && r.hiIncl
	}
}

func (a *pruneAnd) eval(ec *evalCtx, d *partDesc) ([]bool, error) {
	var keep []bool
	if len(a.conds) > 0 {
		if len(a.ranges) != len(d.key) {
			a.ranges, a.used = make([]colRange, len(d.key)), make([]bool, len(d.key))
		}
		ranges, used := a.ranges, a.used
		clear(ranges)
		clear(used)
		n := 0
		for _, c := range a.conds {
			if ec.pruneUpTo != 0 && c.dep > ec.pruneUpTo {
				continue
			}
			n++
			used[c.col] = true
			r := &ranges[c.col]
			if c.op == "isnull" {
				r.isNull = true
				continue
			}
			v, err := c.val.eval(ec, nil)
			if err != nil {
				return nil, err
			}
			if v.Null { // a comparison with NULL is never true
				r.empty = true
				continue
			}
			r.narrow(d.cmps[c.col], c.op, v)
		}
		if n > 0 {
			keep = d.matchRanges(ranges, used, a.keep)
			if keep != nil {
				a.keep = keep
			}
		}
	}
	for _, sub := range a.subs {
		k, err := sub.eval(ec, d)
		if err != nil {
			return nil, err
		}
		keep = intersect(keep, k)
	}
	return keep, nil
}

func (o *pruneOr) eval(ec *evalCtx, d *partDesc) ([]bool, error) {
	out := make([]bool, len(d.parts))
	for _, sub := range o.subs {
		k, err := sub.eval(ec, d)
		if err != nil {
			return nil, err
		}
		if k == nil {
			return nil, nil
		}
		for i := range out {
			out[i] = out[i] || k[i]
		}
	}
	return out, nil
}

func (in *pruneIn) eval(ec *evalCtx, d *partDesc) ([]bool, error) {
	if ec.pruneUpTo != 0 && in.dep > ec.pruneUpTo {
		return nil, nil
	}
	out := make([]bool, len(d.parts))
	for _, e := range in.vals {
		v, err := e.eval(ec, nil)
		if err != nil {
			return nil, err
		}
		if v.Null {
			continue
		}
		ranges := make([]colRange, len(d.key))
		used := make([]bool, len(d.key))
		used[in.col] = true
		ranges[in.col].narrow(d.cmps[in.col], "=", v)
		k := d.matchRanges(ranges, used, nil)
		if k == nil {
			return nil, nil
		}
		for i := range out {
			out[i] = out[i] || k[i]
		}
	}
	return out, nil
}

// valueDepOf is what a pruning value depends on: constants only, bound
// parameters, or values only the executor has (outer rows, subqueries).
func valueDepOf(e expr) valueDep {
	d := depConst
	walkExpr(e, func(x expr) bool {
		switch x.(type) {
		case *paramExpr:
			d = max(d, depParam)
		case *outerExpr, *sublinkExpr:
			d = depExec
		}
		return d != depExec
	})
	return d
}

func (a *pruneAnd) deps() valueDep {
	d := depConst
	for _, c := range a.conds {
		d = max(d, c.dep)
	}
	for _, sub := range a.subs {
		d = max(d, sub.deps())
	}
	return d
}

func (o *pruneOr) deps() valueDep {
	d := depConst
	for _, sub := range o.subs {
		d = max(d, sub.deps())
	}
	return d
}

func (in *pruneIn) deps() valueDep { return in.dep }

// intersect ANDs two keep sets (nil = all).
func intersect(a, b []bool) []bool {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	for i := range a {
		a[i] = a[i] && b[i]
	}
	return a
}

// matchRanges is the set of partitions that can hold a row whose key
// columns lie in ranges (only the columns marked used are constrained),
// in buf if it is large enough; nil when it cannot prune.
func (d *partDesc) matchRanges(ranges []colRange, used []bool, buf []bool) []bool {
	keep := buf[:0]
	if cap(keep) < len(d.parts) {
		keep = make([]bool, len(d.parts))
	} else {
		keep = keep[:len(d.parts)]
		clear(keep)
	}
	for i := range ranges {
		if used[i] && ranges[i].empty || used[i] && ranges[i].isNull && (ranges[i].hasLo || ranges[i].hasHi) {
			return keep // nothing can match
		}
	}
	switch d.strategy {
	case partHash:
		var kb [4]Datum
		key := kb[:0]
		for i := range ranges {
			switch {
			case !used[i]:
				return nil
			case ranges[i].isNull:
				key = append(key, NullDatum)
			case ranges[i].point():
				key = append(key, ranges[i].lo)
			default:
				return nil
			}
		}
		if p := d.route(key); p >= 0 {
			keep[p] = true
		}
		return keep
	case partList:
		r := ranges[0]
		if !used[0] {
			return nil
		}
		if r.isNull {
			if d.nullPart >= 0 {
				keep[d.nullPart] = true
			} else if d.def >= 0 {
				keep[d.def] = true
			}
			return keep
		}
		if r.point() {
			if p := d.listLookup(r.lo); p >= 0 {
				keep[p] = true
			} else if d.def >= 0 {
				keep[d.def] = true
			}
			return keep
		}
		for _, v := range d.vals {
			if r.contains(d.cmps[0], v.d) {
				keep[v.part] = true
			}
		}
		if d.def >= 0 {
			keep[d.def] = true
		}
		return keep
	}
	// range
	all := true
	for i := range ranges {
		all = all && used[i] && ranges[i].point() && !ranges[i].isNull
	}
	if all && len(d.key) > 1 {
		var kb [4]Datum
		key := kb[:0]
		for i := range ranges {
			key = append(key, ranges[i].lo)
		}
		if p := d.route(key); p >= 0 {
			keep[p] = true
		}
		return keep
	}
	if !used[0] {
		return nil
	}
	r := ranges[0]
	if r.isNull {
		if d.def >= 0 {
			keep[d.def] = true
		}
		return keep
	}
	if r.point() && len(d.key) == 1 {
		if p := d.route([]Datum{r.lo}); p >= 0 { // binary search: pgbench's aid = $1
			keep[p] = true
		}
		return keep
	}
	if len(d.key) > 1 {
		// first column only: a partition may hold first-column values
		// from its lower to its upper bound's first column, inclusive
		for i := range d.lo {
			keep[i] = d.spanMeets(r, d.lo[i][0], d.hi[i][0], true)
		}
		if d.def >= 0 {
			keep[d.def] = true
		}
		return keep
	}
	gap := false
	for i := range d.lo {
		keep[i] = d.spanMeets(r, d.lo[i][0], d.hi[i][0], false)
		// the gap below this partition, down to the previous one
		if i == 0 {
			if d.lo[0][0].kind != rangeMin && d.spanMeets(r, rbound{kind: rangeMin}, d.lo[0][0], false) {
				gap = true
			}
		} else if d.cmpBounds(d.hi[i-1], true, d.lo[i], true) < 0 && d.spanMeets(r, d.hi[i-1][0], d.lo[i][0], false) {
			gap = true
		}
	}
	if n := len(d.lo); n == 0 {
		gap = true
	} else if last := d.hi[n-1][0]; last.kind != rangeMax && d.spanMeets(r, last, rbound{kind: rangeMax}, false) {
		gap = true
	}
	if gap && d.def >= 0 {
		keep[d.def] = true
	}
	return keep
}

// spanMeets reports whether values in [lo, hi) (or [lo, hi] with
// hiIncl) can satisfy r, treating the domain as dense as PostgreSQL's
// pruning does.
func (d *partDesc) spanMeets(r colRange, lo, hi rbound, hiIncl bool) bool {
	cmp := d.cmps[0]
	if r.hasLo && hi.kind != rangeMax {
		if hi.kind == rangeMin {
			return false
		}
		c, _ := cmp(hi.d, r.lo)
		if c < 0 || c == 0 && !(hiIncl && r.loIncl) {
			return false
		}
	}
	if r.hasHi && lo.kind != rangeMin {
		if lo.kind == rangeMax {
			return false
		}
		c, _ := cmp(lo.d, r.hi)
		if c > 0 || c == 0 && !r.hiIncl {
			return false
		}
	}
	return true
}

// contains reports whether v lies in r.
func (r *colRange) contains(cmp func(a, b Datum) (int, error), v Datum) bool {
	if r.hasLo {
		if c, _ := cmp(v, r.lo); c < 0 || c == 0 && !r.loIncl {
			return false
		}
	}
	if r.hasHi {
		if c, _ := cmp(v, r.hi); c > 0 || c == 0 && !r.hiIncl {
			return false
		}
	}
	return true
}
