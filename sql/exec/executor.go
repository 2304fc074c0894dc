package exec

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// runPlan runs a planned statement in the open transaction and returns
// its command tag (ExecutorRun): a query's rows go to emit, as do a DML
// statement's RETURNING rows. Utility statements carry their own run.
func (x *Executor) RunPlan(ec *expr.EvalCtx, st *plan.Stmt, emit func([]types.Datum) error) (string, error) {
	var n int64
	var err error
	switch p := st.Plan.(type) {
	case nil:
		return st.Run(ec, emit)
	case *plan.SelectPlan:
		n, err = x.runQuery(ec, p, emit)
	case *plan.InsertPlan:
		if st := ec.Stats(plan.StatInsert{P: p}); st != nil {
			err = timed(st, func(count func(func() error) error) error {
				var err error
				n, err = x.execInsert(ec, p, emit)
				st.Rows += float64(n)
				return err
			})
		} else {
			n, err = x.execInsert(ec, p, emit)
		}
		if err != nil {
			return "", err
		}
		return "INSERT 0 " + strconv.FormatInt(n, 10), nil
	case *plan.ModifyPlan:
		if st := ec.Stats(plan.StatModify{P: p}); st != nil {
			err = timed(st, func(count func(func() error) error) error {
				var err error
				n, err = x.execModify(ec, p, emit)
				st.Rows += float64(n)
				return err
			})
			break
		}
		n, err = x.execModify(ec, p, emit)
	case *plan.JoinModifyPlan:
		n, err = x.execJoinModify(ec, p, emit)
	default:
		panic("sql: runPlan of an unknown plan")
	}
	if err != nil {
		return "", err
	}
	return x.commandTag(st.Tag, n), nil
}

// commandTag is "word n", the command tag of a statement that counts its
// rows. The last one is kept: a prepared statement run again and again
// usually returns the same tag (strings are immutable, so sharing it is
// safe).
func (x *Executor) commandTag(word string, n int64) string {
	if n != x.lastTagN || word != x.lastTagWord || x.lastTag == "" {
		x.lastTag, x.lastTagWord, x.lastTagN = word+" "+strconv.FormatInt(n, 10), word, n
	}
	return x.lastTag
}

// runSubplan runs the plan of a subquery for an expression (a sublink).
func (x *Executor) RunSubplan(ec *expr.EvalCtx, p expr.Subplan, emit func(row []types.Datum) error) error {
	return x.RunSelect(ec, p.(*plan.SelectPlan), emit)
}

// Executor runs one session's plans.
type Executor struct {
	plan.Planner

	ri         riState       // constraints compiled for this session, the statement's foreign-key events (ri.go)
	specToken  uint32        // the last speculative insertion token (upsert.go)
	uniqueTIDs []storage.TID // scratch of unique checks (unique.go)
	rowBuf     []byte
	// leafDst is the level row's span of the table leaf about to be
	// scanned: the scan decodes its rows there rather than into a row
	// of its own that runLeaf would copy (taken once, by takeLeafDst)
	leafDst []types.Datum
	// bitmaps and bmIters are finished bitmap scans' memory, for the
	// next (bitmapscan.go); recheck says the bitmap heap scan's current
	// page needs its index conditions checked again (runLeaf counts the
	// rows they remove)
	bitmaps  []*tidBitmap
	bmIters  []*bmIterator
	recheck  bool
	CopySrc  CopySource
	CopySink CopySink
	// spi analyses a statement for the executor's own queries (the
	// referential actions), as PostgreSQL's triggers use SPI
	Spi func(n *pg.Node, text string, params *[]types.Type) (*plan.Stmt, error)

	// the last command tag commandTag made: lastTag is lastTagWord and
	// lastTagN
	lastTag, lastTagWord string
	lastTagN             int64

	// spareRows and spareTargets are the rows and target lists of
	// finished statements, for the next (takeRow, takeTargets)
	spareRows    [][]types.Datum
	spareTargets []plan.Target
}

// Scratch rows. A statement's working rows (an UPDATE's scan row, target
// copies and new row, an INSERT's row) live only while the executor's
// function that made them runs: nothing keeps them (index keys, foreign
// key events, RETURNING output and portals copy what they keep). They
// are handed back when that function returns and reused by the next
// statement, so a pgbench transaction does not allocate them anew. A
// statement run inside another (a referential action) takes rows of its
// own: a row is on the free list only while no one uses it.
const (
	maxSpareRows  = 8
	maxSpareWidth = 1024 // wider rows go to the garbage collector
)

// takeRow returns a row of n zero datums, reused if one is spare.
func (x *Executor) takeRow(n int) []types.Datum {
	for i := len(x.spareRows) - 1; i >= 0; i-- {
		if r := x.spareRows[i]; cap(r) >= n {
			last := len(x.spareRows) - 1
			x.spareRows[i] = x.spareRows[last]
			x.spareRows[last] = nil
			x.spareRows = x.spareRows[:last]
			return r[:n]
		}
	}
	return make([]types.Datum, n)
}

// giveRow hands back a row from takeRow (or one grown from it by
// append); it is cleared, so a spare row holds no strings alive.
func (x *Executor) giveRow(r []types.Datum) {
	if cap(r) == 0 || cap(r) > maxSpareWidth || len(x.spareRows) >= maxSpareRows {
		return
	}
	r = r[:cap(r)]
	clear(r)
	x.spareRows = append(x.spareRows, r[:0])
}

// takeTargets returns an empty target list, reused if one is spare.
func (x *Executor) takeTargets() []plan.Target {
	t := x.spareTargets
	x.spareTargets = nil
	return t[:0]
}

// giveTargets hands back a list from takeTargets.
func (x *Executor) giveTargets(t []plan.Target) {
	if cap(t) > maxSpareWidth {
		return
	}
	clear(t[:cap(t)])
	x.spareTargets = t[:0]
}
