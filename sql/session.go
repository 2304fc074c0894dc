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
	"lockd/storage"
	"lockd/txn"
)

// Host is what the SQL layer needs from the server around it.
type Host interface {
	CancelBackend(pid int32) bool
	TerminateBackend(pid int32) bool
	ReloadConfig() bool
}

// Engine is the server-wide SQL state: settings, system views, and the
// link to the host server. It is safe for concurrent use.
type Engine struct {
	settings *guc.Registry
	locks    *locks.Manager
	txns     *txn.Manager
	store    *storage.Store
	cat      *catalog
	seqs     *seqStore // the sequences' values (seqstore.go)
	dataDir  string
	hostRef  Host
	views    map[string]*view
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
	Host     Host
}

// NewEngine opens the catalog and returns an engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	cat, err := openCatalog(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	seqs, err := openSeqStore(cfg.DataDir, cat.state())
	if err != nil {
		return nil, err
	}
	e := &Engine{settings: cfg.Settings, locks: cfg.Locks, txns: cfg.Txns, store: cfg.Store, cat: cat, seqs: seqs, dataDir: cfg.DataDir,
		hostRef: cfg.Host, started: time.Now(), views: map[string]*view{}, live: map[int32]*Session{}}
	views := append([]*view{settingsView(), pgLocksView(), e.statActivityView(), extensionView(), e.preparedStatementsView()}, catalogViews()...)
	for _, v := range append(views, sequenceViews()...) {
		e.views[v.name] = v
	}
	return e, nil
}

// Checkpoint persists the catalog and the sequences' values (the store
// and the commit log are checkpointed by their owners).
func (e *Engine) Checkpoint() error {
	if err := e.cat.flush(); err != nil {
		return err
	}
	return e.seqs.checkpoint(e.cat.state())
}

func (e *Engine) host() Host { return e.hostRef }

// TxStatus is the ReadyForQuery transaction indicator.
type TxStatus byte

const (
	TxIdle    TxStatus = 'I'
	TxInBlock TxStatus = 'T'
	TxFailed  TxStatus = 'E'
)

type txState uint8

const (
	txNone     txState = iota // no transaction
	txImplicit                // an implicit transaction (statement or query string)
	txBlock                   // BEGIN ...
	txFailed                  // a block that saw an error
)

// Session is one backend's SQL state. It is used by its connection's
// goroutine only, except for the fields read by other sessions through
// atomics (wait event).
type Session struct {
	utility
	eng *Engine

	savepoints []savepoint              // open SAVEPOINTs, innermost last (savepoint.go)
	queryText  string                   // the client's query string, shown in pg_stat_activity
	prepared   map[string]*preparedStmt // named prepared statements (prepare.go)
	describe   func([]Column)           // ExecuteDescribed's, until the statement is described

	cache      map[string][]*Stmt // simple-protocol plans by query text
	prepCache  map[string]*Stmt   // extended-protocol plans by query text
	shapeCache map[string]*Stmt   // simple-protocol plans by statement shape
	noShape    map[string]bool    // shapes that could not be planned
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
	s := &Session{eng: e, cache: map[string][]*Stmt{}, prepCache: map[string]*Stmt{}, shapeCache: map[string]*Stmt{}, noShape: map[string]bool{}}
	s.Backend = Backend{gucs: info.Settings, pid: info.PID, user: info.User, database: info.Database, proc: proc,
		locks: e.locks, txns: e.txns, store: e.store, catalog: e.cat, seqs: e.seqs, dataDir: e.dataDir, host: e.hostRef, views: e.views, started: e.started}
	s.spi = s.analyze
	now := time.Now()
	s.act.backendStart = now
	s.act.stateChange = now
	s.act.state = "idle"
	s.act.clientAddr = info.ClientAddr
	s.act.app = info.Settings.String("application_name")
	s.fc.names = &s.Backend
	s.refreshFormat()
	e.mu.Lock()
	e.live[s.pid] = s
	e.mu.Unlock()
	return s, nil
}

// Proc is the session's lock-manager state.
func (s *Session) Proc() *locks.Proc { return s.proc }

// PID is the backend's process id as clients see it.
func (s *Session) PID() int32 { return s.pid }

// Settings returns the session's settings view.
func (s *Session) Settings() *guc.Session { return s.gucs }

// TxStatus reports the ReadyForQuery indicator.
func (s *Session) TxStatus() TxStatus {
	switch s.tx {
	case txBlock:
		return TxInBlock
	case txFailed:
		return TxFailed
	}
	return TxIdle
}

// TakeNotices returns and clears the notices raised since the last call.
func (s *Session) TakeNotices() []*pgerr.Error {
	n := s.notices
	s.notices = nil
	return n
}

// Stmt is an analysed statement, reusable across executions.
type Stmt struct {
	Text       string
	Tag        string // command tag prefix, e.g. "SELECT", "SET"
	cols       []Column
	params     []Type
	txControl  bool      // allowed in a failed block (COMMIT, ROLLBACK)
	noBlock    string    // non-empty: may not run inside a transaction block
	cacheable  bool      // may be kept in the session's plan cache
	rels       []relLock // relation locks taken at each execution
	writes     bool      // advances the command counter afterwards
	copyCols   int       // COPY: columns in each row
	fromStdin  bool      // COPY FROM STDIN
	toStdout   bool      // COPY TO STDOUT
	copyFormat int16     // COPY: 0 text or csv, 1 binary
	catVer     uint64    // catalog version the plan was made against
	roName     string    // the command a read-only transaction refuses (readonly.go)
	noSnapshot bool      // transaction control and settings take no snapshot
	lazy       *pg.Node  // a statement of a multi-statement string, analysed by Resolve
	// plan is what the executor runs (execmain.go): a query's or a DML
	// statement's plan; utility statements have run instead
	plan any
	run  func(ec *evalCtx, emit func([]Datum) error) (string, error)
	// a named prepared statement's place in PostgreSQL's plan cache
	// (plancache.go), which decides the locks of its executions
	named         bool
	customPlans   int        // custom plans made so far
	genericPlans  int        // executions that ran a generic plan
	genericCached bool       // a generic plan is cached and valid
	choice        planChoice // auto mode's choice after five custom plans
}

// Columns describes the result rows; nil for statements without rows.
func (st *Stmt) Columns() []Column { return st.cols }

// ParamTypes lists the parameter type OIDs (after inference).
func (st *Stmt) ParamTypes() []uint32 {
	out := make([]uint32, len(st.params))
	for i, t := range st.params {
		out[i] = t.OID
	}
	return out
}

// Parse splits and analyses a simple-protocol query string. An empty
// result means an empty query. params are the parameter values of a
// statement found by its shape (see shapeOf); nil otherwise.
func (s *Session) Parse(query string) (sts []*Stmt, params []Datum, err error) {
	if s.tx == txFailed {
		// In a failed block only syntax errors come before 25P02: defer
		// analysis to Resolve.
		return s.parseLazy(query)
	}
	if sts, ok := s.cache[query]; ok && (len(sts) == 0 || sts[0].catVer == s.cat().Version) {
		return sts, nil, nil
	}
	if st, params, ok := s.parseShape(query); ok {
		return []*Stmt{st}, params, nil
	}
	sts, err = s.parseFull(query)
	return sts, nil, err
}

// parseShape finds or builds the plan of query's shape and binds its
// literals. ok is false when the statement has no usable shape; the
// caller then parses it as it is (which also reports errors exactly as
// PostgreSQL does, with positions).
func (s *Session) parseShape(query string) (*Stmt, []Datum, bool) {
	key, lits, ok := shapeOf(query)
	if !ok || s.noShape[key] {
		return nil, nil, false
	}
	st := s.shapeCache[key]
	if st == nil || st.catVer != s.cat().Version {
		text := key[strings.IndexByte(key, '|')+1:]
		tree, err := pg.Parse(text)
		if err != nil || len(tree.Stmts) != 1 {
			s.markNoShape(key)
			return nil, nil, false
		}
		params := make([]Type, len(lits))
		for i, l := range lits {
			params[i] = literalType(l.kind)
		}
		st, err = s.analyze(tree.Stmts[0].Stmt, text, &params)
		if err != nil || len(params) != len(lits) || !st.cacheable {
			s.markNoShape(key)
			return nil, nil, false
		}
		finishParams(params)
		st.params = params
		if len(s.shapeCache) >= 256 {
			clear(s.shapeCache)
		}
		s.shapeCache[key] = st
	}
	vals := make([]Datum, len(lits))
	for i, l := range lits {
		d, err := parseText(st.params[i], l.text, &s.fc)
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

func (s *Session) parseFull(query string) ([]*Stmt, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	sts := make([]*Stmt, 0, len(tree.Stmts))
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
		cacheable = cacheable && st.cacheable
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

func (s *Session) parseLazy(query string) ([]*Stmt, []Datum, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, nil, parseError(err)
	}
	return lazyStmts(query, tree), nil, nil
}

func lazyStmts(query string, tree *pg.ParseResult) []*Stmt {
	sts := make([]*Stmt, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		sts = append(sts, &Stmt{Text: stmtText(query, raw), lazy: raw.Stmt})
	}
	return sts
}

// analyzeSimple analyses one simple-protocol statement, which may not
// have parameters.
func (s *Session) analyzeSimple(n *pg.Node, text string) (*Stmt, error) {
	var params []Type
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
func (s *Session) Resolve(st *Stmt) (*Stmt, error) {
	if st.lazy == nil {
		return st, nil
	}
	if s.tx == txFailed && st.lazy.GetTransactionStmt() == nil {
		// PostgreSQL refuses everything but transaction control in a
		// failed block before analysing it: Execute says 25P02.
		return &Stmt{Text: st.Text, run: func(*evalCtx, func([]Datum) error) (string, error) { return "", nil }}, nil
	}
	return s.analyzeSimple(st.lazy, st.Text)
}

// Prepare analyses one statement for the extended protocol. paramOIDs
// are the client's declared types (0 = infer).
func (s *Session) Prepare(query string, paramOIDs []uint32) (*Stmt, error) {
	// Clients such as pgbench -M extended send the same unnamed Parse for
	// every execution; a plan analysed once serves them all (plans are
	// read-only, and re-planned if the catalog changes).
	cacheKey := ""
	if allZero(paramOIDs) {
		cacheKey = query
		if st, ok := s.prepCache[cacheKey]; ok && st.catVer == s.cat().Version {
			return st, nil
		}
	}
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	switch len(tree.Stmts) {
	case 0:
		return &Stmt{Text: query, run: nil, cacheable: true}, nil
	case 1:
	default:
		return nil, pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	params := make([]Type, len(paramOIDs))
	for i, oid := range paramOIDs {
		if oid != 0 {
			t, ok := typeByOID(oid)
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
	finishParams(params)
	st.params = params
	if cacheKey != "" && st.cacheable && len(paramOIDs) == 0 {
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

// IsEmpty reports whether the statement is an empty query.
func (st *Stmt) IsEmpty() bool { return st.run == nil && st.plan == nil }

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
func (s *Session) Execute(ctx context.Context, st *Stmt, params []Datum, emit func([]Datum) error) (string, error) {
	return s.ExecuteDescribed(ctx, st, params, nil, emit)
}

// ExecuteDescribed is Execute for a statement not described to the
// client yet (the simple query protocol): describe gets its result
// columns once its relation locks are held, before any row. A statement
// that waited for a lock behind DDL is planned again and described as it
// is now, as PostgreSQL's parse analysis, which takes those locks, would
// see it: a SELECT * queued behind ALTER TABLE ADD COLUMN returns the new
// column.
func (s *Session) ExecuteDescribed(ctx context.Context, st *Stmt, params []Datum, describe func([]Column), emit func([]Datum) error) (string, error) {
	s.describe = describe
	defer func() { s.describe = nil }()
	if st.IsEmpty() {
		return "", nil
	}
	if s.tx == txFailed && !st.txControl {
		return "", pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.noBlock != "" && s.tx == txBlock {
		return "", pgerr.New(pgerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.noBlock)
	}
	now := time.Now()
	defer s.stats.statementDone(st.Tag, now)
	s.stmtStart = now
	if s.tx == txNone {
		s.gucs.Refresh()
		s.refreshFormat()
		s.beginTxn(now, txImplicit)
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
func (s *Session) runStmt(ctx context.Context, st *Stmt, params []Datum, emit func([]Datum) error) (string, error) {
	if err := s.checkReadOnly(st); err != nil {
		return "", err
	}
	ec := evalCtx{s: &s.Backend, exec: &s.Executor, ctx: ctx, params: params}
	run := st
	// the locks follow the plan PostgreSQL's plan cache would run
	// (plancache.go): a cached generic plan locks fewer relations
	ec.plan = st.planFor(s.gucs.String("plan_cache_mode"))
	if len(st.rels) > 0 {
		if err := s.lockRelations(ctx, st.rels, ec.plan == genericReuse); err != nil {
			return "", err
		}
		if st.catVer != s.cat().Version {
			// The catalog changed since the plan was made (also by this
			// transaction's own DDL, or its rollback): plan again
			// (PostgreSQL re-plans a cached plan on invalidation too).
			fresh, err := s.replan(st, s.describe != nil)
			if err != nil {
				if s.describe == nil {
					// a prepared statement's text is not the query the
					// client sent now: no position into it
					err = noPosition(err)
				}
				return "", err
			}
			if err := s.lockRelations(ctx, fresh.rels, false); err != nil {
				return "", err
			}
			if ec.plan == genericReuse {
				ec.plan = genericBuild
			}
			run = fresh
		}
	}
	if d := s.describe; d != nil {
		s.describe = nil // once: an EXECUTE's prepared statement is not described again
		d(st.cols)
	}
	if !st.noSnapshot {
		s.txn.StatementSnapshot()
	}
	tag, err := s.runPlan(&ec, run, emit)
	st.planDone(ec.plan, s.gucs.String("plan_cache_mode"), ec.runtimePruned)
	err = s.afterStatement(&ec, err) // fire the statement's foreign-key checks and actions (ri.go)
	if err != nil {
		return "", err
	}
	if st.writes {
		s.txn.CommandCounterIncrement()
	}
	return tag, nil
}

// replan analyses st's text again against the current catalog;
// newColumns: the client has not been told st's result columns yet.
func (s *Session) replan(st *Stmt, newColumns bool) (*Stmt, error) {
	tree, err := pg.Parse(st.Text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, parseError(err)
	}
	params := append([]Type(nil), st.params...)
	fresh, err := s.analyze(tree.Stmts[0].Stmt, st.Text, &params)
	if err != nil {
		return nil, err
	}
	if !newColumns && !sameColumns(fresh.cols, st.cols) {
		return nil, pgerr.NotSupported("cached plan must not change result type")
	}
	named, customPlans, genericPlans, choice := st.named, st.customPlans, st.genericPlans, st.choice
	*st = *fresh
	st.params = params
	// the cached generic plan is invalid; the counts stay (PostgreSQL
	// keeps a plan source's custom plan statistics across invalidation)
	st.named, st.customPlans, st.genericPlans, st.choice = named, customPlans, genericPlans, choice
	return st, nil
}

func sameColumns(a, b []Column) bool {
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
	switch s.tx {
	case txBlock:
		s.tx = txFailed
		if len(s.savepoints) > 0 {
			s.abortInnermostSavepoint()
			return
		}
		// PostgreSQL's AbortTransaction runs at the error, not at the
		// ROLLBACK: the transaction's locks are released and its xid
		// aborted at once, so others stop waiting for a session that sits
		// in a failed block; the block itself lasts until ROLLBACK.
		s.abortCatalog()
		s.txn.Abort()
		s.gucs.AbortTxn()
		s.locks.ReleaseTransactionLocks(s.proc)
		s.refreshFormat()
	case txImplicit:
		s.endTxn(false)
	}
}

// Sync ends an implicit transaction (the end of a simple Query message or
// an extended-protocol Sync), committing it.
func (s *Session) Sync() {
	if s.tx == txImplicit {
		s.endTxn(true)
	}
}

// Abort rolls back whatever transaction is open (connection loss, fatal
// errors).
func (s *Session) Abort() {
	if s.tx != txNone {
		s.endTxn(false)
	}
}

// Close ends the session: any open transaction is rolled back and every
// lock it holds, session-level ones included, is released.
func (s *Session) Close() {
	s.Abort()
	s.eng.mu.Lock()
	s.stats.addTo(&s.eng.closedStmts)
	delete(s.eng.live, s.pid)
	s.eng.mu.Unlock()
	s.proc.Close()
}

// beginTxn starts a transaction: like PostgreSQL, every transaction holds
// ExclusiveLock on its own virtual xid (taken through the fast path).
func (s *Session) beginTxn(now time.Time, kind txState) {
	s.tx = kind
	s.xactStart = now
	s.lxid++
	s.locks.BeginVirtualXact(s.proc, s.lxid)
	s.txns.Begin(&s.txn, s.proc, isolationOf(s.gucs.String("default_transaction_isolation")))
	s.gucs.BeginTxn()
	s.startTxnSettings()
}

// endTxn commits or aborts: settings are kept or undone and every
// transaction-level lock is released.
func (s *Session) endTxn(commit bool) {
	if commit {
		if err := s.commitCatalog(); err != nil {
			s.notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the catalog: "+err.Error())
		}
		if err := s.txn.Commit(); err != nil {
			s.notice(pgerr.SeverityWarning, pgerr.InternalError, "commit: "+err.Error())
		}
		s.gucs.CommitTxn()
	} else {
		s.abortCatalog()
		s.txn.Abort()
		s.gucs.AbortTxn()
	}
	s.locks.ReleaseTransactionLocks(s.proc)
	s.tx = txNone
	s.popSavepoints(0)
	s.refreshFormat()
}

func (s *Backend) signalBackend(pid int32, terminate bool) (Datum, error) {
	var ok bool
	if terminate {
		ok = s.host.TerminateBackend(pid)
	} else {
		ok = s.host.CancelBackend(pid)
	}
	if !ok {
		s.notice(pgerr.SeverityWarning, pgerr.Warning, "PID "+itoa(int64(pid))+" is not a PostgreSQL backend process")
	}
	return boolDatum(ok), nil
}

func itoa(i int64) string { return string(appendText(nil, TypeInt8, intDatum(i), nil)) }

// StatementTimeout is the session's statement_timeout.
func (s *Session) StatementTimeout() time.Duration {
	return time.Duration(s.gucs.Int("statement_timeout")) * time.Millisecond
}

// IdleInTransactionTimeout is idle_in_transaction_session_timeout.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	return time.Duration(s.gucs.Int("idle_in_transaction_session_timeout")) * time.Millisecond
}

func typeByOID(oid uint32) (Type, bool) {
	for _, t := range []Type{TypeBool, TypeChar, TypeName, TypeInt2, TypeInt4, TypeInt8, TypeOid, TypeXid,
		TypeFloat4, TypeFloat8, TypeNumeric, TypeText, TypeVarchar, TypeBpchar, TypeUnknown, TypeDate,
		TypeTimestamp, TypeTimestamptz, TypeInterval, TypeTextArray, TypeInt4Array,
		TypeTid, TypeRegproc, TypeRegclass, TypeRegtype, TypeRegrole, TypeRegnsp} {
		if t.OID == oid {
			if t.OID == OIDUnknown {
				return Type{}, true
			}
			return t, true
		}
	}
	return Type{}, false
}

// SetQueryText records the text of the Query message being run, which
// pg_stat_activity shows (as PostgreSQL does, the whole string); "" makes
// each statement show its own text (the extended protocol).
func (s *Session) SetQueryText(q string) { s.queryText = q }

// Fail records an error raised outside Execute (a parse or bind error):
// an open block becomes failed, an implicit transaction is rolled back.
func (s *Session) Fail() { s.failStatement() }

// InFailedBlock reports whether only COMMIT/ROLLBACK may run.
func (s *Session) InFailedBlock() bool { return s.tx == txFailed }

// AllowedInFailedBlock reports whether st may run in a failed block.
func (st *Stmt) AllowedInFailedBlock() bool { return st.txControl }
