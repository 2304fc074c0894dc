package plan

import (
	"lockd/sql/expr"
)

// planChoice is what a prepared statement settled on after five custom
// plans (auto mode with parameters).
type PlanChoice uint8

const (
	choiceUndecided PlanChoice = iota
	ChoiceCustom
	ChoiceGeneric
)

// customPlansFirst is how many custom plans PostgreSQL makes before it
// weighs a generic plan.
const CustomPlansFirst = 5

// planFor returns the plan kind of st's next execution under
// plan_cache_mode = mode.
func (st *Stmt) PlanFor(mode string) expr.PlanKind {
	if len(st.Params) == 0 {
		// nothing to plan a custom plan for: generic, planned once
		if st.Named && st.GenericCached {
			return expr.GenericReuse
		}
		return expr.GenericBuild
	}
	switch {
	case !st.Named:
		// planned for its single execution
		if mode == "force_generic_plan" {
			return expr.GenericBuild
		}
		return expr.CustomPlan
	case mode == "force_custom_plan":
		return expr.CustomPlan
	case mode == "force_generic_plan" || st.Choice == ChoiceGeneric:
		if st.GenericCached {
			return expr.GenericReuse
		}
		return expr.GenericBuild
	case st.Choice == ChoiceCustom || st.CustomPlans < CustomPlansFirst:
		return expr.CustomPlan
	default:
		return expr.GenericBuild // the sixth: weigh a generic plan
	}
}

// planDone records an execution of kind k of st under plan_cache_mode =
// mode; runtimePruned: the execution pruned partitions on a parameter.
func (st *Stmt) PlanDone(k expr.PlanKind, mode string, runtimePruned bool) {
	if !st.Named {
		return
	}
	switch k {
	case expr.CustomPlan:
		st.CustomPlans++
	case expr.GenericBuild:
		st.GenericCached = true
		if st.Choice == choiceUndecided && len(st.Params) > 0 && st.CustomPlans >= CustomPlansFirst &&
			mode == "auto" {
			if runtimePruned {
				// the generic plan was planned, and a custom plan ran
				st.Choice = ChoiceCustom
				st.CustomPlans++
				return
			}
			st.Choice = ChoiceGeneric
		}
		st.GenericPlans++
	case expr.GenericReuse:
		st.GenericPlans++
	}
}
