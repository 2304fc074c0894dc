package plan

import "strings"

// EXPLAIN of the joins of pulled-up subqueries (semiplan.go): Semi and
// Anti joins are named as PostgreSQL names them (Hash Semi Join, Nested
// Loop Anti Join, ...) by explain.go; here the HashAggregate that makes a
// subquery's rows unique for an inner join, and the costs the planner
// weighed for a semi join.

// StatUnique keys EXPLAIN ANALYZE's counts of the HashAggregate making
// a side of join J unique.
type StatUnique struct{ J *JoinNode }

// uniqueNode is the HashAggregate over child making j's subquery side
// unique on j.UniqKeys.
func (ex *explainer) uniqueNode(lv *level, j *JoinNode, child *exNode) *exNode {
	u := &exNode{typ: "Aggregate", strategy: "Hashed", width: child.width, kids: []*exNode{child}}
	var keys []string
	for _, k := range j.UniqKeys {
		keys = append(keys, lv.d.print(k))
	}
	u.prop("Group Key", strings.Join(keys, ", "))
	c := ex.c.uniqueCost(child.cost, len(j.UniqKeys), j.UniqRows)
	u.cost = c
	u.stats = ex.stat(StatUnique{j})
	return u
}

// semiCost gives explained join n of j the cost the planner weighed for
// it when j does a semi join: its own, beyond its outer side left.
func (ex *explainer) semiCost(j *JoinNode, n, left *exNode) {
	if j.semi == nil || j.UniqueLeft || j.Est.total == 0 {
		return
	}
	n.cost.startup = j.Est.startup + left.cost.startup
	n.cost.total = j.Est.total + left.cost.total
}
