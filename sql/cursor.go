package sql

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Cursors: DECLARE, FETCH, MOVE and CLOSE with PostgreSQL 15's semantics
// (portalcmds.c and pquery.c's DoPortalRunFetch, rewritten): the cursor's
// position is PostgreSQL's portal position (atStart, atEnd, portalPos), so
// every direction leaves it where PostgreSQL's would and returns the same
// rows, and a cursor that cannot scan backward refuses exactly the moves
// PostgreSQL refuses. A cursor is a portal (portal.go): its query runs as
// it is fetched from.

// compileDeclare is DECLARE name [BINARY] [SCROLL | NO SCROLL] CURSOR
// [WITH HOLD] FOR query.
func (s *Session) compileDeclare(d *pg.DeclareCursorStmt, text string, params *[]types.Type, st *plan.Stmt) error {
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return pgerr.New(pgerr.SyntaxError, "DECLARE CURSOR must be a SELECT")
	}
	opts := d.Options
	if len(sel.LockingClause) > 0 {
		lc := lockingName(sel.LockingClause[0].GetLockingClause())
		if opts&cursorScroll != 0 {
			return pgerr.NotSupported("DECLARE SCROLL CURSOR ... %s is not supported", lc).WithDetail("Scrollable cursors must be READ ONLY.")
		}
		if opts&cursorHold != 0 {
			return pgerr.NotSupported("DECLARE CURSOR WITH HOLD ... %s is not supported", lc).WithDetail("Holdable cursors must be READ ONLY.")
		}
	}
	inner, err := s.analyze(d.Query, text, params)
	if err != nil {
		return err
	}
	scroll := opts&cursorScroll != 0
	if opts&(cursorScroll|cursorNoScroll) == 0 {
		scroll = scansBackward(sel)
	}
	st.Tag = "DECLARE CURSOR"
	st.NoSnapshot = true    // the query takes its own
	s.FoldedVolatile = true // resolved at run time: never reused from a plan cache
	name := d.Portalname
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if opts&cursorHold == 0 && s.Tx != expr.TxBlock && !(s.Tx == expr.TxImplicit && s.multiStmt) {
			return "", notInBlock("DECLARE CURSOR")
		}
		if _, dup := s.portals[name]; dup {
			return "", pgerr.New(pgerr.DuplicateCursor, "cursor \"%s\" already exists", name)
		}
		p := &portal{name: name, text: text, stmt: inner, params: ec.Params, cols: inner.Cols, cursor: true,
			binary: opts&cursorBinary != 0, scroll: scroll, holdable: opts&cursorHold != 0}
		if p.binary {
			p.formats = []int16{1}
		}
		s.addPortal(p)
		if err := s.startPortal(ec.Ctx, p); err != nil {
			s.dropPortal(p)
			return "", err
		}
		return "DECLARE CURSOR", nil
	}
	return nil
}

// lockingName is a locking clause as PostgreSQL names it in messages.
func lockingName(lc *pg.LockingClause) string {
	if lc == nil {
		return "FOR UPDATE"
	}
	switch lc.Strength {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		return "FOR KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		return "FOR SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		return "FOR NO KEY UPDATE"
	}
	return "FOR UPDATE"
}

// scansBackward says whether PostgreSQL would let a cursor declared with
// neither SCROLL nor NO SCROLL move backward: when its plan can run
// backward (ExecSupportsBackwardScan) and it locks no rows. lockd decides
// from the query's form: one table, one function in FROM (a FunctionScan
// can) or none, no joins, grouping, aggregates, DISTINCT, window
// functions, set operations or set-returning functions in the select list
// (a ProjectSet cannot).
func scansBackward(sel *pg.SelectStmt) bool {
	if sel.Op != pg.SetOperation_SETOP_NONE || len(sel.LockingClause) > 0 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 || sel.WithClause != nil {
		return len(sel.ValuesLists) > 0 && sel.Op == pg.SetOperation_SETOP_NONE
	}
	if len(sel.FromClause) > 1 {
		return false
	}
	for _, f := range sel.FromClause {
		if f.GetRangeVar() == nil && f.GetRangeFunction() == nil {
			return false
		}
	}
	agg := false
	walkFuncCalls(sel.TargetList, func(fc *pg.FuncCall) {
		_, name := analyze.QualifiedName(fc.Funcname)
		if expr.IsAggregate(name) || fc.Over != nil || funcs.IsSRF(name) {
			agg = true
		}
	})
	walkFuncCalls(sel.SortClause, func(fc *pg.FuncCall) {
		_, name := analyze.QualifiedName(fc.Funcname)
		if expr.IsAggregate(name) || fc.Over != nil {
			agg = true
		}
	})
	return !agg
}

// walkFuncCalls calls fn for the function calls in the expressions of
// nodes (not inside subqueries).
func walkFuncCalls(nodes []*pg.Node, fn func(*pg.FuncCall)) {
	var walk func(n *pg.Node)
	walk = func(n *pg.Node) {
		if n == nil {
			return
		}
		switch x := n.Node.(type) {
		case *pg.Node_FuncCall:
			fn(x.FuncCall)
			for _, a := range x.FuncCall.Args {
				walk(a)
			}
		case *pg.Node_ResTarget:
			walk(x.ResTarget.Val)
		case *pg.Node_SortBy:
			walk(x.SortBy.Node)
		case *pg.Node_AExpr:
			walk(x.AExpr.Lexpr)
			walk(x.AExpr.Rexpr)
		case *pg.Node_TypeCast:
			walk(x.TypeCast.Arg)
		case *pg.Node_BoolExpr:
			for _, a := range x.BoolExpr.Args {
				walk(a)
			}
		case *pg.Node_CoalesceExpr:
			for _, a := range x.CoalesceExpr.Args {
				walk(a)
			}
		case *pg.Node_CaseExpr:
			walk(x.CaseExpr.Arg)
			walk(x.CaseExpr.Defresult)
			for _, a := range x.CaseExpr.Args {
				if w := a.GetCaseWhen(); w != nil {
					walk(w.Expr)
					walk(w.Result)
				}
			}
		}
	}
	for _, n := range nodes {
		walk(n)
	}
}

// compileFetch is FETCH and MOVE.
func (s *Session) compileFetch(f *pg.FetchStmt, st *plan.Stmt) error {
	name := f.Portalname
	c, ok := s.portals[name]
	if !ok {
		return cursorMissing(name)
	}
	if f.Ismove {
		st.Tag = "MOVE"
	} else {
		st.Tag = "FETCH"
		st.Cols = c.cols
		st.BinaryRows = c.binary
	}
	st.NoSnapshot = true
	s.FoldedVolatile = true // the cursor is looked up by name at run time
	dir, count := f.Direction, f.HowMany
	move := f.Ismove
	st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
		cur, ok := s.portals[name]
		if !ok {
			return "", cursorMissing(name)
		}
		if cur != c {
			// redeclared since this FETCH was analysed: its columns may differ
			return "", pgerr.New(pgerr.FeatureNotSupported, "cursor \"%s\" was redeclared while the statement was being prepared", name)
		}
		if c.failed || c.ran || c.cols == nil {
			return "", cannotRun(name)
		}
		if !c.started {
			// a protocol portal bound but not executed yet
			if err := s.startPortal(ec.Ctx, c); err != nil {
				return "", err
			}
		}
		var out func([]types.Datum) error
		if !move {
			out = emit
		}
		s.enterPortal(c, ec.Ctx)
		defer s.leavePortal(c)
		n, err := c.fetch(dir, count, out)
		if err != nil {
			return "", err
		}
		return st.Tag + " " + strconv.FormatInt(n, 10), nil
	}
	return nil
}

// compileClose is CLOSE name and CLOSE ALL.
func (s *Session) compileClose(c *pg.ClosePortalStmt, st *plan.Stmt) {
	st.Tag = "CLOSE CURSOR"
	st.NoSnapshot = true
	name := c.Portalname
	st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
		if name == "" {
			for _, p := range s.portals {
				s.dropPortal(p)
			}
			return "CLOSE CURSOR ALL", nil
		}
		p, ok := s.portals[name]
		if !ok {
			return "", cursorMissing(name)
		}
		s.dropPortal(p)
		return "CLOSE CURSOR", nil
	}
}

// fetch runs one FETCH or MOVE (out nil) and returns the rows it
// processed, as PostgreSQL's DoPortalRunFetch.
func (c *portal) fetch(dir pg.FetchDirection, count int64, out func([]types.Datum) error) (int64, error) {
	switch dir {
	case pg.FetchDirection_FETCH_FORWARD:
		if count < 0 {
			dir, count = pg.FetchDirection_FETCH_BACKWARD, -count
		}
	case pg.FetchDirection_FETCH_BACKWARD:
		if count < 0 {
			dir, count = pg.FetchDirection_FETCH_FORWARD, -count
		}
	case pg.FetchDirection_FETCH_ABSOLUTE:
		switch {
		case count > 0:
			if count-1 < c.pos {
				if err := c.rewind(); err != nil {
					return 0, err
				}
				if count > 1 {
					if _, err := c.run(true, count-1, nil); err != nil {
						return 0, err
					}
				}
			} else {
				pos := c.pos
				if c.atEnd {
					pos++
				}
				if count <= pos {
					if _, err := c.run(false, pos-count+1, nil); err != nil {
						return 0, err
					}
				} else if count > pos+1 {
					if _, err := c.run(true, count-pos-1, nil); err != nil {
						return 0, err
					}
				}
			}
			return c.run(true, 1, out)
		case count < 0:
			if _, err := c.run(true, fetchAll, nil); err != nil {
				return 0, err
			}
			if count < -1 {
				if _, err := c.run(false, -count-1, nil); err != nil {
					return 0, err
				}
			}
			return c.run(false, 1, out)
		default:
			if err := c.rewind(); err != nil {
				return 0, err
			}
			return c.run(true, 0, out)
		}
	case pg.FetchDirection_FETCH_RELATIVE:
		switch {
		case count > 0:
			if count > 1 {
				if _, err := c.run(true, count-1, nil); err != nil {
					return 0, err
				}
			}
			return c.run(true, 1, out)
		case count < 0:
			if count < -1 {
				if _, err := c.run(false, -count-1, nil); err != nil {
					return 0, err
				}
			}
			return c.run(false, 1, out)
		}
		dir = pg.FetchDirection_FETCH_FORWARD
	}
	forward := dir == pg.FetchDirection_FETCH_FORWARD
	if count == 0 {
		onRow := !c.atStart && !c.atEnd
		if out == nil {
			if onRow {
				return 1, nil
			}
			return 0, nil
		}
		if onRow {
			// back up one to fetch the current row again
			if _, err := c.run(false, 1, nil); err != nil {
				return 0, err
			}
			count, forward = 1, true
		}
	}
	if !forward && count == fetchAll && out == nil {
		// MOVE BACKWARD ALL: a rewind
		n := c.pos
		if n > 0 && !c.atEnd {
			n--
		}
		if err := c.rewind(); err != nil {
			return 0, err
		}
		return n, nil
	}
	return c.run(forward, count, out)
}

func errScanForward() error {
	return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "cursor can only scan forward").
		WithHint("Declare it with SCROLL option to enable backward scan.")
}

// rewind goes back to before the first row (DoPortalRewind).
func (c *portal) rewind() error {
	if c.atStart && !c.atEnd {
		return nil
	}
	if !c.scroll {
		return errScanForward()
	}
	c.atStart, c.atEnd, c.pos = true, false, 0
	return nil
}

// run moves count rows (fetchAll: all) forward or backward, sending them
// to out if it is not nil, and returns how many it moved over
// (PortalRunSelect). The current row after a move is the last one
// returned; running off either end leaves the cursor before the first or
// after the last row. Moving backward reads the rows kept (only a
// scrollable portal moves backward, and it keeps every row it reads).
func (c *portal) run(forward bool, count int64, out func([]types.Datum) error) (int64, error) {
	var done int64
	if forward {
		if c.atEnd || count <= 0 {
			return 0, nil
		}
		for done < count {
			row, ok, err := c.nextRow(c.pos + done + 1)
			if err != nil {
				return done, err
			}
			if !ok {
				break
			}
			if out != nil {
				if err := out(row); err != nil {
					return done, err
				}
			}
			done++
		}
		if done > 0 {
			c.atStart = false
		}
		if count == fetchAll || done < count {
			c.atEnd = true
		}
		c.pos += done
		return done, nil
	}
	if !c.scroll {
		return 0, errScanForward()
	}
	if c.atStart || count <= 0 {
		return 0, nil
	}
	start := c.pos // the row before the current one, counting an off-the-end cursor as on row n+1
	if c.atEnd {
		start = c.pos + 1
	}
	for done < count && start-1-done >= 1 {
		if out != nil {
			if err := out(c.kept[start-2-done-c.keptBase]); err != nil {
				return done, err
			}
		}
		done++
	}
	if done > 0 && c.atEnd {
		c.atEnd = false
		c.pos++
	}
	if count == fetchAll || done < count {
		c.atStart, c.pos = true, 0
	} else {
		c.pos -= done
	}
	return done, nil
}
