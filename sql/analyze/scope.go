package analyze

import (
	"lockd/pgerr"
	"lockd/sql/catalog"
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

// Name resolution. A query level's FROM clause yields one row per
// combination of its items' rows: each item's columns occupy a fixed range
// of that level row (its offset and width), items in the order they
// appear in the FROM clause, depth first, so every join subtree covers a
// contiguous range. Column references compile to reads of that row; a
// reference to an enclosing query level compiles to a read of that
// level's current row, which the executor pushes on evalCtx.outer before
// running a subquery (PostgreSQL's PARAM_EXEC outer references).

// nsColumn is a column visible by name at one query level.
type NsColumn struct {
	Name string
	E    expr.Expr    // reads the column from the level row
	Meta types.Column // name, type, table OID and attnum for RowDescription
	Item int          // the FROM item it belongs to (-1 for merged join columns)
}

// nsRel is a name that can qualify columns: a table, view, function or
// subquery alias, or the alias of a join.
type NsRel struct {
	Alias string
	Cols  []NsColumn        // all columns (user columns first)
	Star  int               // how many of cols `*` expands to (system columns follow)
	Item  int               // FROM item index, or -1 for a join alias
	Table *catalog.TableDef // base table, for FOR UPDATE and functional dependency
}

// scope is one query level's namespace.
type Scope struct {
	Rels   []*NsRel
	Unqual []NsColumn // columns visible unqualified (duplicates are ambiguous)
	Star   []NsColumn // what * expands to
	Width  int        // width of the level row
	Parent *Scope
	// correlated is set when an expression of this level (or of a
	// subquery inside it) reads an enclosing level's row: a subquery
	// whose scope is correlated is re-run for each outer row, others run
	// once per execution (PostgreSQL's initplans).
	Correlated bool
	// visLo and visHi limit which FROM items are visible while a part of
	// the FROM clause is analysed: a JOIN's ON clause sees only the items
	// of that join, a LATERAL item only the items before it. visHi < 0
	// means no upper limit.
	VisLo, VisHi int
	// hidden is a sibling level this one may not read (see
	// analyzer.hiddenSc); only error hints look at it.
	Hidden *Scope
	// Merged marks the names of a subquery whose FROM items the planner
	// pulled up into its parent's level (PostgreSQL's pull_up_sublinks:
	// EXISTS and IN become semi joins): its own names are looked up
	// first, then the parent's, and both are columns of the same level
	// row (depth 0).
	Merged bool
	// Rec, when set, receives every reference to an enclosing level's
	// column made from this scope or any scope nested in it (scopes
	// inherit their parent's recorder): what a correlated subquery reads
	// of the rows around it (sublink.go keys its result on them).
	Rec *[]OuterRef
}

// OuterRef is a reference to column E of the level whose scope is Owner,
// made from a scope nested in it. Owner nil marks what makes a subquery's
// result depend on more than its outer references (a volatile function,
// a correlated WITH query it reads).
type OuterRef struct {
	Owner *Scope
	E     expr.Expr
}

func NewScope(parent *Scope) *Scope {
	sc := &Scope{Parent: parent, VisHi: -1}
	if parent != nil {
		sc.Rec = parent.Rec
	} else {
		sc.Rec = new([]OuterRef)
	}
	return sc
}

// Record notes r in the recorder of sc's statement, if it keeps one.
func (sc *Scope) Record(r OuterRef) {
	if sc != nil && sc.Rec != nil {
		*sc.Rec = append(*sc.Rec, r)
	}
}

// Distance is how many query levels above sc's the level of scope x is
// (merged scopes belong to their parent's level); ok is false when x
// does not enclose sc.
func (sc *Scope) Distance(x *Scope) (int, bool) {
	d := 0
	for s := sc; s != nil; s = s.Parent {
		if s == x {
			return d, true
		}
		if !s.Merged {
			d++
		}
	}
	return 0, false
}

func (sc *Scope) visible(item int) bool {
	return item < 0 || item >= sc.VisLo && (sc.VisHi < 0 || item < sc.VisHi)
}

// lookupColumn resolves [qualifier.]name through sc and its parents. It
// returns the compiled reference, the column's metadata, and the depth
// (0 = this level).
func (sc *Scope) LookupColumn(qual, name string, loc int32) (expr.Expr, types.Column, int, error) {
	depth := 0
	for s := sc; s != nil; s = s.Parent {
		e, meta, found, err := s.lookupHere(qual, name, loc)
		if err != nil {
			return nil, types.Column{}, 0, err
		}
		if found {
			if c, ok := e.(*expr.ColExpr); ok && loc >= 0 {
				ref := *c // each reference remembers where it stood
				ref.Loc = loc + 1
				e = &ref
			}
			if depth > 0 {
				// Every scope from here up to (not including) the one
				// that owns the column depends on an enclosing row.
				for c := sc; c != s; c = c.Parent {
					c.Correlated = true
				}
				sc.Record(OuterRef{Owner: s, E: e})
				e = &expr.OuterExpr{Depth: depth, E: e}
			}
			return e, meta, depth, nil
		}
		if !s.Merged {
			depth++
		}
	}
	if qual != "" {
		if sc.findRelAnyLevel(qual) {
			e := pgerr.New(pgerr.UndefinedColumn, "column %s.%s does not exist", qual, name)
			return nil, types.Column{}, 0, expr.PosErr(sc.columnHint(e, qual, name), loc)
		}
		return nil, types.Column{}, 0, expr.PosErr(sc.missingRel(qual), loc)
	}
	e := pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", name)
	return nil, types.Column{}, 0, expr.PosErr(sc.columnHint(e, "", name), loc)
}

// maxFuzzyDistance bounds the edit distance of a column PostgreSQL
// suggests for a misspelt one (MAX_FUZZY_DISTANCE).
const maxFuzzyDistance = 3

// columnHint adds PostgreSQL's hint to a missing-column error: a column
// of that name exists where it may not be referenced, or one or two
// columns are spelt nearly the same (searchRangeTableForCol).
func (sc *Scope) columnHint(e *pgerr.Error, qual, name string) *pgerr.Error {
	type match struct{ rel, col string }
	best := maxFuzzyDistance + 1
	var first, second *match
	for s := sc; s != nil; s = s.Parent {
		for _, r := range s.Rels {
			if r.Item < 0 || r.Alias == "" {
				continue // join aliases duplicate their members
			}
			penalty := 0
			if qual != "" {
				penalty = levenshtein(qual, r.Alias)
			}
			for i, c := range r.Cols {
				if c.Name == name && i < r.Star {
					if !s.visible(r.Item) {
						return e.WithHint("There is a column named \"" + name + "\" in table \"" + r.Alias + "\", but it cannot be referenced from this part of the query.")
					}
					continue
				}
				if i >= r.Star || penalty > best {
					continue
				}
				d := levenshtein(c.Name, name)
				if d > len(name)/2 {
					continue
				}
				d += penalty
				switch {
				case d < best:
					best, first, second = d, &match{r.Alias, c.Name}, nil
				case d == best && first != nil && second == nil:
					second = &match{r.Alias, c.Name}
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

func (sc *Scope) findRelAnyLevel(qual string) bool {
	for s := sc; s != nil; s = s.Parent {
		for _, r := range s.Rels {
			if r.Alias == qual && s.visible(r.Item) {
				return true
			}
		}
	}
	return false
}

func (sc *Scope) lookupHere(qual, name string, loc int32) (expr.Expr, types.Column, bool, error) {
	if qual != "" {
		var rel *NsRel
		for _, r := range sc.Rels {
			if r.Alias == qual && sc.visible(r.Item) {
				if rel != nil {
					return nil, types.Column{}, false, expr.PosErr(pgerr.New(pgerr.AmbiguousAlias, "table reference \"%s\" is ambiguous", qual), loc)
				}
				rel = r
			}
		}
		if rel == nil {
			return nil, types.Column{}, false, nil
		}
		for _, c := range rel.Cols {
			if c.Name == name {
				return c.E, c.Meta, true, nil
			}
		}
		e := pgerr.New(pgerr.UndefinedColumn, "column %s.%s does not exist", qual, name)
		return nil, types.Column{}, false, expr.PosErr(sc.columnHint(e, qual, name), loc)
	}
	var found *NsColumn
	for i := range sc.Unqual {
		c := &sc.Unqual[i]
		if c.Name != name || !sc.visible(c.Item) {
			continue
		}
		if found != nil {
			return nil, types.Column{}, false, expr.PosErr(pgerr.New(pgerr.AmbiguousColumn, "column reference \"%s\" is ambiguous", name), loc)
		}
		found = c
	}
	if found == nil {
		return nil, types.Column{}, false, nil
	}
	return found.E, found.Meta, true, nil
}

// relByAlias finds a qualifier at this level.
func (sc *Scope) RelByAlias(alias string) *NsRel {
	for _, r := range sc.Rels {
		if r.Alias == alias && sc.visible(r.Item) {
			return r
		}
	}
	return nil
}

// missingRel is the error for a qualifier that names no visible FROM
// item, with PostgreSQL's hints: the item exists but may not be
// referenced here (a JOIN's ON clause, a non-LATERAL subquery), or the
// table was given an alias.
func (sc *Scope) missingRel(qual string) *pgerr.Error {
	for s := sc; s != nil; s = s.Parent {
		rels := s.Rels
		if s.Hidden != nil {
			rels = append(append([]*NsRel(nil), rels...), s.Hidden.Rels...)
		}
		for _, r := range rels {
			if r.Alias == qual {
				return pgerr.New(pgerr.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", qual).
					WithHint("There is an entry for table \"" + qual + "\", but it cannot be referenced from this part of the query.")
			}
		}
	}
	for s := sc; s != nil; s = s.Parent {
		for _, r := range s.Rels {
			if r.Table != nil && r.Table.Name == qual && r.Alias != "" && s.visible(r.Item) {
				return pgerr.New(pgerr.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", qual).
					WithHint("Perhaps you meant to reference the table alias \"" + r.Alias + "\".")
			}
		}
	}
	return pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", qual)
}
