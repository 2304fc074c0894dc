package sql

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/sysviews"
	"lockd/sql/types"
	"lockd/txn"
)

// Portals (PostgreSQL's utils/mmgr/portalmem.c and tcop/pquery.c): a
// statement bound to its parameters and ready to run, with a position in
// its result. A DECLAREd cursor and a portal of the extended protocol
// (Bind) are the same thing, in one namespace: FETCH reads a protocol
// portal, Execute runs a cursor, pg_cursors lists both (protocol portals
// are always NO SCROLL and never holdable).
//
// A query's portal runs incrementally, as PostgreSQL's does: its plan is
// started once (relation locks, snapshot) and its executor is suspended
// between fetches, each fetch resuming it for as many rows as it asks
// for. The executor pushes rows into a callback, so a portal runs it as a
// coroutine (iter.Pull) and pulls rows one by one. Between fetches the
// portal holds its snapshot and command id (txn.HeldSnapshot), swapped in
// while it runs, so later statements of the transaction neither disturb
// it nor are disturbed; its statement context is the current fetch's, so
// a cancel or statement_timeout stops the fetch that is running.
//
// A SCROLL cursor keeps the rows it has read, so it can move backward over
// them; a NO SCROLL cursor or protocol portal keeps nothing. Statements
// other than queries (INSERT ... RETURNING, SHOW, EXPLAIN, EXECUTE) run to
// completion at their first Execute and hand their rows out from memory,
// as PostgreSQL's PORTAL_ONE_RETURNING and PORTAL_UTIL_SELECT do.
//
// At the end of its transaction a portal goes, unless it is a WITH HOLD
// cursor and the transaction commits: then its remaining rows (all of a
// SCROLL cursor's) are read before the commit, with its snapshot, and
// kept. A suspended executor holds per-execution state in its plan, so a
// statement that would run the same plan again first has the portal read
// its remaining rows into memory; so does DDL, which PostgreSQL refuses
// (55006) on a relation an open cursor reads (docs/ecosystem.md).

// PostgreSQL's cursor option bits (parsenodes.h).
const (
	cursorBinary   = 0x0001
	cursorScroll   = 0x0002
	cursorNoScroll = 0x0004
	cursorHold     = 0x0020
)

// fetchAll is PostgreSQL's FETCH_ALL.
const fetchAll = int64(^uint64(0) >> 1)

// errPortalStopped ends a suspended executor whose portal is closed.
var errPortalStopped = errors.New("sql: portal closed")

type portal struct {
	name     string
	text     string // the statement that made it (pg_cursors.statement)
	stmt     *plan.Stmt
	params   []types.Datum
	cols     []types.Column
	formats  []int16 // a protocol portal's result formats
	cursor   bool    // DECLAREd (else bound by the extended protocol)
	binary   bool
	scroll   bool // backward moves allowed (SCROLL, or a plan that can scan backward)
	holdable bool
	created  time.Time
	xact     uint32 // LocalXID of the transaction that made it (0: none was open)
	level    int    // savepoint depth it was made at (dropped if that subtransaction rolls back)

	started bool // the statement has begun to run
	ran     bool // a statement without rows ran to completion: it cannot run again
	failed  bool // its run failed: it cannot run again
	tag     string
	src     *portalSource // the suspended executor of a query; nil otherwise
	// the rows kept: keptBase+1 .. keptBase+len(kept) (1-based); every row
	// read for a SCROLL cursor, every row of a statement run to
	// completion, the rest of a NO SCROLL WITH HOLD cursor after commit
	kept     [][]types.Datum
	keptBase int64
	read     int64 // rows produced so far
	all      bool  // every row has been produced

	atStart, atEnd bool
	pos            int64 // rows before and including the current one (PostgreSQL's portalPos)
}

// portalSource is a query's executor suspended between fetches.
type portalSource struct {
	next func() ([]types.Datum, bool)
	stop func()
	ctx  *portalCtx
	held *txn.HeldSnapshot
	tag  string // the run's command tag, once it has ended
	err  error  // the run's error, once it has ended
}

// portalCtx is a suspended executor's context: the context of the fetch
// that resumes it.
type portalCtx struct{ cur context.Context }

func (c *portalCtx) Deadline() (time.Time, bool) { return c.cur.Deadline() }
func (c *portalCtx) Done() <-chan struct{}       { return c.cur.Done() }
func (c *portalCtx) Err() error                  { return c.cur.Err() }
func (c *portalCtx) Value(key any) any           { return c.cur.Value(key) }

func cursorMissing(name string) error {
	return pgerr.New(pgerr.InvalidCursorName, "cursor \"%s\" does not exist", name)
}

func portalMissing(name string) error {
	return pgerr.New(pgerr.InvalidCursorName, "portal \"%s\" does not exist", name)
}

func cannotRun(name string) error {
	return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "portal \"%s\" cannot be run", name)
}

// streams reports whether st runs as a suspendable query: a SELECT
// (PostgreSQL's PORTAL_ONE_SELECT).
func streams(st *plan.Stmt) bool {
	_, ok := st.Plan.(*plan.SelectPlan)
	return ok && !st.Writes
}

// addPortal enters p in the session's namespace.
func (s *Session) addPortal(p *portal) {
	if s.portals == nil {
		s.portals = map[string]*portal{}
	}
	if s.Tx != expr.TxNone {
		p.xact, p.level = s.LocalXID, len(s.savepoints)
	}
	p.created = time.Now()
	p.atStart = true
	s.portals[p.name] = p
}

// dropPortal closes p: a suspended executor is stopped (its scans end,
// its buffers are unpinned) and its snapshot let go.
func (s *Session) dropPortal(p *portal) {
	if s.portals[p.name] == p {
		delete(s.portals, p.name)
	}
	s.stopSource(p)
	p.kept = nil
}

func (s *Session) stopSource(p *portal) {
	src := p.src
	if src == nil {
		return
	}
	p.src = nil
	if i := slices.Index(s.streaming, p); i >= 0 {
		s.streaming = slices.Delete(s.streaming, i, i+1)
	}
	if src.held != nil {
		s.Txn.SwapHeld(src.held)
		src.stop() // the executor unwinds with its snapshot in place
		s.Txn.SwapHeld(src.held)
		s.Txn.ReleaseHeld(src.held)
	} else {
		src.stop()
	}
}

// startPortal starts p's statement: a query's executor is prepared and
// left suspended before its first row; any other statement runs to
// completion and its rows are kept.
func (s *Session) startPortal(ctx context.Context, p *portal) error {
	p.started = true
	if !streams(p.stmt) {
		tag, err := s.runStmt(ctx, p.stmt, p.params, func(row []types.Datum) error {
			p.kept = append(p.kept, slices.Clone(row))
			return nil
		})
		if err != nil {
			p.failed = true
			return err
		}
		p.tag, p.read, p.all = tag, int64(len(p.kept)), true
		return nil
	}
	src := &portalSource{ctx: &portalCtx{cur: ctx}}
	if err := s.runSource(p, src, false); err != nil {
		p.failed = true
		return err
	}
	src.held = s.Txn.HoldSnapshot()
	p.src = src
	s.streaming = append(s.streaming, p)
	return nil
}

// runSource prepares an execution of p's query and makes it src's
// coroutine, suspended before its first row; keepSnapshot: it runs with
// the snapshot in place (p's own, a rewind) rather than a new one.
func (s *Session) runSource(p *portal, src *portalSource, keepSnapshot bool) error {
	ec := &expr.EvalCtx{B: &s.Backend, Exec: &s.Executor, Ctx: src.ctx, Params: p.params}
	run, err := s.startRun(ec, p.stmt, p, keepSnapshot)
	if err != nil {
		return err
	}
	src.tag, src.err = "", nil
	src.next, src.stop = iter.Pull(func(yield func([]types.Datum) bool) {
		src.tag, src.err = s.finishRun(ec, p.stmt, run, func(row []types.Datum) error {
			if !yield(row) {
				return errPortalStopped
			}
			return nil
		})
	})
	return nil
}

// enterPortal makes p's snapshot and the fetch's context current while
// p's executor runs; leavePortal restores the statement's.
func (s *Session) enterPortal(p *portal, ctx context.Context) {
	if p.src != nil {
		p.src.ctx.cur = ctx
		s.Txn.SwapHeld(p.src.held)
	}
}

func (s *Session) leavePortal(p *portal) {
	if p.src != nil {
		s.Txn.SwapHeld(p.src.held)
		p.src.ctx.cur = context.Background()
	}
}

// nextRow returns row i (1-based) of p's result, moving forward: a kept
// row, or the next one its executor produces (i is then p.read+1). The
// row is valid until the next call; ok is false past the last row.
func (p *portal) nextRow(i int64) (row []types.Datum, ok bool, err error) {
	if k := i - p.keptBase; k >= 1 && k <= int64(len(p.kept)) {
		return p.kept[k-1], true, nil
	}
	if p.all {
		return nil, false, nil
	}
	if p.failed || p.src == nil {
		return nil, false, cannotRun(p.name)
	}
	src := p.src
	row, ok = src.next()
	if !ok {
		p.all = true
		if src.err != nil && src.err != errPortalStopped {
			p.failed = true
			return nil, false, src.err
		}
		p.tag = src.tag
		return nil, false, nil
	}
	p.read++
	if p.scroll {
		p.kept = append(p.kept, slices.Clone(row))
	}
	return row, true, nil
}

// readAll makes p keep every row it has still to produce (all its rows
// for a SCROLL cursor, which keeps them anyway) and stops its executor.
// holding: for a WITH HOLD cursor at commit, a SCROLL cursor's query runs
// again from its start, with its snapshot, and keeps every row, as
// PostgreSQL's PersistHoldablePortal rewinds the executor (so volatile
// functions run again); a NO SCROLL one keeps the rows it has not read.
func (s *Session) readAll(ctx context.Context, p *portal, holding bool) error {
	if p.src == nil {
		return nil
	}
	s.enterPortal(p, ctx)
	defer s.leavePortal(p)
	if holding && p.scroll {
		p.src.stop() // with its snapshot in place
		if err := s.runSource(p, p.src, true); err != nil {
			p.failed = true
			return err
		}
		p.kept, p.read, p.all = p.kept[:0], 0, false
	}
	if !p.scroll {
		// the rows so far are gone: keep the rest after them
		p.kept, p.keptBase = p.kept[:0], p.read
	}
	for {
		row, ok, err := p.nextRow(p.read + 1)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !p.scroll {
			p.kept = append(p.kept, slices.Clone(row))
		}
	}
	s.leavePortal(p)
	s.stopSource(p) // ended: releases the snapshot (and p.src is nil for the deferred leavePortal)
	return nil
}

// portalsBeforeStatement materializes the suspended portals st would
// disturb: those running st's plan (a plan keeps per-execution state),
// and every one before DDL.
func (s *Session) portalsBeforeStatement(ctx context.Context, st *plan.Stmt, owner *portal) error {
	for _, p := range slices.Clone(s.streaming) {
		if p == owner {
			continue
		}
		if st.DDL || p.stmt == st || (st.Plan != nil && p.stmt.Plan == st.Plan) {
			if err := s.readAll(ctx, p, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdPortals runs before a commit (PreCommit_Portals): the holdable
// cursors of the transaction read their remaining rows, as PostgreSQL's
// PersistHoldablePortal; an error aborts the commit.
func (s *Session) holdPortals(ctx context.Context) error {
	for _, p := range slices.Clone(s.streaming) {
		if p.holdable {
			if err := s.readAll(ctx, p, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// readyPortals reports whether a cursor, or a protocol portal suspended
// mid-result, is open: PostgreSQL's portals in the READY state, whose
// snapshots COPY FREEZE must not run under (it refuses with 25000).
func (s *Session) readyPortals() bool {
	for _, p := range s.portals {
		if !p.failed && (p.cursor || p.src != nil) {
			return true
		}
	}
	return false
}

// endPortals closes the portals at the end of a transaction: all but the
// holdable ones at commit; at abort, also the holdable ones it declared.
// It runs before the transaction's resources go, so suspended executors
// unwind inside it.
func (s *Session) endPortals(commit bool) {
	for _, p := range s.portals {
		if !p.holdable || (!commit && p.xact == s.LocalXID) {
			s.dropPortal(p)
			continue
		}
		p.level = 0
	}
	for _, p := range slices.Clone(s.streaming) {
		s.stopSource(p) // not in the namespace any more (the unnamed one replaced)
	}
}

// failPortals stops the executors of the transaction's portals when it
// fails inside a block: they cannot run again, and stay in the namespace
// until the block ends (PostgreSQL's AtAbort_Portals).
func (s *Session) failPortals() {
	for _, p := range s.portals {
		if !p.holdable || p.xact == s.LocalXID {
			if p.src != nil {
				s.stopSource(p)
				p.failed = !p.all
			}
		}
	}
}

// abortSubPortals drops the portals made inside a subtransaction that
// rolls back (savepoint depth deeper than depth).
func (s *Session) abortSubPortals(depth int) {
	for _, p := range s.portals {
		if p.xact == s.LocalXID && p.level > depth {
			s.dropPortal(p)
		}
	}
}

// releaseSubPortals hands the portals of released subtransactions to the
// enclosing level.
func (s *Session) releaseSubPortals(depth int) {
	for _, p := range s.portals {
		if p.xact == s.LocalXID && p.level > depth {
			p.level = depth
		}
	}
}

// ClosePortalsOutsideTransaction drops the protocol portals bound while no
// transaction was open: the server calls it when it reports the session
// idle (PostgreSQL's Bind starts an implicit transaction, and Sync ends
// it with them).
func (s *Session) ClosePortalsOutsideTransaction() {
	if s.Tx != expr.TxNone {
		return
	}
	for _, p := range s.portals {
		if !p.holdable {
			s.dropPortal(p)
		}
	}
}

// Bind makes the protocol portal name ("" the unnamed one, which a new
// Bind replaces) for st with its parameters and result formats.
func (s *Session) Bind(name string, st *plan.Stmt, params []types.Datum, formats []int16) error {
	var p *portal
	if old, ok := s.portals[name]; ok {
		if name != "" {
			return pgerr.New(pgerr.DuplicateCursor, "cursor \"%s\" already exists", name)
		}
		s.dropPortal(old)
		// The unnamed portal a Bind replaces is kept by no one (the
		// server finds portals by name), so it and its parameters' slice
		// are used again: a client that binds each statement of its
		// transactions does not allocate them every time.
		if old.src == nil && !old.cursor {
			p = old
			clear(old.params)
			s.spareParams = old.params[:0]
		}
	}
	if p == nil {
		p = new(portal)
	}
	*p = portal{name: name, text: st.Text, stmt: st, params: params, cols: st.Cols, formats: formats}
	s.addPortal(p)
	return nil
}

// PortalColumns describes the rows of portal name and the formats they go
// out in.
func (s *Session) PortalColumns(name string) ([]types.Column, []int16, error) {
	p, ok := s.portals[name]
	if !ok {
		return nil, nil, portalMissing(name)
	}
	return p.cols, p.formats, nil
}

// PortalStmt returns the statement of portal name.
func (s *Session) PortalStmt(name string) (*plan.Stmt, bool) {
	p, ok := s.portals[name]
	if !ok {
		return nil, false
	}
	return p.stmt, true
}

// ClosePortal drops portal name (a Close message; nothing if there is none).
func (s *Session) ClosePortal(name string) {
	if p, ok := s.portals[name]; ok {
		s.dropPortal(p)
	}
}

// ExecutePortal runs portal name for at most maxRows rows (0: all),
// sending them to emit (exec_execute_message). suspended reports that it
// stopped at maxRows (PortalSuspended); otherwise tag is the command tag,
// counting the rows of this call. A statement without rows runs once.
func (s *Session) ExecutePortal(ctx context.Context, name string, maxRows int64, emit func([]types.Datum) error) (tag string, suspended bool, err error) {
	p, ok := s.portals[name]
	if !ok {
		return "", false, portalMissing(name)
	}
	if s.Tx == expr.TxFailed && !p.stmt.TxControl {
		return "", false, pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if p.failed || p.ran {
		return "", false, cannotRun(name)
	}
	if !p.started && (maxRows == 0 || p.cols == nil) {
		// the whole statement in one go, rows straight to the client
		p.started = true
		tag, err := s.Execute(ctx, p.stmt, p.params, emit)
		if err != nil {
			p.failed = true
			return "", false, err
		}
		p.tag, p.all, p.atEnd = tag, true, true
		if p.cols == nil {
			p.ran = true
		} else {
			p.atStart = false
		}
		return tag, false, nil
	}
	if !p.started {
		if err := s.beginPortalStatement(ctx, p); err != nil {
			return "", false, err
		}
	} else {
		now := time.Now()
		s.StmtStart = now
		s.startStatement(p.text, now) // pg_stat_activity shows the portal's query running again
	}
	s.enterPortal(p, ctx)
	defer s.leavePortal(p)
	count := maxRows
	if count <= 0 {
		count = fetchAll
	}
	n, err := p.run(true, count, emit)
	if err != nil {
		return "", false, err
	}
	if maxRows > 0 && n == maxRows {
		return "", true, nil
	}
	return retag(p.tag, n), false, nil
}

// beginPortalStatement starts a protocol portal's statement at its first
// Execute, in the transaction rules of Execute.
func (s *Session) beginPortalStatement(ctx context.Context, p *portal) error {
	if s.Tx == expr.TxFailed {
		return pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	now := time.Now()
	defer s.stats.statementDone(p.stmt.Tag, now)
	s.StmtStart = now
	if s.Tx == expr.TxNone {
		s.Settings.Refresh()
		s.RefreshFormat()
		s.beginTxn(now, expr.TxImplicit)
		p.xact = s.LocalXID
	}
	s.startStatement(p.stmt.Text, now)
	if err := s.startPortal(ctx, p); err != nil {
		s.failStatement()
		return err
	}
	return nil
}

// retag is a command tag with its row count replaced by n: "SELECT 5" is
// "SELECT n", "INSERT 0 3" "INSERT 0 n"; a tag without a count stays.
func retag(tag string, n int64) string {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 {
		return tag
	}
	if _, err := strconv.ParseInt(tag[i+1:], 10, 64); err != nil {
		return tag
	}
	return tag[:i+1] + strconv.FormatInt(n, 10)
}

const oidPgCursors = 12077

// cursorsView is pg_cursors: the session's portals, cursors and protocol
// portals alike (the unnamed one with an empty name).
func (e *Engine) cursorsView() *expr.View {
	return &expr.View{
		Name: "pg_cursors", Oid: oidPgCursors,
		Cols: sysviews.Cols(oidPgCursors, "name", types.TypeText, "statement", types.TypeText, "is_holdable", types.TypeBool,
			"is_binary", types.TypeBool, "is_scrollable", types.TypeBool, "creation_time", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			s := e.session(ec.B.PID)
			if s == nil {
				return nil
			}
			for _, p := range s.portals {
				if err := emit([]types.Datum{types.TextDatum(p.name), types.TextDatum(p.text), types.BoolDatum(p.holdable),
					types.BoolDatum(p.binary), types.BoolDatum(p.scroll), types.IntDatum(p.created.UnixMicro())}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
