package plan

import (
	"strings"
)

// EXPLAIN of merge joins: PostgreSQL's Merge Join node with its Merge
// Cond, the Sort nodes that put a side in key order and the Materialize
// PostgreSQL puts over the inner side where final_cost_mergejoin chose
// one.

// The keys of NodeStats for the Sorts of a merge join's sides.
type (
	StatMergeOuter struct{ J *JoinNode } // the Sort of its outer (left) side
	StatMergeInner struct{ J *JoinNode } // the Sort of its inner side, or the side read into memory
)

// mergeJoin fills n, the node of merge join j over the explained sides
// left and right.
func (ex *explainer) mergeJoin(lv *level, j *JoinNode, n, left, right *exNode) {
	n.typ = "Merge Join"
	var conds []string
	var lkeys, rkeys []string
	for i := range j.Lkeys {
		l, r := lv.d.print(j.Lkeys[i]), lv.d.print(j.Rkeys[i])
		lkeys, rkeys = append(lkeys, l), append(rkeys, r)
		conds = append(conds, "("+l+" = "+r+")")
	}
	cond := conds[0]
	if len(conds) > 1 {
		cond = "(" + strings.Join(conds, " AND ") + ")"
	}
	n.prop("Merge Cond", cond)
	if len(j.Cond) > 0 {
		n.prop("Join Filter", lv.d.print(andAll(j.Cond)))
	}
	ms := mergeSettingsOf(ex.b)
	sortNode := func(in *exNode, keys []string, key any) *exNode {
		s := &exNode{typ: "Sort", width: in.width, kids: []*exNode{in}}
		s.prop("Sort Key", strings.Join(keys, ", "))
		sc := ex.c.sortCost(in.cost.rows, float64(in.width), ms.workMem)
		s.cost = pathCost{startup: in.cost.total + sc.startup, total: in.cost.total + sc.total, rows: in.cost.rows}
		if !ms.sort {
			s.cost.startup += disableCost
			s.cost.total += disableCost
		}
		s.stats = ex.stat(key)
		return s
	}
	rawLeft, rawRight := left, right
	if j.SortLeft {
		left = sortNode(left, lkeys, StatMergeOuter{j})
	}
	if j.SortRight {
		right = sortNode(right, rkeys, StatMergeInner{j})
	}
	if j.MaterializeRight {
		m := &exNode{typ: "Materialize", width: right.width, kids: []*exNode{right}}
		m.cost = pathCost{startup: right.cost.startup, total: right.cost.total + 2*ex.c.cpuOperator*right.cost.rows, rows: right.cost.rows}
		// the inner rows are read into memory once: the Materialize (and
		// a Sort under it) give them all
		m.stats = ex.stat(StatMergeInner{j})
		right = m
	}
	n.kids = []*exNode{left, right}
	if mi := j.mergeInfo; mi != nil {
		// the sides as read: the merge join's cost counts their Sorts
		// and the Materialize itself (final_cost_mergejoin)
		outer := sortedInput{cost: rawLeft.cost, width: float64(rawLeft.width), sort: j.SortLeft}
		inner := sortedInput{cost: rawRight.cost, width: float64(rawRight.width), sort: j.SortRight}
		n.cost = ex.c.mergeJoinCost(ms, outer, inner, mi.outerFrac, mi.innerFrac, len(j.Lkeys), mi.keyRows, j.Est.rows, ex.c.qualCost(j.Cond), mi.innerUnique).cost
	}
	n.cost.rows = j.Est.rows
	if mi := j.mergeInfo; mi != nil {
		u := mi.uniqueKeys
		n.innerUnique = &u
	}
}

// StatGroupSort is the NodeStats key of the Sort under a GroupAggregate.
type StatGroupSort struct{ P *SelectPlan }

// groupSort is the Sort that puts a sorted aggregation's input in group
// order.
func (ex *explainer) groupSort(lv *level, p *SelectPlan, in *exNode) *exNode {
	s := &exNode{typ: "Sort", width: in.width, kids: []*exNode{in}}
	var keys []string
	for _, k := range p.GroupSortKeys {
		key := lv.d.print(k)
		if p.GroupSortDesc {
			key += " DESC"
		}
		keys = append(keys, key)
	}
	s.prop("Sort Key", strings.Join(keys, ", "))
	ms := mergeSettingsOf(ex.b)
	sc := ex.c.sortCost(in.cost.rows, float64(in.width), ms.workMem)
	s.cost = pathCost{startup: in.cost.total + sc.startup, total: in.cost.total + sc.total, rows: in.cost.rows}
	if !ms.sort {
		s.cost.startup += disableCost
		s.cost.total += disableCost
	}
	s.stats = ex.stat(StatGroupSort{p})
	return s
}
