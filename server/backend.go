package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/sql"
)

// backend is one client connection: PostgreSQL's backend process. Its
// goroutine owns everything except the fields under mu, which other
// goroutines use to cancel or terminate it.
type backend struct {
	srv    *Server
	conn   net.Conn
	frames frameReader // between conn and be: typed framing errors
	be     *pgproto3.Backend
	pid    int32
	secret [4]byte
	sess   *sql.Session
	gucs   *guc.Session
	user   string
	app    string

	mu         sync.Mutex
	stmtCancel context.CancelCauseFunc // guarded by mu; the running statement
	// terminated is set once by terminate, under mu (which orders it
	// against stmtCancel); read without mu, as run does at every message.
	terminated atomic.Pointer[pgerr.Error]
	// idleDeadline: run has set a read deadline for
	// idle_in_transaction_session_timeout that is not cleared yet.
	idleDeadline bool

	unnamed        *sql.Stmt // the unnamed prepared statement; named ones are the session's
	ignoreTillSync bool
	unflushed      int // bytes of rows sent since the last flush

	// The statements' context (statementContext) and its cancel, kept
	// from one statement to the next until one is cancelled, and the
	// running statement's statement_timeout.
	stmtCtx     context.Context
	stmtStop    context.CancelCauseFunc
	timeoutStop context.CancelFunc // nil: no statement_timeout

	// Messages reused from one send to the next: Send encodes a message
	// at once, so nothing holds them after it.
	row      rowMsg
	rowDesc  rowDescMsg
	cc       pgproto3.CommandComplete
	tag      []byte // cc's CommandTag
	rfq      pgproto3.ReadyForQuery
	rowCols  []sql.Column // the columns and formats emitRow sends, during an Execute
	rowFmts  []int16
	emitRows func([]sql.Datum) error // sends a row of rowCols; made once
}

// cancel interrupts the running statement, if any, with cause.
func (b *backend) cancel(cause error) {
	b.mu.Lock()
	if b.stmtCancel != nil {
		b.stmtCancel(cause)
	}
	b.mu.Unlock()
}

// terminate ends the session: the running statement is cancelled, an
// idle read is interrupted, and the client gets a FATAL e.
func (b *backend) terminate(e *pgerr.Error) {
	b.mu.Lock()
	b.terminated.CompareAndSwap(nil, e)
	if b.stmtCancel != nil {
		b.stmtCancel(e)
	}
	b.mu.Unlock()
	_ = b.conn.SetReadDeadline(time.Now())
}

// terminatedErr is the error terminate set, or nil.
func (b *backend) terminatedErr() *pgerr.Error { return b.terminated.Load() }

// handle serves one connection from startup to exit.
func (s *Server) handle(conn net.Conn) {
	raw := conn
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, raw)
		s.mu.Unlock()
		s.wg.Done()
	}()
	timeout := authTimeout(s.settings.Value("authentication_timeout").Int)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	st, err := s.readStartup(conn)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.log.Info("startup packet timed out", "remote", conn.RemoteAddr().String())
		} else if !errors.Is(err, io.EOF) {
			s.log.Info("bad startup packet", "remote", conn.RemoteAddr().String(), "err", err)
		}
		return
	}
	if st.cancel {
		return
	}
	conn = st.conn // encrypted after SSL
	how, err := s.authenticate(conn, st.params)
	if err != nil {
		var pe *pgerr.Error
		if errors.As(err, &pe) {
			writeFatal(conn, pe)
		}
		return
	}
	b, ferr := s.newBackend(conn, st.params, how)
	if ferr != nil {
		writeFatal(conn, ferr)
		return
	}
	defer s.endBackend(b)
	_ = conn.SetDeadline(time.Time{})
	b.run()
}

func (b *backend) send(m pgproto3.BackendMessage) { b.be.Send(m) }

// run is the session's message loop. A panic is caught here: the client
// gets XX000, the transaction is aborted (releasing its locks), and the
// server carries on.
func (b *backend) run() {
	defer func() {
		if r := recover(); r != nil {
			b.srv.log.Error("panic in session", "pid", b.pid, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			b.sess.Proc.ReleaseAllLWLocks()
			b.sess.Abort()
			b.send(errorResponse(&pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InternalError,
				Message: fmt.Sprintf("internal error: %v", r)}))
			_ = b.be.Flush()
		}
	}()
	if err := b.greet(); err != nil {
		return
	}
	for {
		idleTimeout := time.Duration(0)
		if b.sess.TxStatus() != sql.TxIdle {
			idleTimeout = b.sess.IdleInTransactionTimeout()
		}
		// A deadline costs a timer update in the runtime's poller, so
		// none is cleared that was never set: between the messages of
		// an extended-protocol pipeline outside a transaction, nothing
		// changes here.
		if idleTimeout > 0 {
			_ = b.conn.SetReadDeadline(time.Now().Add(idleTimeout))
			b.idleDeadline = true
		} else if b.idleDeadline {
			_ = b.conn.SetReadDeadline(time.Time{})
			b.idleDeadline = false
		}
		// Checked after the deadline is set: a terminate that came before
		// is seen here, and one that comes after sets its own deadline
		// after ours, so the read below returns at once. (Checked before
		// setting it, a terminate in between had its deadline cleared and
		// the next query ran.)
		if e := b.terminatedErr(); e != nil {
			b.fatal(e)
			return
		}
		msg, err := b.be.Receive()
		if err != nil {
			if e := b.terminatedErr(); e != nil {
				b.fatal(e)
				return
			}
			if e := receiveError(err, idleTimeout > 0); e != nil {
				b.fatal(e)
			}
			return // nil: the client went away; endBackend aborts its transaction
		}
		if done := b.dispatch(msg); done {
			return
		}
	}
}

// dispatch handles one message; it reports whether the session ends.
func (b *backend) dispatch(msg pgproto3.FrontendMessage) bool {
	switch m := msg.(type) {
	case *pgproto3.Query:
		b.ignoreTillSync = false
		b.simpleQuery(m.String)
	case *pgproto3.Parse:
		b.parse(m)
	case *pgproto3.Bind:
		b.bind(m)
	case *pgproto3.Describe:
		b.describe(m)
	case *pgproto3.Execute:
		b.execute(m)
	case *pgproto3.Close:
		b.closeMsg(m)
	case *pgproto3.Sync:
		b.ignoreTillSync = false
		if err := b.sess.Sync(); err != nil {
			b.sendError(err)
		}
		b.readyForQuery()
	case *pgproto3.Flush:
		_ = b.be.Flush()
	case *pgproto3.Terminate:
		b.sess.SetEndCause(sql.EndNormal)
		return true
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// PostgreSQL ignores these outside COPY (a failed COPY's leftovers).
	case *pgproto3.FunctionCall:
		b.extendedError(pgerr.NotSupported("the fast-path function call interface is not supported"))
	case *pgproto3.PasswordMessage:
		// 'p' is only valid during authentication.
		b.fatal(protocolError(fmt.Sprintf("invalid frontend message type %d", 'p')))
		return true
	default:
		b.fatal(protocolError(fmt.Sprintf("unexpected frontend message %T", msg)))
		return true
	}
	if e := b.terminatedErr(); e != nil {
		b.fatal(e)
		return true
	}
	return false
}

func (b *backend) sendReports() {
	for _, p := range b.gucs.PendingReports() {
		b.send(&pgproto3.ParameterStatus{Name: p.Name, Value: p.Value})
	}
}

func (b *backend) sendNotices() {
	for _, n := range b.sess.TakeNotices() {
		b.send(noticeResponse(n))
	}
}

func (b *backend) readyForQuery() {
	b.sess.ClosePortalsOutsideTransaction() // portals do not outlive their transaction
	b.unflushed = 0
	b.sess.Idle()
	b.sendNotices()
	b.sendReports()
	b.rfq.TxStatus = byte(b.sess.TxStatus())
	b.send(&b.rfq)
	_ = b.be.Flush()
}

// sendCommandComplete sends a CommandComplete with tag.
func (b *backend) sendCommandComplete(tag string) {
	b.tag = append(b.tag[:0], tag...)
	b.cc.CommandTag = b.tag
	b.send(&b.cc)
}

// statementContext returns the context of one statement: cancellable by
// CancelRequest or terminate, bounded by statement_timeout. endStatement
// ends it.
//
// A statement that was not cancelled leaves its context to the next:
// endStatement disarms it under mu, so no cancel can reach it between
// statements, and nothing keeps a statement's context past its end (a
// suspended portal runs on the context of the fetch that resumes it,
// sql/portal.go). A cancelled one is dropped and the next statement
// gets a new one. statement_timeout's deadline is a context of its own,
// made for each statement.
func (b *backend) statementContext() context.Context {
	if b.stmtCtx == nil {
		b.stmtCtx, b.stmtStop = context.WithCancelCause(context.Background())
	}
	ctx := b.stmtCtx
	if d := b.sess.StatementTimeout(); d > 0 {
		ctx, b.timeoutStop = context.WithTimeoutCause(ctx, d, errStmtTimeout)
	}
	b.mu.Lock()
	if e := b.terminated.Load(); e != nil {
		b.stmtStop(e)
	}
	b.stmtCancel = b.stmtStop
	b.mu.Unlock()
	return ctx
}

// endStatement ends the context statementContext made.
func (b *backend) endStatement() {
	b.mu.Lock()
	b.stmtCancel = nil
	b.mu.Unlock()
	if b.timeoutStop != nil {
		b.timeoutStop()
		b.timeoutStop = nil
	}
	if b.stmtCtx.Err() != nil {
		b.stmtCtx, b.stmtStop = nil, nil
	}
}
