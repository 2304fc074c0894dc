package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
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
type PartitionedSource struct {
	root  uint32 // the partitioned table named
	alias string
	cols  []types.Column
	Mode  locks.LockMode
	where expr.Expr
	// origOf maps the conditions of where to the filters of the FROM
	// item they were shifted from (EXPLAIN's Index Cond versus Filter)
	origOf map[expr.Expr]expr.Expr
	Only   bool // FROM ONLY t: the partitioned table alone, which holds no rows

	Gen  uint64    // catalog generation tree was built for
	Tree *PartNode // the partition tree with per-partition plans
	// level: where reads the level row (LevelExpr), the join keys of a
	// nested loop whose inner side this is
	level bool
	// partial, decodeN: the partitions' scans decode only the first
	// decodeN columns (decode.go)
	partial bool
	decodeN int
	need    []bool
	needSys bool
	// indexOnly: enable_indexonlyscan was on when the query was planned
	indexOnly bool
	// b is the session's backend, whose sizes and settings cost a
	// partition's bitmap scan (nil: partitions are read as before)
	b *expr.Backend
	// ExecPrune: some pruning step needs values only the executor has
	// (outer rows, subqueries, the level row): it runs at every scan, on
	// the partitions opened for the execution
	ExecPrune bool

	// the partitions opened (locked, and pruned on constants and
	// parameters) by execution Run of the statement, scanned by every
	// scan of this source in that execution
	OpenRun uint64
	Opened  []*PartNode
	ScanBuf []*PartNode // reused by each scan's pruning
	LeafBuf []*PartNode // reused by open
	Sub     ModifyPlan  // reused by execModifyPartitioned
	Pu      PartUpdate
}

// partNode is one table of the partition tree.
type PartNode struct {
	OpenRun uint64 // the execution that last opened it (PartitionedSource.OpenRun)
	T       *catalog.TableDef
	Desc    *catalog.PartDesc // partitioned tables only
	Kids    []*PartNode       // aligned with desc.parts
	Prune   pruneStep         // pruning of kids, compiled against desc
	Ts      *TableSource
	Idx     []*catalog.IndexDef
}

// newPartitionedSource is the rowSource of partitioned table t read (or
// written) in mode.
func newPartitionedSource(t *catalog.TableDef, alias string, mode locks.LockMode) *PartitionedSource {
	ps := &PartitionedSource{root: t.OID, alias: alias, Mode: mode}
	for i := range t.Cols {
		ps.cols = append(ps.cols, types.Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type(), TableOID: t.OID, Attnum: t.Attnum(i)})
	}
	// the partitions' rows carry their ctid and tableoid
	ps.cols = append(ps.cols,
		types.Column{Name: "ctid", Type: types.TypeTid, TableOID: t.OID, Attnum: -1},
		types.Column{Name: "tableoid", Type: types.TypeOid, TableOID: t.OID, Attnum: -6})
	return ps
}

func (ps *PartitionedSource) columns() []types.Column { return ps.cols }
func (ps *PartitionedSource) readsLevel() bool        { return ps.level }

// filter gives the source the statement's WHERE clause, which prunes
// partitions and picks index lookups within them. where must be over this
// source's columns alone (colExpr.i is a position in columns()); a planner
// with several relations passes the conjuncts that read only this one.
func (ps *PartitionedSource) filter(cat *catalog.CatalogState, where expr.Expr) {
	ps.where = where
	ps.Build(cat)
}

// relLocks are the locks the statement takes before it runs: the
// partitioned table only.
func (ps *PartitionedSource) relLocks() []expr.RelLock {
	return []expr.RelLock{{Oid: ps.root, Mode: ps.Mode}}
}

func (ps *PartitionedSource) Build(cat *catalog.CatalogState) {
	ps.Gen = cat.Gen
	ps.ExecPrune = false
	ps.OpenRun = 0
	ps.Tree = ps.node(cat, cat.Tables[ps.root])
}

func (ps *PartitionedSource) node(cat *catalog.CatalogState, t *catalog.TableDef) *PartNode {
	if t == nil {
		return nil
	}
	n := &PartNode{T: t}
	if !t.Partitioned() {
		n.Ts = NewTableSource(t, ps.alias)
		n.Ts.partial, n.Ts.decodeN, n.Ts.need, n.Ts.needSys = ps.partial, ps.decodeN, ps.need, ps.needSys
		n.Ts.useIndex(cat, ps.where)
		n.Ts.markIndexOnly(ps.indexOnly)
		if ps.b != nil {
			n.Ts.considerBitmap(ps.b, ps.where)
		}
		n.Idx = cat.TableIndexes(t)
		return n
	}
	n.Desc = cat.PartDesc(t.OID)
	n.Prune = compilePrune(n.Desc, ps.where)
	if n.Prune != nil && n.Prune.Deps() == expr.DepExec {
		ps.ExecPrune = true
	}
	for _, oid := range n.Desc.Parts {
		n.Kids = append(n.Kids, ps.node(cat, cat.Tables[oid]))
	}
	return n
}

// sameKeep reports whether two keep sets (nil = all) are equal.
func SameKeep(a, b []bool) bool {
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

// --- pruning

// pruneStep decides which partitions of one partitioned table a WHERE
// clause can reach. eval returns nil for "all".
type pruneStep interface {
	Eval(ec *expr.EvalCtx, d *catalog.PartDesc) ([]bool, error)
	Deps() expr.ValueDep // the most any of its values depends on
}

// keyCond is a comparison of key column col (its position in the key)
// with a value computed at execution.
type keyCond struct {
	col int
	op  string        // "=", "<", "<=", ">", ">=", "isnull"
	val expr.Expr     // nil for isnull
	dep expr.ValueDep // what val reads: when PostgreSQL can prune on it
}

// pruneAnd intersects the range its conditions leave per key column with
// the results of its sub-steps.
type pruneAnd struct {
	conds []keyCond
	subs  []pruneStep

	ranges []catalog.ColRange // scratch, reused at each execution
	used   []bool
	keep   []bool
}

type pruneOr struct{ subs []pruneStep }

// pruneIn is key IN (values).
type pruneIn struct {
	col  int
	vals []expr.Expr
	dep  expr.ValueDep // the most any value depends on
}

// compilePrune turns where into a prune step for d's key; nil means no
// pruning.
func compilePrune(d *catalog.PartDesc, where expr.Expr) pruneStep {
	if where == nil || d == nil {
		return nil
	}
	return pruneOf(d, where)
}

func pruneOf(d *catalog.PartDesc, e expr.Expr) pruneStep {
	switch x := e.(type) {
	case *expr.BoolExpr:
		switch x.Op {
		case expr.BoolAnd:
			and := &pruneAnd{}
			for _, a := range x.Args {
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
			for _, a := range x.Args {
				st := pruneOf(d, a)
				if st == nil {
					return nil
				}
				or.subs = append(or.subs, st)
			}
			return or
		}
	case *expr.InExpr:
		if x.Not {
			return nil
		}
		col := keyColumnOf(d, x.Arg)
		if col < 0 {
			return nil
		}
		for _, v := range x.List {
			if !isRowFree(v) {
				return nil
			}
		}
		in := &pruneIn{col: col, vals: x.List, dep: expr.DepConst}
		for _, v := range x.List {
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
func keyCondOf(d *catalog.PartDesc, e expr.Expr) (keyCond, bool) {
	switch x := e.(type) {
	case *expr.BinopExpr:
		if _, ok := flipped[x.Op]; !ok {
			return keyCond{}, false
		}
		if col := keyColumnOf(d, x.L); col >= 0 && isRowFree(x.R) {
			return keyCond{col: col, op: x.Op, val: x.R, dep: valueDepOf(x.R)}, true
		}
		if col := keyColumnOf(d, x.R); col >= 0 && isRowFree(x.L) {
			return keyCond{col: col, op: flipped[x.Op], val: x.L, dep: valueDepOf(x.L)}, true
		}
	case *expr.NullTestExpr:
		if col := keyColumnOf(d, x.Arg); col >= 0 && x.IsNull {
			return keyCond{col: col, op: "isnull"}, true
		}
	}
	return keyCond{}, false
}

// keyColumnOf returns the key position of the column e reads, or -1. A
// column compared as a wider integer, or a varchar compared as text,
// still prunes (the operators are in the key's operator family, as in
// PostgreSQL); other casts of the column do not.
func keyColumnOf(d *catalog.PartDesc, e expr.Expr) int {
	if c, ok := e.(*expr.CastExpr); ok {
		if c.Explicit { // an expression on the key, not the key
			return -1
		}
		from, to := c.Arg.Type(), c.T
		switch {
		case types.CategoryOf(from) == types.CatInt && types.CategoryOf(to) == types.CatInt && from.OID != types.OIDOid && to.OID != types.OIDOid:
		case from.OID == types.OIDVarchar && to.OID == types.OIDText:
		default:
			return -1
		}
		e = c.Arg
	}
	c, ok := e.(*expr.ColExpr)
	if !ok {
		return -1
	}
	for i, k := range d.Key {
		if k == c.I {
			return i
		}
	}
	return -1
}

func (a *pruneAnd) Eval(ec *expr.EvalCtx, d *catalog.PartDesc) ([]bool, error) {
	var keep []bool
	if len(a.conds) > 0 {
		if len(a.ranges) != len(d.Key) {
			a.ranges, a.used = make([]catalog.ColRange, len(d.Key)), make([]bool, len(d.Key))
		}
		ranges, used := a.ranges, a.used
		clear(ranges)
		clear(used)
		n := 0
		for _, c := range a.conds {
			if ec.PruneUpTo != 0 && c.dep > ec.PruneUpTo {
				continue
			}
			n++
			used[c.col] = true
			r := &ranges[c.col]
			if c.op == "isnull" {
				r.IsNull = true
				continue
			}
			v, err := c.val.Eval(ec, nil)
			if err != nil {
				return nil, err
			}
			if v.Null { // a comparison with NULL is never true
				r.Empty = true
				continue
			}
			r.Narrow(d.Cmps[c.col], c.op, v)
		}
		if n > 0 {
			keep = d.MatchRanges(ranges, used, a.keep)
			if keep != nil {
				a.keep = keep
			}
		}
	}
	for _, sub := range a.subs {
		k, err := sub.Eval(ec, d)
		if err != nil {
			return nil, err
		}
		keep = intersect(keep, k)
	}
	return keep, nil
}

func (o *pruneOr) Eval(ec *expr.EvalCtx, d *catalog.PartDesc) ([]bool, error) {
	out := make([]bool, len(d.Parts))
	for _, sub := range o.subs {
		k, err := sub.Eval(ec, d)
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

func (in *pruneIn) Eval(ec *expr.EvalCtx, d *catalog.PartDesc) ([]bool, error) {
	if ec.PruneUpTo != 0 && in.dep > ec.PruneUpTo {
		return nil, nil
	}
	out := make([]bool, len(d.Parts))
	for _, e := range in.vals {
		v, err := e.Eval(ec, nil)
		if err != nil {
			return nil, err
		}
		if v.Null {
			continue
		}
		ranges := make([]catalog.ColRange, len(d.Key))
		used := make([]bool, len(d.Key))
		used[in.col] = true
		ranges[in.col].Narrow(d.Cmps[in.col], "=", v)
		k := d.MatchRanges(ranges, used, nil)
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
func valueDepOf(e expr.Expr) expr.ValueDep {
	d := expr.DepConst
	expr.WalkExpr(e, func(x expr.Expr) bool {
		switch x.(type) {
		case *expr.ParamExpr:
			d = max(d, expr.DepParam)
		case *expr.OuterExpr, *expr.SublinkExpr, *expr.LevelExpr:
			d = expr.DepExec
		}
		return d != expr.DepExec
	})
	return d
}

func (a *pruneAnd) Deps() expr.ValueDep {
	d := expr.DepConst
	for _, c := range a.conds {
		d = max(d, c.dep)
	}
	for _, sub := range a.subs {
		d = max(d, sub.Deps())
	}
	return d
}

func (o *pruneOr) Deps() expr.ValueDep {
	d := expr.DepConst
	for _, sub := range o.subs {
		d = max(d, sub.Deps())
	}
	return d
}

func (in *pruneIn) Deps() expr.ValueDep { return in.dep }

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
