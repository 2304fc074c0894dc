package plan

import (
	"sort"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Index paths. A table is read through one of its B-tree indexes when
// its conditions pin the index's leading columns: equality on a prefix
// of the key columns (a join key counts, which makes the scan a nested
// loop's parameterised inner side) and, on the column after that prefix,
// either an IN list (or = ANY of an array: one scan per distinct value,
// in key order) or a range (<, <=, >, >=, BETWEEN). Every condition stays
// in force as a recheck, so an index scan only narrows what is read.
//
// Ranges and orderings use the key's byte order, which is the column's
// order only for the types whose key encoding preserves it (orderedKey);
// equality and IN lists work for every key type.

// colConds are the conditions on one table column that can bound an
// index scan.
type colConds struct {
	eq             expr.Expr // or a NullKey for IS NULL
	eqJoin         bool      // eq is a join key: it reads the level row
	in             []expr.Expr
	inArr          expr.Expr // = ANY (array)
	lo, hi         expr.Expr
	loIncl, hiIncl bool
	notNull        bool // IS NOT NULL
	// the conditions each came from, which an index scan carries out
	// (EXPLAIN shows them as its Index Cond rather than its Filter)
	eqSrc, inSrc, loSrc, hiSrc, notNullSrc expr.Expr
}

// condSet maps table column positions to their conditions.
type condSet map[int]*colConds

func (cs condSet) at(c int) *colConds {
	cc := cs[c]
	if cc == nil {
		cc = &colConds{}
		cs[c] = cc
	}
	return cc
}

// colFunc recognises an expression that reads one table column as an
// index key would see it, returning the column's position and type.
type colFunc func(expr.Expr) (int, types.Type, bool)

// add records the usable conditions in conjunct e: `col op value` with op
// one of = < <= > >=, `col IN (values)` and `col = ANY (array)`, where
// value passes valOK (it reads nothing of the table's row) and has a type
// whose key encoding the column's shares.
func (cs condSet) add(e expr.Expr, colOf colFunc, valOK func(expr.Expr) bool) {
	switch x := e.(type) {
	case *expr.BoolExpr:
		if x.Op == expr.BoolAnd {
			for _, a := range x.Args {
				cs.add(a, colOf, valOK)
			}
		}
	case *expr.BinopExpr:
		op, ok := flipped[x.Op]
		if !ok {
			return
		}
		// op as seen from the column: value op column is column
		// flipped-op value (16 >= i is i <= 16)
		c, t, ok := colOf(x.L)
		val := x.R
		if !ok {
			if c, t, ok = colOf(x.R); !ok {
				return
			}
			val = x.L
		} else {
			op = x.Op
		}
		if !valOK(val) || !keyCompatible(t, val.Type()) {
			return
		}
		cc := cs.at(c)
		switch op {
		case "=":
			if cc.eq == nil {
				cc.eq, cc.eqSrc = val, e
			}
		case "<", "<=":
			if cc.hi == nil && orderedKey(t) {
				cc.hi, cc.hiIncl, cc.hiSrc = val, op == "<=", e
			}
		case ">", ">=":
			if cc.lo == nil && orderedKey(t) {
				cc.lo, cc.loIncl, cc.loSrc = val, op == ">=", e
			}
		}
	case *expr.NullTestExpr:
		c, t, ok := colOf(x.Arg)
		switch {
		case !ok:
		case x.IsNull:
			if cc := cs.at(c); cc.eq == nil {
				cc.eq, cc.eqSrc = &NullKey{T: t}, e
			}
		default:
			cc := cs.at(c)
			cc.notNull, cc.notNullSrc = true, e
		}
	case *expr.InExpr:
		c, t, ok := colOf(x.Arg)
		if x.Not || !ok {
			return
		}
		for _, v := range x.List {
			if !valOK(v) || !keyCompatible(t, v.Type()) {
				return
			}
		}
		if cc := cs.at(c); cc.in == nil && cc.inArr == nil {
			cc.in, cc.inSrc = x.List, e
		}
	case *expr.AnyExpr:
		c, t, ok := colOf(x.Arg)
		if x.All || x.Op != "=" || !ok || !valOK(x.Arr) {
			return
		}
		if elem, ok := types.ElemOf(x.Arr.Type()); !ok || !keyCompatible(t, elem) {
			return
		}
		if cc := cs.at(c); cc.in == nil && cc.inArr == nil {
			cc.inArr, cc.inSrc = x.Arr, e
		}
	}
}

// NullKey is the key value of `col IS NULL`: NULL, which an index scan
// looks for (where a NULL compared with = matches nothing).
type NullKey struct{ T types.Type }

func (n *NullKey) Type() types.Type { return n.T }
func (n *NullKey) Eval(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return types.NullDatum, nil
}

// keyCompatible reports whether a value of type v encodes as a key of
// column type c: the same type, or integers of any width (keys hold
// them as 64-bit values).
func keyCompatible(c, v types.Type) bool {
	if c.OID == v.OID {
		return true
	}
	return isIntKey(c) && isIntKey(v)
}

func isIntKey(t types.Type) bool {
	return types.CategoryOf(t) == types.CatInt && t.OID != types.OIDOid
}

// orderedKey reports whether keys of type t sort as its values do, so a
// range of values is a range of keys (catalog.AppendKey): integers,
// booleans, date and time types, floats and C-ordered strings. Numeric
// and blank-padded char keys are not.
func orderedKey(t types.Type) bool {
	switch types.CategoryOf(t) {
	case types.CatInt:
		return t.OID != types.OIDXid
	case types.CatBool, types.CatDatetime, types.CatFloat:
		return true
	}
	return t.OID == types.OIDText || t.OID == types.OIDVarchar
}

// tableColumn is the colFunc for expressions over a table's row starting
// at off with n user columns: a column, or an implicit widening of an
// integer column or varchar-as-text (the comparison is then still the
// column's own operator family, as PostgreSQL's index matching allows).
func tableColumn(cols []types.Column, off, n int) colFunc {
	return func(e expr.Expr) (int, types.Type, bool) {
		if c, ok := e.(*expr.CastExpr); ok {
			if c.Explicit {
				return 0, types.Type{}, false
			}
			from, to := c.Arg.Type(), c.T
			switch {
			case isIntKey(from) && isIntKey(to):
			case from.OID == types.OIDVarchar && to.OID == types.OIDText:
			default:
				return 0, types.Type{}, false
			}
			e = c.Arg
		}
		c, ok := e.(*expr.ColExpr)
		if !ok || c.I < off || c.I >= off+n {
			return 0, types.Type{}, false
		}
		return c.I - off, cols[c.I-off].Type, true
	}
}

// indexChoice is one index and how much of its key the conditions pin.
type indexChoice struct {
	ix    *catalog.IndexDef
	neq   int  // leading columns pinned by equality
	in    bool // the next column by an IN list
	rng   bool // the next column by a range
	exact bool // every column by equality
	null  bool // a column by IS NULL
}

// rank orders choices: an exact lookup of a unique index finds at most
// one row and beats everything; then the more columns pinned the better,
// an IN list narrowing more than a range.
func (c indexChoice) rank() int {
	if c.exact && c.ix.Unique && !c.null {
		return 1 << 20
	}
	r := c.neq * 4
	switch {
	case c.exact:
		r += 3
	case c.in:
		r += 2
	case c.rng:
		r++
	}
	return r
}

// chooseIndex makes ts an index scan of the index its conditions pin
// best, if any, and returns the columns whose conditions it used. Until
// the planner weighs costs, a range on the first key column alone is used
// only when it is bounded on both sides.
func (ts *TableSource) chooseIndex(cat *catalog.CatalogState, cs condSet) []int {
	ts.conds = cs
	if len(cs) == 0 {
		return nil
	}
	ixs := cat.TableIndexes(ts.T)
	sort.SliceStable(ixs, func(i, j int) bool { return ixs[i].Unique && !ixs[j].Unique })
	var best indexChoice
	for _, ix := range ixs {
		ch := pinned(ix, cs)
		if ch.neq == 0 && !ch.in && !ch.rng {
			continue
		}
		if best.ix == nil || ch.rank() > best.rank() {
			best = ch
		}
	}
	if best.ix == nil {
		return nil
	}
	return ts.useChoice(best, cs)
}

// pinned is how much of ix's key the conditions cs pin.
func pinned(ix *catalog.IndexDef, cs condSet) indexChoice {
	ch := indexChoice{ix: ix}
	for ch.neq < len(ix.Cols) {
		cc := cs[ix.Cols[ch.neq]]
		if cc == nil || cc.eq == nil {
			break
		}
		if _, ok := cc.eq.(*NullKey); ok {
			ch.null = true
		}
		ch.neq++
	}
	if ch.neq == len(ix.Cols) {
		ch.exact = true
	} else if cc := cs[ix.Cols[ch.neq]]; cc != nil {
		switch {
		case cc.in != nil || cc.inArr != nil:
			ch.in = true
		case cc.lo != nil && cc.hi != nil, ch.neq > 0 && (cc.lo != nil || cc.hi != nil):
			ch.rng = true
		}
	}
	return ch
}

// useChoice makes ts a scan of ch's index with the conditions of cs it
// uses, and returns their columns.
func (ts *TableSource) useChoice(ch indexChoice, cs condSet) []int {
	ts.Index, ts.Bitmap = ch.ix, nil
	ts.KeyArgs, ts.KeyTyps = nil, nil
	ts.InArgs, ts.InArr, ts.Lo, ts.Hi, ts.NotNull = nil, nil, nil, nil, false
	ts.keysReadLevel = false
	var used []int
	for i := 0; i < ch.neq; i++ {
		c := ch.ix.Cols[i]
		cc := cs[c]
		ts.KeyArgs = append(ts.KeyArgs, cc.eq)
		ts.KeyTyps = append(ts.KeyTyps, ts.cols[c].Type)
		ts.keysReadLevel = ts.keysReadLevel || cc.eqJoin
		used = append(used, c)
	}
	if ch.in || ch.rng {
		c := ch.ix.Cols[ch.neq]
		cc := cs[c]
		ts.NextTyp = ts.cols[c].Type
		if ch.in {
			ts.InArgs, ts.InArr = cc.in, cc.inArr
		} else {
			ts.Lo, ts.LoIncl, ts.Hi, ts.HiIncl = cc.lo, cc.loIncl, cc.hi, cc.hiIncl
			ts.NotNull = cc.notNull
		}
		used = append(used, c)
	}
	return used
}

// ExactLookup reports whether the index scan pins every key column by
// equality: one key is looked up.
func (ts *TableSource) ExactLookup() bool {
	return ts.Index != nil && len(ts.KeyArgs) == len(ts.Index.Cols)
}
