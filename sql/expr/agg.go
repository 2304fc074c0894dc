package expr

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/types"
)

// Aggregates: count, sum, avg, min, max, bool_and, bool_or, every,
// string_agg and array_agg, with DISTINCT, FILTER and (for the two
// order-sensitive ones) ORDER BY inside the call.

func IsAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max", "avg", "bool_and", "bool_or", "every", "string_agg", "array_agg":
		return true
	}
	return false
}

// aggRef is one aggregate call; aggResult reads its value for the group.
type AggRef struct {
	Name     string
	Arg      Expr
	Arg2     Expr // string_agg's delimiter
	Filter   Expr // FILTER (WHERE ...), or nil
	Order    []SortKey
	Star     bool
	Distinct bool
	T        types.Type
}

type AggResult struct {
	Idx int
	T   types.Type
}

func (r *AggResult) Type() types.Type { return r.T }
func (r *AggResult) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	return ec.AggVals[r.Idx], nil
}

// groupRef reads the value of a GROUP BY expression for the current group.
type GroupRef struct {
	Idx int
	T   types.Type
}

func (g *GroupRef) Type() types.Type { return g.T }
func (g *GroupRef) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	return ec.GroupVals[g.Idx], nil
}

func NewSortKey(e Expr, by *pg.SortBy) SortKey {
	k := SortKey{E: e, desc: by.SortbyDir == pg.SortByDir_SORTBY_DESC, cmp: types.Comparator(e.Type())}
	k.nullsFirst = k.desc
	switch by.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		k.nullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		k.nullsFirst = false
	}
	return k
}

func BoolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// compareKeys orders two rows of sort-key values by the keys' directions
// and NULLS FIRST/LAST rules.
func CompareKeys(order []SortKey, a, b []types.Datum) (int, error) {
	for k, key := range order {
		x, y := a[k], b[k]
		switch {
		case x.Null && y.Null:
			continue
		case x.Null:
			if key.nullsFirst {
				return -1, nil
			}
			return 1, nil
		case y.Null:
			if key.nullsFirst {
				return 1, nil
			}
			return -1, nil
		}
		c, err := key.cmp(x, y)
		if err != nil {
			return 0, err
		}
		if c == 0 {
			continue
		}
		if key.desc {
			return -c, nil
		}
		return c, nil
	}
	return 0, nil
}

type SortKey struct {
	E          Expr
	desc       bool
	nullsFirst bool
	cmp        func(a, b types.Datum) (int, error)
}

// Desc reports whether the key sorts descending; NullsFirst whether NULLs
// come first.
func (k SortKey) Desc() bool       { return k.desc }
func (k SortKey) NullsFirst() bool { return k.nullsFirst }
