package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// cteSource scans a CTE by name in FROM; inside the CTE's own recursive
// term it scans the previous iteration's rows.
type CteSource struct {
	Def   *analyze.CteDef
	alias string
	Self  bool // the recursive reference
}

func (c *CteSource) columns() []types.Column { return c.Def.Cols }

// subquerySource is a subquery in FROM.
type SubquerySource struct {
	alias string
	cols  []types.Column
	Plan  *SelectPlan
}

func (q *SubquerySource) columns() []types.Column { return q.cols }

// levelScanner is a source whose scan reads the level row: a function in
// FROM with arguments over earlier items, or an index lookup keyed by
// them.
type LevelScanner interface {
	readsLevel() bool
}

// rowSource is a relation in FROM. Virtual (system view) sources
// materialise their rows when scanned. A row passed to fn is valid only
// during the call.
type RowSource interface {
	columns() []types.Column
}

// seqSource scans a sequence: its one row.
type SeqSource struct {
	Q     *catalog.SequenceDef
	alias string
	cols  []types.Column
}

func (q *SeqSource) columns() []types.Column { return q.cols }

// Set operations (UNION, INTERSECT, EXCEPT, each with ALL) and VALUES
// lists. Each becomes a plan over a single source producing its rows, so
// ORDER BY, LIMIT and OFFSET on the result work as for any query.

type SetopSource struct {
	Op          pg.SetOperation
	All         bool
	Left, Right *SelectPlan
	Cols        []types.Column
	Casts       [2][]expr.Expr // per branch: output column i cast to the common type (nil = as is)
}

func (u *SetopSource) columns() []types.Column { return u.Cols }

// valuesSource is a VALUES list.
type ValuesSource struct {
	Cols []types.Column
	Rows [][]expr.Expr
}

func (v *ValuesSource) columns() []types.Column { return v.Cols }

// funcSource is a function call in FROM: a set-returning function, or any
// scalar function (one row). Its arguments may read earlier FROM items
// (functions in FROM are implicitly LATERAL).
type FuncSource struct {
	alias      string
	Cols       []types.Column
	Srf        *expr.SrfExpr
	Scalar     expr.Expr
	Ordinality bool
	level      bool // arguments read the level row
}

func (f *FuncSource) columns() []types.Column { return f.Cols }
func (f *FuncSource) readsLevel() bool        { return f.level }

// tableSource scans a user table, or reads it through an index when the
// WHERE clause (or a join) pins the index's leading columns. Its rows hold the
// table's columns followed by the system columns ctid and tableoid.
type TableSource struct {
	T     *catalog.TableDef
	alias string
	cols  []types.Column
	Defs  []catalog.ColumnDef
	// index scan (indexpath.go): when Index is set, only the tuples its
	// entries point to are read: those whose leading key columns equal
	// KeyArgs and whose next column (of type NextTyp) is one of InArgs
	// (or of the array InArr), or lies between Lo and Hi (and is not NULL)
	Index          *catalog.IndexDef
	KeyArgs        []expr.Expr
	KeyTyps        []types.Type
	InArgs         []expr.Expr
	InArr          expr.Expr
	Lo, Hi         expr.Expr
	LoIncl, HiIncl bool
	NextTyp        types.Type
	NotNull        bool // the range excludes NULLs even unbounded (IS NOT NULL)
	Backward       bool // entries in descending key order
	// IndexOnly: the scan answers from the index entries, reading a heap
	// tuple only where the visibility map does not vouch for its page
	// (indexonly.go)
	IndexOnly bool
	// Bitmap (Index nil): a Bitmap Heap Scan over the tuple ids of this
	// tree of index scans (bitmap.go)
	Bitmap *BitmapNode
	// the scan decodes only the first decodeN columns of each row when
	// partial (decode.go): the query reads none after them
	partial bool
	decodeN int
	need    []bool // the columns the query reads
	needSys bool   // the query reads a system column (ctid, tableoid)
	// conds are the conditions on the table's columns the index choice
	// saw (indexpath.go), kept for choosing an index by the order it
	// gives (ordered.go)
	conds condSet
	// keysReadLevel: keyArgs read other FROM items of the level row (an
	// index nested loop)
	keysReadLevel bool
}

// System columns every table row carries after its own columns, with
// PostgreSQL's attribute numbers.
const (
	SysColCtid     = 0
	SysColTableoid = 1
	NumSysCols     = 2
)

func (ts *TableSource) columns() []types.Column { return ts.cols }
func (ts *TableSource) readsLevel() bool        { return ts.keysReadLevel }

// DecodeLen is how many leading columns of each row the scan decodes.
func (ts *TableSource) DecodeLen() int {
	if ts.partial {
		return ts.decodeN
	}
	return len(ts.Defs)
}

func NewTableSource(t *catalog.TableDef, alias string) *TableSource {
	ts := &TableSource{T: t, alias: alias, Defs: t.Cols}
	for i := range t.Cols {
		ts.cols = append(ts.cols, types.Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type(), TableOID: t.OID, Attnum: t.Attnum(i)})
	}
	ts.cols = append(ts.cols,
		types.Column{Name: "ctid", Type: types.TypeTid, TableOID: t.OID, Attnum: -1},
		types.Column{Name: "tableoid", Type: types.TypeOid, TableOID: t.OID, Attnum: -6})
	return ts
}

// excludedSource is ON CONFLICT DO UPDATE's excluded: the row proposed
// for insertion, with the target's columns and no system columns.
type ExcludedSource struct{ cols []types.Column }

func (e *ExcludedSource) columns() []types.Column { return e.cols }

type ViewSource struct {
	V     *expr.View
	s     *expr.Backend
	alias string
}

func (v *ViewSource) columns() []types.Column { return v.V.Cols }
