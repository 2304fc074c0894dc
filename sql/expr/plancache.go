package expr

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
