package sql

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
type planKind uint8

const (
	customPlan   planKind = iota // planned for this execution's parameter values
	genericBuild                 // a generic plan is planned now, then run
	genericReuse                 // the cached generic plan runs again
)

// valueDep is what a partition pruning value depends on; pruning steps on
// values beyond what the planner can see run when the executor starts.
type valueDep uint8

const (
	depConst valueDep = iota + 1 // constants: a generic plan prunes on them
	depParam                     // parameters: a custom plan prunes on them
	depExec                      // outer rows and subqueries: the executor only
)

// planChoice is what a prepared statement settled on after five custom
// plans (auto mode with parameters).
type planChoice uint8

const (
	choiceUndecided planChoice = iota
	choiceCustom
	choiceGeneric
)

// customPlansFirst is how many custom plans PostgreSQL makes before it
// weighs a generic plan.
const customPlansFirst = 5

// planFor returns the plan kind of st's next execution under
// plan_cache_mode = mode.
func (st *Stmt) planFor(mode string) planKind {
	if len(st.params) == 0 {
		// nothing to plan a custom plan for: generic, planned once
		if st.named && st.genericCached {
			return genericReuse
		}
		return genericBuild
	}
	switch {
	case !st.named:
		// planned for its single execution
		if mode == "force_generic_plan" {
			return genericBuild
		}
		return customPlan
	case mode == "force_custom_plan":
		return customPlan
	case mode == "force_generic_plan" || st.choice == choiceGeneric:
		if st.genericCached {
			return genericReuse
		}
		return genericBuild
	case st.choice == choiceCustom || st.customPlans < customPlansFirst:
		return customPlan
	default:
		return genericBuild // the sixth: weigh a generic plan
	}
}

// planDone records an execution of kind k of st under plan_cache_mode =
// mode; runtimePruned: the execution pruned partitions on a parameter.
func (st *Stmt) planDone(k planKind, mode string, runtimePruned bool) {
	if !st.named {
		return
	}
	switch k {
	case customPlan:
		st.customPlans++
	case genericBuild:
		st.genericCached = true
		if st.choice == choiceUndecided && len(st.params) > 0 && st.customPlans >= customPlansFirst &&
			mode == "auto" {
			if runtimePruned {
				// the generic plan was planned, and a custom plan ran
				st.choice = choiceCustom
				st.customPlans++
				return
			}
			st.choice = choiceGeneric
		}
		st.genericPlans++
	case genericReuse:
		st.genericPlans++
	}
}

// pruneUpTo is the most a plan of kind k can prune on when it is planned.
func (k planKind) pruneUpTo() valueDep {
	if k == customPlan {
		return depParam
	}
	return depConst
}
