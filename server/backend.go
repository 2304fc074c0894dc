package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	be     *pgproto3.Backend
	pid    int32
	secret [4]byte
	sess   *sql.Session
	gucs   *guc.Session
	user   string
	app    string

	mu         sync.Mutex
	stmtCancel context.CancelCauseFunc // guarded by mu; the running statement
	terminated *pgerr.Error            // guarded by mu; set by terminate

	unnamed        *sql.Stmt // the unnamed prepared statement; named ones are the session's
	portals        map[string]*portal
	ignoreTillSync bool
	row            rowMsg
	unflushed      int // bytes of rows sent since the last flush
}

// testHook is set only by tests (export_test.go).
var testHook func(query string)

// rowMsg is a DataRow encoded in place, so that sending a row costs no
// allocation.
type rowMsg struct{ buf []byte }

func (r *rowMsg) Decode([]byte) error               { return errors.New("rowMsg is send-only") }
func (r *rowMsg) Encode(dst []byte) ([]byte, error) { return append(dst, r.buf...), nil }
func (r *rowMsg) Backend()                          {}

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
	if b.terminated == nil {
		b.terminated = e
	}
	if b.stmtCancel != nil {
		b.stmtCancel(e)
	}
	b.mu.Unlock()
	_ = b.conn.SetReadDeadline(time.Now())
}

func (b *backend) terminatedErr() *pgerr.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.terminated
}

// handle serves one connection from startup to exit.
func (s *Server) handle(conn net.Conn) {
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
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
	b, ferr := s.newBackend(conn, st.params)
	if ferr != nil {
		writeFatal(conn, ferr)
		return
	}
	defer s.endBackend(b)
	_ = conn.SetDeadline(time.Time{})
	b.run()
}

// newBackend authenticates (trust), checks limits and builds the session.
func (s *Server) newBackend(conn net.Conn, params map[string]string) (*backend, *pgerr.Error) {
	user := params["user"]
	if user == "" {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "no PostgreSQL user name specified in startup packet"}
	}
	db := params["database"]
	if db == "" {
		db = user
	}
	if params["replication"] != "" && params["replication"] != "false" && params["replication"] != "0" {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported, Message: "replication connections are not supported by lockd"}
	}
	client := map[string]string{}
	for k, v := range params {
		switch k {
		case "user", "database", "replication":
			continue
		}
		client[k] = v
	}
	gs, errs := s.settings.NewSession(client)
	if len(errs) > 0 {
		e := pgerr.From(errs[0])
		e.Severity = pgerr.SeverityFatal
		return nil, e
	}
	if err := gs.SetInternal("session_authorization", user); err != nil {
		e := pgerr.From(err)
		e.Severity = pgerr.SeverityFatal
		return nil, e
	}
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.CannotConnectNow, Message: "the database system is shutting down"}
	}
	if int64(len(s.backends)) >= s.settings.Value("max_connections").Int {
		s.mu.Unlock()
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.TooManyConnections, Message: "sorry, too many clients already"}
	}
	pid := s.nextPID.Add(1)
	b := &backend{srv: s, conn: conn, pid: pid, secret: newSecret(), gucs: gs, user: user,
		app: params["application_name"], portals: map[string]*portal{}}
	s.backends[pid] = b
	s.mu.Unlock()
	sess, err := s.engine.NewSession(sql.SessionInfo{PID: pid, User: user, Database: db, Settings: gs, ClientAddr: conn.RemoteAddr()})
	if err != nil {
		s.mu.Lock()
		delete(s.backends, pid)
		s.mu.Unlock()
		e := pgerr.From(err)
		e.Severity = pgerr.SeverityFatal
		return nil, e
	}
	b.sess = sess
	b.be = pgproto3.NewBackend(conn, conn)
	b.be.SetMaxBodyLen(int(s.settings.Value("max_message_size").Int))
	if s.settings.Value("log_connections").Bool {
		s.log.Info("connection authorized", "pid", pid, "user", user, "database", db, "application_name", b.app, "remote", conn.RemoteAddr().String())
	}
	return b, nil
}

func (s *Server) endBackend(b *backend) {
	b.sess.Close()
	s.mu.Lock()
	delete(s.backends, b.pid)
	s.mu.Unlock()
	if s.settings.Value("log_disconnections").Bool {
		s.log.Info("disconnection", "pid", b.pid, "user", b.user)
	}
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
	b.send(&pgproto3.AuthenticationOk{})
	b.sendReports()
	b.send(&pgproto3.BackendKeyData{ProcessID: uint32(b.pid), SecretKey: b.secret[:]})
	b.send(&pgproto3.ReadyForQuery{TxStatus: byte(b.sess.TxStatus())})
	if err := b.be.Flush(); err != nil {
		return
	}
	for {
		idleTimeout := time.Duration(0)
		if b.sess.TxStatus() != sql.TxIdle {
			idleTimeout = b.sess.IdleInTransactionTimeout()
		}
		if e := b.terminatedErr(); e != nil {
			b.fatal(e)
			return
		}
		if idleTimeout > 0 {
			_ = b.conn.SetReadDeadline(time.Now().Add(idleTimeout))
		} else {
			_ = b.conn.SetReadDeadline(time.Time{})
		}
		msg, err := b.be.Receive()
		if err != nil {
			if e := b.terminatedErr(); e != nil {
				b.fatal(e)
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && idleTimeout > 0 {
				b.fatal(errIdleTimeout)
				return
			}
			var tooBig *pgproto3.ExceededMaxBodyLenErr
			if errors.As(err, &tooBig) {
				b.fatal(protocolError(fmt.Sprintf("invalid message length %d (max_message_size is %d)", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen)))
				return
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return // client went away; the deferred cleanup aborts its transaction
			}
			// pgproto3 reports these as "unknown message type: %c" and
			// "invalid message length: %d"; answer in PostgreSQL's words.
			if rest, ok := strings.CutPrefix(err.Error(), "unknown message type: "); ok {
				typ, _ := utf8.DecodeRuneInString(rest) // %c of the type byte
				b.fatal(protocolError(fmt.Sprintf("invalid frontend message type %d", typ)))
				return
			}
			if strings.HasPrefix(err.Error(), "invalid message length") {
				b.fatal(protocolError("invalid message length"))
				return
			}
			b.fatal(protocolError("could not decode frontend message: " + err.Error()))
			return
		}
		if done := b.dispatch(msg); done {
			return
		}
	}
}

// fatal sends a FATAL error and ends the session.
func (b *backend) fatal(e *pgerr.Error) {
	b.sess.Abort()
	ee := *e
	ee.Severity = pgerr.SeverityFatal
	b.send(errorResponse(&ee))
	_ = b.be.Flush()
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
		b.sess.Sync()
		b.readyForQuery()
	case *pgproto3.Flush:
		_ = b.be.Flush()
	case *pgproto3.Terminate:
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
	if b.sess.TxStatus() == sql.TxIdle && len(b.portals) > 0 {
		clear(b.portals) // portals do not outlive their transaction
	}
	b.unflushed = 0
	b.sess.Idle()
	b.sendNotices()
	b.sendReports()
	b.send(&pgproto3.ReadyForQuery{TxStatus: byte(b.sess.TxStatus())})
	_ = b.be.Flush()
}

// sendError reports a statement error as an ErrorResponse. Context
// causes (cancel, statement_timeout, terminate) carry their own errors.
func (b *backend) sendError(err error) {
	b.sendNotices()
	e := pgerr.From(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		e = errCanceled
	}
	if e.Severity == pgerr.SeverityFatal {
		// terminate() already recorded it; the loop sends the FATAL.
		return
	}
	b.send(errorResponse(e))
}

// statementContext returns the context of one statement: cancellable by
// CancelRequest or terminate, bounded by statement_timeout.
func (b *backend) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := func() { cancel(nil) }
	if d := b.sess.StatementTimeout(); d > 0 {
		var tcancel context.CancelFunc
		ctx, tcancel = context.WithTimeoutCause(ctx, d, errStmtTimeout)
		stop = func() { tcancel(); cancel(nil) }
	}
	b.mu.Lock()
	if b.terminated != nil {
		cancel(b.terminated)
	}
	b.stmtCancel = cancel
	b.mu.Unlock()
	return ctx, func() {
		b.mu.Lock()
		b.stmtCancel = nil
		b.mu.Unlock()
		stop()
	}
}

// encodeRow builds a DataRow for row in b.row and sends it.
func (b *backend) sendRow(cols []sql.Column, formats []int16, row []sql.Datum) error {
	buf := append(b.row.buf[:0], 'D', 0, 0, 0, 0, byte(len(row)>>8), byte(len(row)))
	for i, d := range row {
		if d.Null {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		buf, err = b.sess.AppendValue(buf, cols[i].Type, d, formatFor(formats, i))
		if err != nil {
			return err
		}
		n := len(buf) - at - 4
		buf[at], buf[at+1], buf[at+2], buf[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
	n := len(buf) - 1
	buf[1], buf[2], buf[3], buf[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	b.row.buf = buf
	b.send(&b.row)
	// Large results go out in pieces; small ones wait for ReadyForQuery
	// so that a whole round trip costs one write.
	if b.unflushed += len(buf); b.unflushed > 256<<10 {
		b.unflushed = 0
		return b.be.Flush()
	}
	return nil
}

func formatFor(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	return formats[i]
}

func rowDescription(cols []sql.Column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, c := range cols {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name: []byte(c.Name), TableOID: c.TableOID, TableAttributeNumber: uint16(c.Attnum),
			DataTypeOID: c.Type.OID, DataTypeSize: c.Type.Len, TypeModifier: c.Type.Mod, Format: formatFor(formats, i),
		}
	}
	return rd
}

// simpleQuery runs a Query message: every statement in the string, in one
// implicit transaction unless the string itself manages transactions.
func (b *backend) simpleQuery(q string) {
	if testHook != nil {
		testHook(q)
	}
	b.sess.SetQueryText(q)
	defer b.sess.SetQueryText("")
	sts, params, err := b.sess.Parse(q)
	if err != nil {
		b.sess.Fail()
		b.sendError(err)
		b.sess.Sync()
		b.readyForQuery()
		return
	}
	if len(sts) == 0 {
		b.send(&pgproto3.EmptyQueryResponse{})
		b.readyForQuery()
		return
	}
	for _, st := range sts {
		st, err := b.sess.Resolve(st)
		if err != nil {
			b.sess.Fail()
			b.sendError(err)
			break
		}
		if !b.runStatement(st, params, nil, 0) {
			break
		}
	}
	b.sess.Sync()
	b.readyForQuery()
}

// runStatement executes st, streaming rows; it reports success.
func (b *backend) runStatement(st *sql.Stmt, params []sql.Datum, formats []int16, _ int) bool {
	if b.sess.InFailedBlock() && !st.AllowedInFailedBlock() {
		// Refused before the portal starts: no RowDescription (postgres.c).
		b.sendError(pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block"))
		return false
	}
	// described once its locks are held: a statement that waited behind
	// DDL shows the table as it is now (sql.Session.ExecuteDescribed)
	var cols []sql.Column
	describe := func(c []sql.Column) {
		if cols = c; cols != nil {
			b.send(rowDescription(cols, nil))
		}
	}
	sink := b.prepareCopy(st)
	ctx, done := b.statementContext()
	tag, err := b.sess.ExecuteDescribed(ctx, st, params, describe, func(row []sql.Datum) error {
		return b.sendRow(cols, formats, row)
	})
	done()
	if err != nil {
		b.sendError(err)
		return false
	}
	if sink != nil && sink.began {
		b.send(&pgproto3.CopyDone{})
	}
	b.sendNotices()
	b.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return true
}
