package analyze

import (
	"lockd/sql/expr"
	"lockd/sql/types"
)

// WITH queries (common table expressions), plain and RECURSIVE. A CTE is
// computed once per execution of the statement and kept (unless it reads
// an enclosing query's row); a recursive one iterates its recursive term
// over the rows the previous iteration produced until none are new, as
// PostgreSQL's WorkTableScan does.

type CteDef struct {
	Name string
	Cols []types.Column
	Plan expr.Subplan // non-recursive CTE (a *selectPlan)
	// recursive CTE: anchor UNION [ALL] step, where step reads work
	Anchor, Step expr.Subplan
	All          bool
	StepCasts    []expr.Expr
	Work         [][]types.Datum // the rows of the previous iteration, while step runs
	Recursive    bool
}

// cteScope is the CTEs visible at one query level, innermost first.
type CteScope struct {
	Defs   []*CteDef
	Parent *CteScope
}

func (c *CteScope) Lookup(name string) *CteDef {
	for s := c; s != nil; s = s.Parent {
		for _, d := range s.Defs {
			if d.Name == name {
				return d
			}
		}
	}
	return nil
}
