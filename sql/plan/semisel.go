package plan

import (
	"math"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// Selectivity of semi and anti joins (selfuncs.c's eqjoinsel_semi and
// eqjoinsel_inner, neqjoinsel): a semi join keeps the fraction of the
// outer rows that have at least one match, an anti join the rest; a
// join's rows are the outer side's times that fraction, whatever the
// inner side's size (costsize.c's calc_joinrel_size_estimate).

// keySide is what eqjoinsel knows of one side of an equality: the
// column's distinct values (nd, and whether that is a guess), its NULL
// fraction and most common values, and the rows its relation gives
// after its own conditions.
type keySide struct {
	nd        float64
	isDefault bool
	nullFrac  float64
	hasStats  bool
	mcv       []types.Datum
	freq      []float64
	typ       types.Type
	relRows   float64 // 0: not one relation's column
	tuples    float64 // its relation's rows before its conditions
}

// keySide examines join key e (examine_variable and
// get_variable_numdistinct): a column of a table item, or an
// expression (PostgreSQL's default of 200 distinct values, or the
// table's rows if fewer, for one reading a single table).
func (fb *fromBuilder) keySide(e expr.Expr) keySide {
	k := keySide{typ: e.Type(), nd: defaultNumDistinct, isDefault: true}
	if ri, c, ok := fb.keyColumn(e); ok {
		cs := ri.colStats(c)
		k.nd, k.isDefault = ri.ndistinct(c), ri.ndDefault(c)
		k.relRows, k.tuples = fb.itemRows(e), ri.size.tuples
		if cs != nil {
			k.hasStats = true
			k.nullFrac = cs.NullFrac
			k.mcv, k.freq = cs.MCV, cs.MCVFreq
		}
		return k
	}
	m, opaque := expr.ExprRefs(e, fb.itemOf)
	if opaque || m == 0 || m&(m-1) != 0 {
		return k
	}
	for _, l := range fb.leaves {
		if l.mask() != m {
			continue
		}
		if ri := fb.relInfo(l); ri != nil && ri.size.tuples > 0 {
			k.relRows, k.tuples = fb.leafRows(l), ri.size.tuples
			if ri.size.tuples < defaultNumDistinct {
				k.nd, k.isDefault = clampRows(ri.size.tuples), false
			}
		}
	}
	return k
}

// ndDefault reports whether ndistinct(c) is PostgreSQL's guess rather
// than known (get_variable_numdistinct's isdefault).
func (ri *relInfo) ndDefault(c int) bool {
	if ri.unique[c] || ri.t.Cols[c].TypeOID == types.OIDBool {
		return false
	}
	if cs := ri.colStats(c); cs != nil && cs.NDistinct != 0 {
		return false
	}
	return ri.size.tuples >= defaultNumDistinct
}

// itemRows is the rows the table item key column e belongs to gives
// after its own conditions (vardata->rel->rows).
func (fb *fromBuilder) itemRows(e expr.Expr) float64 {
	if c, ok := e.(*expr.CastExpr); ok && !c.Explicit {
		e = c.Arg
	}
	col, ok := e.(*expr.ColExpr)
	if !ok || col.I >= len(fb.itemOf) || fb.itemOf[col.I] < 0 {
		return 0
	}
	return fb.leafRows(fb.leaves[fb.itemOf[col.I]])
}

// eqjoinselInner is eqjoinsel_inner: the fraction of the cross product
// of two relations that l = r keeps, from their most common values where
// both have them.
func eqjoinselInner(l, r keySide) float64 {
	if len(l.mcv) > 0 && len(r.mcv) > 0 {
		cmp := comparatorOf(l.typ)
		match1 := make([]bool, len(l.mcv))
		match2 := make([]bool, len(r.mcv))
		var matchProd, matchFreq1, matchFreq2 float64
		nmatches := 0
		for i, v := range l.mcv {
			for j, w := range r.mcv {
				if match2[j] || cmp(v, w) != 0 {
					continue
				}
				match1[i], match2[j] = true, true
				matchProd += l.freq[i] * r.freq[j]
				matchFreq1 += l.freq[i]
				matchFreq2 += r.freq[j]
				nmatches++
				break
			}
		}
		matchProd = clampProb(matchProd)
		var unmatch1, unmatch2 float64
		for i := range l.mcv {
			if !match1[i] {
				unmatch1 += l.freq[i]
			}
		}
		for j := range r.mcv {
			if !match2[j] {
				unmatch2 += r.freq[j]
			}
		}
		other1 := clampProb(1 - l.nullFrac - matchFreq1 - clampProb(unmatch1))
		other2 := clampProb(1 - r.nullFrac - matchFreq2 - clampProb(unmatch2))
		unmatch1, unmatch2 = clampProb(unmatch1), clampProb(unmatch2)
		tot1 := matchProd
		if r.nd > float64(len(r.mcv)) {
			tot1 += unmatch1 * other2 / (r.nd - float64(len(r.mcv)))
		}
		if r.nd > float64(nmatches) {
			tot1 += other1 * (other2 + unmatch2) / (r.nd - float64(nmatches))
		}
		tot2 := matchProd
		if l.nd > float64(len(l.mcv)) {
			tot2 += unmatch2 * other1 / (l.nd - float64(len(l.mcv)))
		}
		if l.nd > float64(nmatches) {
			tot2 += other2 * (other1 + unmatch1) / (l.nd - float64(nmatches))
		}
		return math.Min(tot1, tot2)
	}
	s := (1 - l.nullFrac) * (1 - r.nullFrac)
	return s / math.Max(l.nd, r.nd)
}

// eqjoinselSemi is eqjoinsel_semi: the fraction of the outer relation's
// rows (side l) with at least one match among inner rows (side r) of
// which the inner side of the join gives innerRows.
func eqjoinselSemi(l, r keySide, innerRows float64) float64 {
	nd1, nd2 := l.nd, r.nd
	def1, def2 := l.isDefault, r.isDefault
	// no more distinct values than the inner relation's rows: the only
	// way the inner side's own conditions reach the estimate
	if r.relRows > 0 && nd2 >= r.relRows {
		nd2, def2 = r.relRows, false
	}
	if nd2 >= innerRows {
		nd2, def2 = innerRows, false
	}
	if len(l.mcv) > 0 && len(r.mcv) > 0 {
		cmp := comparatorOf(l.typ)
		n2 := int(math.Min(float64(len(r.mcv)), nd2))
		match2 := make([]bool, n2)
		matchFreq1 := 0.0
		nmatches := 0
		for i, v := range l.mcv {
			for j := 0; j < n2; j++ {
				if match2[j] || cmp(v, r.mcv[j]) != 0 {
					continue
				}
				match2[j] = true
				matchFreq1 += l.freq[i]
				nmatches++
				break
			}
		}
		matchFreq1 = clampProb(matchFreq1)
		uncertainFrac := 0.5
		if !def1 && !def2 {
			nd1 -= float64(nmatches)
			nd2 -= float64(nmatches)
			if nd1 <= nd2 || nd2 < 0 {
				uncertainFrac = 1
			} else {
				uncertainFrac = nd2 / nd1
			}
		}
		uncertain := clampProb(1 - matchFreq1 - l.nullFrac)
		return matchFreq1 + uncertainFrac*uncertain
	}
	if !def1 && !def2 {
		if nd1 <= nd2 || nd2 < 0 {
			return 1 - l.nullFrac
		}
		return nd2 / nd1 * (1 - l.nullFrac)
	}
	return 0.5 * (1 - l.nullFrac)
}

// semiSel is the selectivity of a semi or anti join's conditions: the
// fraction of outer rows with a match (jsel, clauselist_selectivity
// with JOIN_SEMI) and the fraction of the cross product that matches
// (nsel, with JOIN_INNER), for an inner side of innerRows rows. lkeys
// and rkeys are its equalities' outer and inner sides; other its
// remaining conditions.
func (fb *fromBuilder) semiSel(lkeys, rkeys, other []expr.Expr, innerRows float64) (jsel, nsel float64) {
	jsel, nsel = 1, 1
	for i := range lkeys {
		l, r := fb.keySide(lkeys[i]), fb.keySide(rkeys[i])
		inner := eqjoinselInner(l, r)
		// never more rows than an inner join of the same inputs would give
		jsel *= math.Min(eqjoinselSemi(l, r, innerRows), innerRows*inner)
		nsel *= inner
	}
	for _, c := range other {
		j, n := fb.otherJoinSel(c)
		jsel *= j
		nsel *= n
	}
	return clampProb(jsel), clampProb(nsel)
}

// otherJoinSel is the selectivity of a join condition that is not a key
// equality, for a semi join and for an inner one: x <> y keeps every
// outer row whose x is not NULL in a semi join (neqjoinsel), a range
// comparison a third; anything else the default.
func (fb *fromBuilder) otherJoinSel(c expr.Expr) (semi, inner float64) {
	if b, ok := c.(*expr.BinopExpr); ok {
		switch b.Op {
		case "<>", "!=":
			l, r := fb.keySide(b.L), fb.keySide(b.R)
			return 1 - l.nullFrac, clampProb(1 - eqjoinselInner(l, r) - l.nullFrac)
		case "=":
			l, r := fb.keySide(b.L), fb.keySide(b.R)
			in := eqjoinselInner(l, r)
			return in, in
		}
	}
	return defaultIneqSel, defaultIneqSel
}

// semiFactors are costsize.c's SemiAntiJoinFactors: the fraction of
// outer rows that have a match, and how many matches such a row has on
// average.
type semiFactors struct {
	matchFrac, matchCount float64
}

func newSemiFactors(jsel, nsel, innerRows float64) semiFactors {
	sf := semiFactors{matchFrac: jsel, matchCount: 1}
	if jsel > 0 {
		sf.matchCount = math.Max(1, nsel*innerRows/jsel)
	}
	return sf
}
