package sql

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"lockd/guc"
	"lockd/pgerr"
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
	hostRef  Host
	views    map[string]*view
	started  time.Time
}

// NewEngine returns an engine over the given settings registry.
func NewEngine(settings *guc.Registry, host Host) *Engine {
	e := &Engine{settings: settings, hostRef: host, started: time.Now(), views: map[string]*view{}}
	for _, v := range []*view{settingsView()} {
		e.views[v.name] = v
	}
	return e
}

func (e *Engine) host() Host { return e.hostRef }

// TxStatus is the ReadyForQuery transaction indicator.
type TxStatus byte

const (
	TxIdle   TxStatus = 'I'
	TxInBlock TxStatus = 'T'
	TxFailed TxStatus = 'E'
)

type txState uint8

const (
	txNone     txState = iota // no transaction
	txImplicit                // an implicit transaction (statement or query string)
	txBlock                   // BEGIN ... 
	txFailed                  // a block that saw an error
)

// wait events a session reports outside the lock manager.
type waitEvent uint32

const (
	waitNone waitEvent = iota
	waitPgSleep
	waitClientRead
)

// Session is one backend's SQL state. It is used by its connection's
// goroutine only, except for the fields read by other sessions through
// atomics (wait event).
type Session struct {
	eng      *Engine
	gucs     *guc.Session
	pid      int32
	user     string
	database string

	tx        txState
	xactStart time.Time
	stmtStart time.Time

	fc       formatCtx
	tzName   string
	notices  []*pgerr.Error
	cache    map[string][]*Stmt
	wait     atomic.Uint32
}

// SessionInfo identifies a new backend.
type SessionInfo struct {
	PID      int32
	User     string
	Database string
	Settings *guc.Session
}

// NewSession starts the SQL state of one backend.
func (e *Engine) NewSession(info SessionInfo) *Session {
	s := &Session{eng: e, gucs: info.Settings, pid: info.PID, user: info.User, database: info.Database,
		cache: map[string][]*Stmt{}}
	s.refreshFormat()
	return s
}

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

func (s *Session) notice(severity, code, msg string) {
	s.notices = append(s.notices, &pgerr.Error{Severity: severity, Code: code, Message: msg})
}

func (s *Session) setWaitEvent(w waitEvent) { s.wait.Store(uint32(w)) }

func (s *Session) refreshFormat() {
	tz := s.gucs.String("TimeZone")
	if tz == s.tzName && s.fc.loc != nil {
		return
	}
	s.tzName = tz
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	s.fc.loc = loc
}

// Stmt is an analysed statement, reusable across executions.
type Stmt struct {
	Text      string
	Tag       string // command tag prefix, e.g. "SELECT", "SET"
	cols      []Column
	params    []Type
	txControl bool // allowed in a failed block (COMMIT, ROLLBACK)
	noBlock   string // non-empty: may not run inside a transaction block
	cacheable bool
	run       func(ec *evalCtx, emit func([]Datum) error) (string, error)
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
// result means an empty query.
func (s *Session) Parse(query string) ([]*Stmt, error) {
	if sts, ok := s.cache[query]; ok {
		return sts, nil
	}
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	sts := make([]*Stmt, 0, len(tree.Stmts))
	cacheable := true
	for _, raw := range tree.Stmts {
		text := stmtText(query, raw)
		var params []Type
		st, err := s.analyze(raw.Stmt, text, &params)
		if err != nil {
			return nil, err
		}
		if len(params) > 0 {
			return nil, pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", len(params))
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

// Prepare analyses one statement for the extended protocol. paramOIDs
// are the client's declared types (0 = infer).
func (s *Session) Prepare(query string, paramOIDs []uint32) (*Stmt, error) {
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
	return st, nil
}

// IsEmpty reports whether the statement is an empty query.
func (st *Stmt) IsEmpty() bool { return st.run == nil }

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
	if st.run == nil {
		return "", nil
	}
	if s.tx == txFailed && !st.txControl {
		return "", pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.noBlock != "" && s.tx == txBlock {
		return "", pgerr.New(pgerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.noBlock)
	}
	now := time.Now()
	s.stmtStart = now
	if s.tx == txNone {
		s.gucs.Refresh()
		s.refreshFormat()
		s.beginTxn(now, txImplicit)
	}
	ec := evalCtx{s: s, ctx: ctx, params: params}
	tag, err := st.run(&ec, emit)
	if err != nil {
		s.failStatement()
		return "", err
	}
	return tag, nil
}

// failStatement records an error: a block becomes failed; an implicit
// transaction is rolled back at once.
func (s *Session) failStatement() {
	switch s.tx {
	case txBlock:
		s.tx = txFailed
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

// Close ends the session, rolling back any open transaction.
func (s *Session) Close() {
	s.Abort()
}

func (s *Session) beginTxn(now time.Time, kind txState) {
	s.tx = kind
	s.xactStart = now
	s.gucs.BeginTxn()
}

func (s *Session) endTxn(commit bool) {
	if commit {
		s.gucs.CommitTxn()
	} else {
		s.gucs.AbortTxn()
	}
	s.tx = txNone
	s.refreshFormat()
}

func (s *Session) signalBackend(pid int32, terminate bool) (Datum, error) {
	var ok bool
	if terminate {
		ok = s.eng.host().TerminateBackend(pid)
	} else {
		ok = s.eng.host().CancelBackend(pid)
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
		TypeTimestamp, TypeTimestamptz, TypeInterval, TypeTextArray, TypeInt4Array} {
		if t.OID == oid {
			if t.OID == OIDUnknown {
				return Type{}, true
			}
			return t, true
		}
	}
	return Type{}, false
}

// Fail records an error raised outside Execute (a parse or bind error):
// an open block becomes failed, an implicit transaction is rolled back.
func (s *Session) Fail() { s.failStatement() }

// InFailedBlock reports whether only COMMIT/ROLLBACK may run.
func (s *Session) InFailedBlock() bool { return s.tx == txFailed }

// AllowedInFailedBlock reports whether st may run in a failed block.
func (st *Stmt) AllowedInFailedBlock() bool { return st.txControl }
