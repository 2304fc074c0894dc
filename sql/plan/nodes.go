package plan

import (
	"lockd/sql/expr"
	"lockd/sql/types"
)

// The executor of one query level's FROM clause: a tree of plan nodes
// that write the columns of each combination of rows into a shared level
// row (see sql/analyze/scope.go for its layout) and call their continuation once per
// combination. Nothing is copied per row but the columns themselves; the
// inner side of a join is materialised once per execution of the join
// unless it depends on the outer row (a LATERAL item or an index lookup
// keyed by outer columns), in which case it is re-run for each outer row
// (a nested loop, PostgreSQL's parameterised paths).

type PlanNode interface {
	// mask is the set of FROM items the node covers (bit i = item i).
	mask() uint64
	// Spans are the ranges of the level row the node writes, one per
	// FROM item under it (not adjacent when the join order is not the
	// FROM clause's).
	Spans() []Span
}

// Span is a range [Lo, Hi) of the level row.
type Span struct{ Lo, Hi int }

// leafNode scans one FROM item.
type LeafNode struct {
	item    int
	Src     RowSource
	Off, N  int
	Filters []expr.Expr
	// lateral: the item is a subquery that reads earlier items of this
	// level, so the level row is pushed as its outer row while it runs.
	Lateral bool
	// Est is the planner's estimate of reading the item once (for the
	// inner side of a nested loop: once per outer row); EXPLAIN shows it
	Est pathCost
}

func (l *LeafNode) mask() uint64  { return 1 << uint(l.item) }
func (l *LeafNode) Spans() []Span { return []Span{{l.Off, l.Off + l.N}} }

type joinKind uint8

const (
	JoinInner joinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	// a pulled-up EXISTS or IN (semijoin.go): each left row that has a
	// match, once; a pulled-up NOT EXISTS: each left row that has none
	JoinSemi
	JoinAnti
)

func (k joinKind) String() string {
	return [...]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "SEMI JOIN", "ANTI JOIN"}[k]
}

// joinNode joins two subtrees.
type JoinNode struct {
	Kind        joinKind
	Left, Right PlanNode
	Cond        []expr.Expr // join conditions (ON), evaluated on the level row
	Lkeys       []expr.Expr // hash keys over the left columns
	Rkeys       []expr.Expr // hash keys over the right columns (same types)
	KeyTypes    []types.Type
	Filters     []expr.Expr // conditions applied to the join's output
	Rescan      bool        // the right side depends on the left row
	HashLeft    bool        // an inner hash join hashes its left side, streams its right
	// Merge: a merge join on the keys (mergejoin.go), each side read in
	// key order or sorted first (SortLeft, SortRight); MaterializeRight:
	// PostgreSQL would put a Materialize over the inner side
	Merge, SortLeft, SortRight, MaterializeRight bool
	mergeInfo                                    *mergeInfo
	hash                                         *hashInfo // for EXPLAIN's hash join cost (hashjoin.go)
	Est                                          pathCost  // the planner's estimate of the join's output
	// UniqueLeft / UniqueRight: a semi join done as an inner join, the
	// rows of its subquery's side (left or right) made unique on
	// UniqKeys first (PostgreSQL's unique-ified paths, JOIN_UNIQUE_OUTER
	// and JOIN_UNIQUE_INNER); UniqRows is how many the planner expects
	UniqueLeft, UniqueRight bool
	UniqKeys                []expr.Expr
	UniqTypes               []types.Type
	UniqRows                float64
	// semi is the pulled-up subquery this join does (semiplan.go); its
	// Est then holds the join's own cost, without its outer side's
	semi *semiJoin
}

func (j *JoinNode) mask() uint64 { return j.Left.mask() | j.Right.mask() }
func (j *JoinNode) Spans() []Span {
	return append(j.Left.Spans(), j.Right.Spans()...)
}
