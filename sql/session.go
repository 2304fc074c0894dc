package sql

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/commands"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/sysviews"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// Engine is the server-wide SQL state: settings, system views, and the
// link to the host server. It is safe for concurrent use.
type Engine struct {
	settings *guc.Registry
	locks    *locks.Manager
	txns     *txn.Manager
	store    *storage.Store
	cat      *catalog.Catalog
	seqs     *catalog.SeqStore // the sequences' values (seqstore.go)
	dataDir  string
	hostRef  expr.Host
	views    map[string]*expr.View
	started  time.Time

	mu   sync.Mutex
	live map[int32]*Session // guarded by mu; for pg_stat_activity

	closedStmts stmtTotals // guarded by mu; statement counters of closed sessions (stats.go)
}

// EngineConfig is what an Engine runs on.
type EngineConfig struct {
	Settings *guc.Registry
	Locks    *locks.Manager
	Txns     *txn.Manager
	Store    *storage.Store
	DataDir  string // holds the catalog (global/lockd_catalog.json)
	Host     expr.Host
}

// NewEngine opens the catalog and returns an engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	cat, err := catalog.OpenCatalog(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	seqs, err := catalog.OpenSeqStore(cfg.DataDir, cat.State())
	if err != nil {
		return nil, err
	}
	e := &Engine{settings: cfg.Settings, locks: cfg.Locks, txns: cfg.Txns, store: cfg.Store, cat: cat, seqs: seqs, dataDir: cfg.DataDir,
		hostRef: cfg.Host, started: time.Now(), views: map[string]*expr.View{}, live: map[int32]*Session{}}
	views := append([]*expr.View{sysviews.SettingsView(), sysviews.PgLocksView(), e.statActivityView(), sysviews.ExtensionView(), e.preparedStatementsView()}, sysviews.CatalogViews()...)
	for _, v := range append(views, sysviews.SequenceViews()...) {
		e.views[v.Name] = v
	}
	return e, nil
}

// Checkpoint persists the catalog and the sequences' values (the store
// and the commit log are checkpointed by their owners).
func (e *Engine) Checkpoint() error {
	if err := e.cat.Flush(); err != nil {
		return err
	}
	return e.seqs.Checkpoint(e.cat.State())
}

func (e *Engine) host() expr.Host { return e.hostRef }

// TxStatus is the ReadyForQuery transaction indicator.
type TxStatus byte

const (
	TxIdle    TxStatus = 'I'
	TxInBlock TxStatus = 'T'
	TxFailed  TxStatus = 'E'
)

// Session is one backend's SQL state. It is used by its connection's
// goroutine only, except for the fields read by other sessions through
// atomics (wait event).
type Session struct {
	commands.Utility
	eng *Engine

	savepoints []savepoint              // open SAVEPOINTs, innermost last (savepoint.go)
	queryText  string                   // the client's query string, shown in pg_stat_activity
	prepared   map[string]*preparedStmt // named prepared statements (prepare.go)
	describe   func([]types.Column)     // ExecuteDescribed's, until the statement is described

	cache      map[string][]*plan.Stmt // simple-protocol plans by query text
	prepCache  map[string]*plan.Stmt   // extended-protocol plans by query text
	shapeCache map[string]*plan.Stmt   // simple-protocol plans by statement shape
	noShape    map[string]bool         // shapes that could not be planned
	act        activity
	stats      sessionStats // statement counters (stats.go)

}

// SessionInfo identifies a new backend.
type SessionInfo struct {
	PID        int32
	User       string
	Database   string
	Settings   *guc.Session
	ClientAddr net.Addr
}

// NewSession starts the SQL state of one backend, with its lock-manager
// Proc. It fails (53300) when no Proc is free.
func (e *Engine) NewSession(info SessionInfo) (*Session, error) {
	proc, err := e.locks.NewProc(info.PID)
	if err != nil {
		return nil, err
	}
	s := &Session{eng: e, cache: map[string][]*plan.Stmt{}, prepCache: map[string]*plan.Stmt{}, shapeCache: map[string]*plan.Stmt{}, noShape: map[string]bool{}}
	s.Backend = expr.Backend{Gucs: info.Settings, Pid: info.PID, User: info.User, Database: info.Database, Proc: proc,
		Locks: e.locks, Txns: e.txns, Store: e.store, Catalog: e.cat, Seqs: e.seqs, DataDir: e.dataDir, Host: e.hostRef, Views: e.views, Started: e.started}
	s.Spi = s.analyze
	now := time.Now()
	s.act.backendStart = now
	s.act.stateChange = now
	s.act.state = "idle"
	s.act.clientAddr = info.ClientAddr
	s.act.app = info.Settings.String("application_name")
	s.Fc.Names = &s.Backend
	s.RefreshFormat()
	e.mu.Lock()
	e.live[s.Pid] = s
	e.mu.Unlock()
	return s, nil
}

// PID is the backend's process id as clients see it.
func (s *Session) PID() int32 { return s.Pid }

// Settings returns the session's settings view.
func (s *Session) Settings() *guc.Session { return s.Gucs }

// TxStatus reports the ReadyForQuery indicator.
func (s *Session) TxStatus() TxStatus {
	switch s.Tx {
	case expr.TxBlock:
		return TxInBlock
	case expr.TxFailed:
		return TxFailed
	}
	return TxIdle
}

// TakeNotices returns and clears the notices raised since the last call.
func (s *Session) TakeNotices() []*pgerr.Error {
	n := s.Notices
	s.Notices = nil
	return n
}

// Parse splits and analyses a simple-protocol query string. An empty
// result means an empty query. params are the parameter values of a
// statement found by its shape (see shapeOf); nil otherwise.
func (s *Session) Parse(query string) (sts []*plan.Stmt, params []types.Datum, err error) {
	if s.Tx == expr.TxFailed {
		// In a failed block only syntax errors come before 25P02: defer
		// analysis to Resolve.
		return s.parseLazy(query)
	}
	if sts, ok := s.cache[query]; ok && (len(sts) == 0 || sts[0].CatVer == s.Cat().Version) {
		return sts, nil, nil
	}
	if st, params, ok := s.parseShape(query); ok {
		return []*plan.Stmt{st}, params, nil
	}
	sts, err = s.parseFull(query)
	return sts, nil, err
}

// parseShape finds or builds the plan of query's shape and binds its
// literals. ok is false when the statement has no usable shape; the
// caller then parses it as it is (which also reports errors exactly as
// PostgreSQL does, with positions).
func (s *Session) parseShape(query string) (*plan.Stmt, []types.Datum, bool) {
	key, lits, ok := shapeOf(query)
	if !ok || s.noShape[key] {
		return nil, nil, false
	}
	st := s.shapeCache[key]
	if st == nil || st.CatVer != s.Cat().Version {
		text := key[strings.IndexByte(key, '|')+1:]
		tree, err := pg.Parse(text)
		if err != nil || len(tree.Stmts) != 1 {
			s.markNoShape(key)
			return nil, nil, false
		}
		params := make([]types.Type, len(lits))
		for i, l := range lits {
			params[i] = literalType(l.kind)
		}
		st, err = s.analyze(tree.Stmts[0].Stmt, text, &params)
		if err != nil || len(params) != len(lits) || !st.Cacheable {
			s.markNoShape(key)
			return nil, nil, false
		}
		analyze.FinishParams(params)
		st.Params = params
		if len(s.shapeCache) >= 256 {
			clear(s.shapeCache)
		}
		s.shapeCache[key] = st
	}
	vals := make([]types.Datum, len(lits))
	for i, l := range lits {
		d, err := types.ParseText(st.Params[i], l.text, &s.Fc)
		if err != nil {
			return nil, nil, false
		}
		vals[i] = d
	}
	return st, vals, true
}

func (s *Session) markNoShape(key string) {
	if len(s.noShape) >= 256 {
		clear(s.noShape)
	}
	s.noShape[key] = true
}

func (s *Session) parseFull(query string) ([]*plan.Stmt, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	sts := make([]*plan.Stmt, 0, len(tree.Stmts))
	if len(tree.Stmts) > 1 {
		// As in PostgreSQL, each statement of a multi-statement string is
		// analysed just before it runs ("create table t ...; insert into
		// t ..." must see t): Resolve does it.
		return lazyStmts(query, tree), nil
	}
	cacheable := true
	for _, raw := range tree.Stmts {
		st, err := s.analyzeSimple(raw.Stmt, stmtText(query, raw))
		if err != nil {
			return nil, err
		}
		cacheable = cacheable && st.Cacheable
		sts = append(sts, st)
	}
	if cacheable {
		if len(s.cache) >= 256 {
			clear(s.cache)
		}
		s.cache[query] = sts
	}
	return sts, nil
}

func (s *Session) parseLazy(query string) ([]*plan.Stmt, []types.Datum, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, nil, parseError(err)
	}
	return lazyStmts(query, tree), nil, nil
}

func lazyStmts(query string, tree *pg.ParseResult) []*plan.Stmt {
	sts := make([]*plan.Stmt, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		sts = append(sts, &plan.Stmt{Text: stmtText(query, raw), Lazy: raw.Stmt})
	}
	return sts
}

// analyzeSimple analyses one simple-protocol statement, which may not
// have parameters.
func (s *Session) analyzeSimple(n *pg.Node, text string) (*plan.Stmt, error) {
	var params []types.Type
	st, err := s.analyze(n, text, &params)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		return nil, pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", len(params))
	}
	return st, nil
}

// Resolve returns st ready to run: a statement of a multi-statement
// string is analysed now, against the catalog as the statements before
// it left it. The server calls it before describing and executing each
// statement of a Query message.
func (s *Session) Resolve(st *plan.Stmt) (*plan.Stmt, error) {
	if st.Lazy == nil {
		return st, nil
	}
	if s.Tx == expr.TxFailed && st.Lazy.GetTransactionStmt() == nil {
		// PostgreSQL refuses everything but transaction control in a
		// failed block before analysing it: Execute says 25P02.
		return &plan.Stmt{Text: st.Text, Run: func(*expr.EvalCtx, func([]types.Datum) error) (string, error) { return "", nil }}, nil
	}
	return s.analyzeSimple(st.Lazy, st.Text)
}

// Prepare analyses one statement for the extended protocol. paramOIDs
// are the client's declared types (0 = infer).
func (s *Session) Prepare(query string, paramOIDs []uint32) (*plan.Stmt, error) {
	// Clients such as pgbench -M extended send the same unnamed Parse for
	// every execution; a plan analysed once serves them all (plans are
	// read-only, and re-planned if the catalog changes).
	cacheKey := ""
	if allZero(paramOIDs) {
		cacheKey = query
		if st, ok := s.prepCache[cacheKey]; ok && st.CatVer == s.Cat().Version {
			return st, nil
		}
	}
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	switch len(tree.Stmts) {
	case 0:
		return &plan.Stmt{Text: query, Run: nil, Cacheable: true}, nil
	case 1:
	default:
		return nil, pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	params := make([]types.Type, len(paramOIDs))
	for i, oid := range paramOIDs {
		if oid != 0 {
			t, ok := types.TypeByOID(oid)
			if !ok {
				return nil, pgerr.NotSupported("parameter type %d is not supported", oid)
			}
			params[i] = t
		}
	}
	st, err := s.analyze(tree.Stmts[0].Stmt, query, &params)
	if err != nil {
		return nil, err
	}
	analyze.FinishParams(params)
	st.Params = params
	if cacheKey != "" && st.Cacheable && len(paramOIDs) == 0 {
		if len(s.prepCache) >= 256 {
			clear(s.prepCache)
		}
		s.prepCache[cacheKey] = st
	}
	return st, nil
}

func allZero(oids []uint32) bool {
	for _, o := range oids {
		if o != 0 {
			return false
		}
	}
	return true
}

func stmtText(query string, raw *pg.RawStmt) string {
	start := int(raw.StmtLocation)
	end := len(query)
	if raw.StmtLen > 0 {
		end = start + int(raw.StmtLen)
	}
	if start < 0 || start > len(query) || end > len(query) || start > end {
		return query
	}
	return strings.TrimSpace(query[start:end])
}

func parseError(err error) error {
	if pe, ok := err.(*parser.Error); ok {
		e := pgerr.New(pgerr.SyntaxError, "%s", pe.Message)
		if pe.Cursorpos > 0 {
			e.Position = int32(pe.Cursorpos)
		}
		if strings.HasPrefix(pe.Message, "unterminated") || strings.Contains(pe.Message, "invalid") {
			if strings.Contains(pe.Message, "unicode") || strings.Contains(pe.Message, "escape") {
				e.Code = pgerr.InvalidEscapeSequence
			}
		}
		return e
	}
	return pgerr.New(pgerr.SyntaxError, "%s", err.Error())
}

// Execute runs a statement with bound parameters, sending result rows to
// emit, and returns the command tag. It applies the transaction rules:
// an implicit transaction starts if none is open; in a failed block only
// COMMIT/ROLLBACK run.
func (s *Session) Execute(ctx context.Context, st *plan.Stmt, params []types.Datum, emit func([]types.Datum) error) (string, error) {
	return s.ExecuteDescribed(ctx, st, params, nil, emit)
}

// ExecuteDescribed is Execute for a statement not described to the
// client yet (the simple query protocol): describe gets its result
// columns once its relation locks are held, before any row. A statement
// that waited for a lock behind DDL is planned again and described as it
// is now, as PostgreSQL's parse analysis, which takes those locks, would
// see it: a SELECT * queued behind ALTER TABLE ADD COLUMN returns the new
// column.
func (s *Session) ExecuteDescribed(ctx context.Context, st *plan.Stmt, params []types.Datum, describe func([]types.Column), emit func([]types.Datum) error) (string, error) {
	s.describe = describe
	defer func() { s.describe = nil }()
	if st.IsEmpty() {
		return "", nil
	}
	if s.Tx == expr.TxFailed && !st.TxControl {
		return "", pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.NoBlock != "" && s.Tx == expr.TxBlock {
		return "", pgerr.New(pgerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.NoBlock)
	}
	now := time.Now()
	defer s.stats.statementDone(st.Tag, now)
	s.StmtStart = now
	if s.Tx == expr.TxNone {
		s.Gucs.Refresh()
		s.RefreshFormat()
		s.beginTxn(now, expr.TxImplicit)
	}
	text := st.Text
	if s.queryText != "" {
		text = s.queryText
	}
	s.startStatement(text, now)
	tag, err := s.runStmt(ctx, st, params, emit)
	if err != nil {
		s.failStatement()
		return "", err
	}
	return tag, nil
}

// runStmt runs an analysed statement in the open transaction: it takes
// the statement's relation locks (planning again when the catalog
// changed), its snapshot, runs it and advances the command counter after
// a write. Execute calls it, and EXECUTE of a prepared statement.
func (s *Session) runStmt(ctx context.Context, st *plan.Stmt, params []types.Datum, emit func([]types.Datum) error) (string, error) {
	if err := s.checkReadOnly(st); err != nil {
		return "", err
	}
	ec := expr.EvalCtx{S: &s.Backend, Exec: &s.Executor, Ctx: ctx, Params: params}
	run := st
	// the locks follow the plan PostgreSQL's plan cache would run
	// (plancache.go): a cached generic plan locks fewer relations
	ec.Plan = st.PlanFor(s.Gucs.String("plan_cache_mode"))
	if len(st.Rels) > 0 {
		if err := s.LockRelations(ctx, st.Rels, ec.Plan == expr.GenericReuse); err != nil {
			return "", err
		}
		if st.CatVer != s.Cat().Version {
			// The catalog changed since the plan was made (also by this
			// transaction's own DDL, or its rollback): plan again
			// (PostgreSQL re-plans a cached plan on invalidation too).
			fresh, err := s.replan(st, s.describe != nil)
			if err != nil {
				if s.describe == nil {
					// a prepared statement's text is not the query the
					// client sent now: no position into it
					err = commands.NoPosition(err)
				}
				return "", err
			}
			if err := s.LockRelations(ctx, fresh.Rels, false); err != nil {
				return "", err
			}
			if ec.Plan == expr.GenericReuse {
				ec.Plan = expr.GenericBuild
			}
			run = fresh
		}
	}
	if d := s.describe; d != nil {
		s.describe = nil // once: an EXECUTE's prepared statement is not described again
		d(st.Cols)
	}
	if !st.NoSnapshot {
		s.Txn.StatementSnapshot()
	}
	tag, err := s.RunPlan(&ec, run, emit)
	st.PlanDone(ec.Plan, s.Gucs.String("plan_cache_mode"), ec.RuntimePruned)
	err = s.AfterStatement(&ec, err) // fire the statement's foreign-key checks and actions (ri.go)
	if err != nil {
		return "", err
	}
	if st.Writes {
		s.Txn.CommandCounterIncrement()
	}
	return tag, nil
}

// replan analyses st's text again against the current catalog;
// newColumns: the client has not been told st's result columns yet.
func (s *Session) replan(st *plan.Stmt, newColumns bool) (*plan.Stmt, error) {
	tree, err := pg.Parse(st.Text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, parseError(err)
	}
	params := append([]types.Type(nil), st.Params...)
	fresh, err := s.analyze(tree.Stmts[0].Stmt, st.Text, &params)
	if err != nil {
		return nil, err
	}
	if !newColumns && !sameColumns(fresh.Cols, st.Cols) {
		return nil, pgerr.NotSupported("cached plan must not change result type")
	}
	named, customPlans, genericPlans, choice := st.Named, st.CustomPlans, st.GenericPlans, st.Choice
	*st = *fresh
	st.Params = params
	// the cached generic plan is invalid; the counts stay (PostgreSQL
	// keeps a plan source's custom plan statistics across invalidation)
	st.Named, st.CustomPlans, st.GenericPlans, st.Choice = named, customPlans, genericPlans, choice
	return st, nil
}

func sameColumns(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type.OID != b[i].Type.OID || a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// failStatement records an error: a block becomes failed; an implicit
// transaction is rolled back at once.
func (s *Session) failStatement() {
	switch s.Tx {
	case expr.TxBlock:
		s.Tx = expr.TxFailed
		if len(s.savepoints) > 0 {
			s.abortInnermostSavepoint()
			return
		}
		// PostgreSQL's AbortTransaction runs at the error, not at the
		// ROLLBACK: the transaction's locks are released and its xid
		// aborted at once, so others stop waiting for a session that sits
		// in a failed block; the block itself lasts until ROLLBACK.
		s.AbortCatalog()
		s.Txn.Abort()
		s.Gucs.AbortTxn()
		s.Locks.ReleaseTransactionLocks(s.Proc)
		s.RefreshFormat()
	case expr.TxImplicit:
		s.endTxn(false)
	}
}

// Sync ends an implicit transaction (the end of a simple Query message or
// an extended-protocol Sync), committing it.
func (s *Session) Sync() {
	if s.Tx == expr.TxImplicit {
		s.endTxn(true)
	}
}

// Abort rolls back whatever transaction is open (connection loss, fatal
// errors).
func (s *Session) Abort() {
	if s.Tx != expr.TxNone {
		s.endTxn(false)
	}
}

// Close ends the session: any open transaction is rolled back and every
// lock it holds, session-level ones included, is released.
func (s *Session) Close() {
	s.Abort()
	s.eng.mu.Lock()
	s.stats.addTo(&s.eng.closedStmts)
	delete(s.eng.live, s.Pid)
	s.eng.mu.Unlock()
	s.Proc.Close()
}

// beginTxn starts a transaction: like PostgreSQL, every transaction holds
// ExclusiveLock on its own virtual xid (taken through the fast path).
func (s *Session) beginTxn(now time.Time, kind expr.TxState) {
	s.Tx = kind
	s.XactStart = now
	s.Lxid++
	s.Locks.BeginVirtualXact(s.Proc, s.Lxid)
	s.Txns.Begin(&s.Txn, s.Proc, expr.IsolationOf(s.Gucs.String("default_transaction_isolation")))
	s.Gucs.BeginTxn()
	s.startTxnSettings()
}

// endTxn commits or aborts: settings are kept or undone and every
// transaction-level lock is released.
func (s *Session) endTxn(commit bool) {
	if commit {
		if err := s.CommitCatalog(); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the catalog: "+err.Error())
		}
		if err := s.Txn.Commit(); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "commit: "+err.Error())
		}
		s.Gucs.CommitTxn()
	} else {
		s.AbortCatalog()
		s.Txn.Abort()
		s.Gucs.AbortTxn()
	}
	s.Locks.ReleaseTransactionLocks(s.Proc)
	s.Tx = expr.TxNone
	s.popSavepoints(0)
	s.RefreshFormat()
}

// StatementTimeout is the session's statement_timeout.
func (s *Session) StatementTimeout() time.Duration {
	return time.Duration(s.Gucs.Int("statement_timeout")) * time.Millisecond
}

// IdleInTransactionTimeout is idle_in_transaction_session_timeout.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	return time.Duration(s.Gucs.Int("idle_in_transaction_session_timeout")) * time.Millisecond
}

// SetQueryText records the text of the Query message being run, which
// pg_stat_activity shows (as PostgreSQL does, the whole string); "" makes
// each statement show its own text (the extended protocol).
func (s *Session) SetQueryText(q string) { s.queryText = q }

// Fail records an error raised outside Execute (a parse or bind error):
// an open block becomes failed, an implicit transaction is rolled back.
func (s *Session) Fail() { s.failStatement() }

// InFailedBlock reports whether only COMMIT/ROLLBACK may run.
func (s *Session) InFailedBlock() bool { return s.Tx == expr.TxFailed }
