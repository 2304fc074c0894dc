package sql

import (
	"net"
	"time"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/sql/commands"
	"lockd/sql/exec"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// SetCopySource installs the data source for the next COPY FROM STDIN.
func (s *Session) SetCopySource(src exec.CopySource) { s.CopySrc = src }

// SetCopySink installs the destination of the next COPY TO STDOUT.
func (s *Session) SetCopySink(sink exec.CopySink) { s.CopySink = sink }

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
	// backendType is pg_stat_activity.backend_type: "" for a client
	// backend, "autovacuum worker" for autovacuum's (autovacuum.go)
	backendType string
	endCause    EndCause           // how the session ended, for pg_stat_database
	portals     map[string]*portal // cursors and protocol portals by name (portal.go)
	streaming   []*portal          // the portals whose executor is suspended
	spareParams []types.Datum      // the parameters of the unnamed portal the last Bind replaced
	multiStmt   bool               // the current simple query has several statements (an implicit block)
	ssl         *SSLInfo           // the connection's encryption (nil: none), for pg_stat_ssl
	// stmtEC is the evaluation context of a statement runStmt runs,
	// kept for the next one; stmtECBusy says a run holds it, and a
	// statement run meanwhile (EXECUTE's) makes its own (execute.go)
	stmtEC     expr.EvalCtx
	stmtECBusy bool
}

// SessionInfo identifies a new backend.
type SessionInfo struct {
	PID        int32
	User       string
	Database   string
	Settings   *guc.Session
	ClientAddr net.Addr
	// ServerAddr is the address the connection was accepted on
	// (inet_server_addr).
	ServerAddr net.Addr
	// BackendType is pg_stat_activity.backend_type for a background
	// worker ("autovacuum worker"); "" is a client backend.
	BackendType string
	// SSL describes an encrypted connection (nil: not encrypted), for
	// pg_stat_ssl.
	SSL *SSLInfo
}

// SSLInfo is what pg_stat_ssl shows of an encrypted connection.
type SSLInfo struct {
	Version, Cipher string
	Bits            int
	// The client certificate's subject, serial number (decimal) and
	// issuer ("" without one).
	ClientDN, ClientSerial, IssuerDN string
}

// TakeNotices returns and clears the notices raised since the last call.
func (s *Session) TakeNotices() []*pgerr.Error {
	n := s.Notices
	s.Notices = nil
	return n
}

// Close ends the session: any open transaction is rolled back and every
// lock it holds, session-level ones included, is released.
func (s *Session) Close() {
	s.Abort()
	s.act.mu.Lock()
	total, active, idle := s.act.times(time.Now())
	s.act.mu.Unlock()
	s.eng.mu.Lock()
	s.stats.addTo(&s.eng.closedStmts)
	if s.backendType == "" {
		c := &s.eng.closedSessions
		c.sessions++
		c.sessionTime += total
		c.activeTime += active
		c.idleInXactTime += idle
		switch s.endCause {
		case EndAbandoned:
			c.abandoned++
		case EndFatal:
			c.fatal++
		case EndKilled:
			c.killed++
		}
	}
	delete(s.eng.live, s.PID)
	s.eng.mu.Unlock()
	s.Activity.Close()
	s.Proc.Close()
}

// EndCause is how a session ended, as pg_stat_database counts them.
type EndCause uint8

const (
	EndAbandoned EndCause = iota // the connection was lost without a Terminate message
	EndNormal                    // the client sent Terminate
	EndFatal                     // a FATAL error ended it
	EndKilled                    // an operator ended it (pg_terminate_backend, shutdown)
)

// SetEndCause records how the session is ending; the server calls it
// before Close.
func (s *Session) SetEndCause(c EndCause) { s.endCause = c }

// EndCause returns what SetEndCause recorded (EndAbandoned if nothing).
func (s *Session) EndCause() EndCause { return s.endCause }

// StatementTimeout is the session's statement_timeout.
func (s *Session) StatementTimeout() time.Duration {
	return time.Duration(s.Settings.IntAt(gucStatementTimeout)) * time.Millisecond
}

// IdleInTransactionTimeout is idle_in_transaction_session_timeout.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	return time.Duration(s.Settings.IntAt(gucIdleInTransactionTimeout)) * time.Millisecond
}

// SetQueryText records the text of the Query message being run, which
// pg_stat_activity shows (as PostgreSQL does, the whole string); "" makes
// each statement show its own text (the extended protocol).
func (s *Session) SetQueryText(q string) { s.queryText = q }
