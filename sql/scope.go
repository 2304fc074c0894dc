package sql

import (
	"lockd/pgerr"
)

// Name resolution. A query level's FROM clause yields one row per
// combination of its items' rows: each item's columns occupy a fixed range
// of that level row (its offset and width), items in the order they
// appear in the FROM clause, depth first, so every join subtree covers a
// contiguous range. Column references compile to reads of that row; a
// reference to an enclosing query level compiles to a read of that
// level's current row, which the executor pushes on evalCtx.outer before
// running a subquery (PostgreSQL's PARAM_EXEC outer references).

// nsColumn is a column visible by name at one query level.
type nsColumn struct {
	name string
	e    expr   // reads the column from the level row
	meta Column // name, type, table OID and attnum for RowDescription
	item int    // the FROM item it belongs to (-1 for merged join columns)
}

// nsRel is a name that can qualify columns: a table, view, function or
// subquery alias, or the alias of a join.
type nsRel struct {
	alias string
	cols  []nsColumn // all columns (user columns first)
	star  int        // how many of cols `*` expands to (system columns follow)
	item  int        // FROM item index, or -1 for a join alias
	table *TableDef  // base table, for FOR UPDATE and functional dependency
}

// scope is one query level's namespace.
type scope struct {
	rels   []*nsRel
	unqual []nsColumn // columns visible unqualified (duplicates are ambiguous)
	star   []nsColumn // what * expands to
	width  int        // width of the level row
	parent *scope
	// correlated is set when an expression of this level (or of a
	// subquery inside it) reads an enclosing level's row: a subquery
	// whose scope is correlated is re-run for each outer row, others run
	// once per execution (PostgreSQL's initplans).
	correlated bool
	// visLo and visHi limit which FROM items are visible while a part of
	// the FROM clause is analysed: a JOIN's ON clause sees only the items
	// of that join, a LATERAL item only the items before it. visHi < 0
	// means no upper limit.
	visLo, visHi int
	// hidden is a sibling level this one may not read (see
	// analyzer.hiddenSc); only error hints look at it.
	hidden *scope
}

func newScope(parent *scope) *scope { return &scope{parent: parent, visHi: -1} }

func (sc *scope) visible(item int) bool {
	return item < 0 || item >= sc.visLo && (sc.visHi < 0 || item < sc.visHi)
}

// outerExpr reads an expression of an enclosing level's row: depth 1 is
// the level directly enclosing the one being evaluated.
type outerExpr struct {
	depth int
	e     expr
}

func (o *outerExpr) typ() Type { return o.e.typ() }
func (o *outerExpr) eval(ec *evalCtx, _ []Datum) (Datum, error) {
	n := len(ec.outer) - o.depth
	if n < 0 {
		return Datum{}, pgerr.New(pgerr.InternalError, "outer reference evaluated without its row")
	}
	return o.e.eval(ec, ec.outer[n])
}

// lookupColumn resolves [qualifier.]name through sc and its parents. It
// returns the compiled reference, the column's metadata, and the depth
// (0 = this level).
func (sc *scope) lookupColumn(qual, name string, loc int32) (expr, Column, int, error) {
	depth := 0
	for s := sc; s != nil; s = s.parent {
		e, meta, found, err := s.lookupHere(qual, name, loc)
		if err != nil {
			return nil, Column{}, 0, err
		}
		if found {
			if c, ok := e.(*colExpr); ok && loc >= 0 {
				ref := *c // each reference remembers where it stood
				ref.loc = loc + 1
				e = &ref
			}
			if depth > 0 {
				// Every level from here up to (not including) the one
				// that owns the column depends on an enclosing row.
				for c, d := sc, 0; d < depth; c, d = c.parent, d+1 {
					c.correlated = true
				}
				e = &outerExpr{depth: depth, e: e}
			}
			return e, meta, depth, nil
		}
		depth++
	}
	if qual != "" {
		if sc.findRelAnyLevel(qual) {
			e := pgerr.New(pgerr.UndefinedColumn, "column %s.%s does not exist", qual, name)
			return nil, Column{}, 0, posErr(sc.columnHint(e, qual, name), loc)
		}
		return nil, Column{}, 0, posErr(sc.missingRel(qual), loc)
	}
	e := pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", name)
	return nil, Column{}, 0, posErr(sc.columnHint(e, "", name), loc)
}

// maxFuzzyDistance bounds the edit distance of a column PostgreSQL
// suggests for a misspelt one (MAX_FUZZY_DISTANCE).
const maxFuzzyDistance = 3

// columnHint adds PostgreSQL's hint to a missing-column error: a column
// of that name exists where it may not be referenced, or one or two
// columns are spelt nearly the same (searchRangeTableForCol).
func (sc *scope) columnHint(e *pgerr.Error, qual, name string) *pgerr.Error {
	type match struct{ rel, col string }
	best := maxFuzzyDistance + 1
	var first, second *match
	for s := sc; s != nil; s = s.parent {
		for _, r := range s.rels {
			if r.item < 0 || r.alias == "" {
				continue // join aliases duplicate their members
			}
			penalty := 0
			if qual != "" {
				penalty = levenshtein(qual, r.alias)
			}
			for i, c := range r.cols {
				if c.name == name && i < r.star {
					if !s.visible(r.item) {
						return e.WithHint("There is a column named \"" + name + "\" in table \"" + r.alias + "\", but it cannot be referenced from this part of the query.")
					}
					continue
				}
				if i >= r.star || penalty > best {
					continue
				}
				d := levenshtein(c.name, name)
				if d > len(name)/2 {
					continue
				}
				d += penalty
				switch {
				case d < best:
					best, first, second = d, &match{r.alias, c.name}, nil
				case d == best && first != nil && second == nil:
					second = &match{r.alias, c.name}
				case d == best && second != nil:
					best, first, second = d-1, nil, nil // too many at this distance
				}
			}
		}
	}
	switch {
	case first != nil && second != nil:
		return e.WithHint("Perhaps you meant to reference the column \"" + first.rel + "." + first.col + "\" or the column \"" + second.rel + "." + second.col + "\".")
	case first != nil:
		return e.WithHint("Perhaps you meant to reference the column \"" + first.rel + "." + first.col + "\".")
	}
	return e
}

// levenshtein is the edit distance with unit costs.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (sc *scope) findRelAnyLevel(qual string) bool {
	for s := sc; s != nil; s = s.parent {
		for _, r := range s.rels {
			if r.alias == qual && s.visible(r.item) {
				return true
			}
		}
	}
	return false
}

func (sc *scope) lookupHere(qual, name string, loc int32) (expr, Column, bool, error) {
	if qual != "" {
		var rel *nsRel
		for _, r := range sc.rels {
			if r.alias == qual && sc.visible(r.item) {
				if rel != nil {
					return nil, Column{}, false, posErr(pgerr.New(pgerr.AmbiguousAlias, "table reference \"%s\" is ambiguous", qual), loc)
				}
				rel = r
			}
		}
		if rel == nil {
			return nil, Column{}, false, nil
		}
		for _, c := range rel.cols {
			if c.name == name {
				return c.e, c.meta, true, nil
			}
		}
		e := pgerr.New(pgerr.UndefinedColumn, "column %s.%s does not exist", qual, name)
		return nil, Column{}, false, posErr(sc.columnHint(e, qual, name), loc)
	}
	var found *nsColumn
	for i := range sc.unqual {
		c := &sc.unqual[i]
		if c.name != name || !sc.visible(c.item) {
			continue
		}
		if found != nil {
			return nil, Column{}, false, posErr(pgerr.New(pgerr.AmbiguousColumn, "column reference \"%s\" is ambiguous", name), loc)
		}
		found = c
	}
	if found == nil {
		return nil, Column{}, false, nil
	}
	return found.e, found.meta, true, nil
}

// relByAlias finds a qualifier at this level.
func (sc *scope) relByAlias(alias string) *nsRel {
	for _, r := range sc.rels {
		if r.alias == alias && sc.visible(r.item) {
			return r
		}
	}
	return nil
}

// missingRel is the error for a qualifier that names no visible FROM
// item, with PostgreSQL's hints: the item exists but may not be
// referenced here (a JOIN's ON clause, a non-LATERAL subquery), or the
// table was given an alias.
func (sc *scope) missingRel(qual string) *pgerr.Error {
	for s := sc; s != nil; s = s.parent {
		rels := s.rels
		if s.hidden != nil {
			rels = append(append([]*nsRel(nil), rels...), s.hidden.rels...)
		}
		for _, r := range rels {
			if r.alias == qual {
				return pgerr.New(pgerr.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", qual).
					WithHint("There is an entry for table \"" + qual + "\", but it cannot be referenced from this part of the query.")
			}
		}
	}
	for s := sc; s != nil; s = s.parent {
		for _, r := range s.rels {
			if r.table != nil && r.table.Name == qual && r.alias != "" && s.visible(r.item) {
				return pgerr.New(pgerr.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", qual).
					WithHint("Perhaps you meant to reference the table alias \"" + r.alias + "\".")
			}
		}
	}
	return pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", qual)
}
