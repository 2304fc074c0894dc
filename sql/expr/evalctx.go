package expr

import (
	"context"
	"sync/atomic"

	"lockd/pgerr"
	"lockd/sql/types"
)

func PosErr(e *pgerr.Error, loc int32) *pgerr.Error {
	if loc >= 0 && e.Position == 0 {
		e.Position = loc + 1
	}
	return e
}

// checkCancel returns the cancellation cause of a running statement.
func CheckCancel(ec *EvalCtx) error {
	if ec.Ctx == nil {
		return nil
	}
	if err := ec.Ctx.Err(); err != nil {
		return context.Cause(ec.Ctx)
	}
	return nil
}

// PostgreSQL's plan cache, as far as it decides which relations an
// execution locks.
//
// lockd plans a statement once and runs that plan at every execution, so
// its results never depend on the plan cache. The locks do: PostgreSQL's
// planner locks every relation it considers (a table and all its indexes,
// a partitioned table and every partition that plan-time pruning keeps,
// with all their indexes), while a cached generic plan run again locks
// only its range table (AcquireExecutorLocks: the tables, and every
// partition planned, whatever pruning on parameter values then removes)
// and the executor opens only the indexes it scans. Each execution of a
// prepared statement is given the plan kind PostgreSQL's
// choose_custom_plan (plancache.c) would give it:
//
//   - a statement without parameters uses a generic plan, planned at its
//     first execution and reused after;
//   - plan_cache_mode = force_generic_plan likewise, with parameters;
//   - plan_cache_mode = force_custom_plan plans every execution afresh;
//   - otherwise (auto) the first five executions are custom plans, planned
//     for the parameter values; the sixth plans a generic plan too, and
//     keeps using it when it would prune no worse than the custom plans
//     did. PostgreSQL compares estimated costs; lockd, which has no cost
//     model, prefers the custom plan exactly when partition pruning on a
//     parameter removed partitions the generic plan would hold, which is
//     the case where PostgreSQL's costs differ by the partitions' scans.
//
// The unnamed statement of the extended protocol and every statement of
// the simple query protocol are planned for their one execution.

// planKind is how PostgreSQL would plan one execution.
type PlanKind uint8

const (
	CustomPlan   PlanKind = iota // planned for this execution's parameter values
	GenericBuild                 // a generic plan is planned now, then run
	GenericReuse                 // the cached generic plan runs again
)

// valueDep is what a partition pruning value depends on; pruning steps on
// values beyond what the planner can see run when the executor starts.
type ValueDep uint8

const (
	DepConst ValueDep = iota + 1 // constants: a generic plan prunes on them
	DepParam                     // parameters: a custom plan prunes on them
	DepExec                      // outer rows and subqueries: the executor only
)

// pruneUpTo is the most a plan of kind k can prune on when it is planned.
func (k PlanKind) PruneUpTo() ValueDep {
	if k == CustomPlan {
		return DepParam
	}
	return DepConst
}

// evalCtx is what expressions see while running.
type EvalCtx struct {
	B         *Backend
	Exec      Executor // runs the plans of subqueries
	Ctx       context.Context
	Params    []types.Datum
	AggVals   []types.Datum   // results of the current group's aggregates
	GroupVals []types.Datum   // GROUP BY values of the current group
	OutVals   []types.Datum   // the current output row (ORDER BY an output column)
	Outer     [][]types.Datum // rows of enclosing query levels, innermost last
	subCache  map[*SublinkExpr]*subResult
	Plan      PlanKind // how PostgreSQL's plan cache would run this execution
	PruneUpTo ValueDep // partition pruning ignores values beyond this (0: none)
	// runtimePruned: a partition the plan holds was pruned on a
	// parameter value (a generic plan would lock more than a custom one)
	RuntimePruned bool
	CteCache      map[any][][]types.Datum // CTE results by definition (sql/plan/cte.go)
	// Level is the level row a parameterised scan reads (LevelExpr)
	Level []types.Datum
	// Instr, when set, gathers EXPLAIN ANALYZE's counts per plan node
	// (keys: the plan's nodes, see sql/plan/explain.go)
	Instr     map[any]*NodeStats
	PartStats *NodeStats // the partition being scanned, when gathering
	// ScanStats is the table leaf whose scan runs now, when gathering
	// (an index-only scan counts its heap fetches there)
	ScanStats *NodeStats
	// Run identifies this execution of a statement within the session
	// (0: none yet), so what a plan opens once per execution — the
	// partitions it locks — is opened once however often it is scanned.
	// It is numbered (NewRun) when it first opens something: a statement
	// that opens nothing does not touch the shared counter
	Run  uint64
	Tick uint32 // rows produced, for periodic cancel checks

	// corrCache keeps each correlated subquery's last result and the
	// outer values it was computed for (sublink.go)
	corrCache map[*SublinkExpr]*corrResult
}

func (ec *EvalCtx) FormatCtx() *types.FormatCtx {
	if ec == nil || ec.B == nil {
		return nil
	}
	return &ec.B.Format
}

// runs numbers statement executions (EvalCtx.Run).
var runs atomic.Uint64

// NewRun numbers a new statement execution.
func NewRun() uint64 { return runs.Add(1) }

// NodeStats are EXPLAIN ANALYZE's counts for one plan node, summed over
// the times it ran (loops).
type NodeStats struct {
	Loops      float64
	Rows       float64
	StartMs    float64 // time to the first row
	TotalMs    float64 // time in the node and its children
	Removed    float64 // rows a filter removed
	JoinFilter float64 // rows a join filter removed
	// HeapFetches: heap tuples an index-only scan read because the
	// visibility map did not call their page all-visible
	HeapFetches float64
	// a Bitmap Heap Scan's rows its index recheck removed, and the
	// exact and lossy pages it read (over all loops)
	RecheckRemoved         float64
	ExactPages, LossyPages float64
}

// Stats returns the counts for key, made on first use; nil when nothing
// is gathered.
func (ec *EvalCtx) Stats(key any) *NodeStats {
	if ec.Instr == nil {
		return nil
	}
	st := ec.Instr[key]
	if st == nil {
		st = &NodeStats{}
		ec.Instr[key] = st
	}
	return st
}
