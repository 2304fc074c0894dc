package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/pgerr"
	"lockd/sql"
)

// Error reporting: the errors the server itself raises, and the one place
// where an error becomes an ErrorResponse or a NoticeResponse.

var (
	errAdminShutdown = &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.AdminShutdown, Message: "terminating connection due to administrator command"}
	errCanceled      = pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
	errStmtTimeout   = pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout")
	errIdleTimeout   = &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.IdleInTransactionTimeout, Message: "terminating connection due to idle-in-transaction timeout"}
)

// receiveError classifies an error from reading the next frontend message:
// it returns the FATAL error to send, or nil when the client went away and
// there is no one to send it to. idle says the read's deadline was
// idle_in_transaction_session_timeout.
func receiveError(err error, idle bool) *pgerr.Error {
	var (
		ne      net.Error
		tooBig  *pgproto3.ExceededMaxBodyLenErr
		badType *invalidMessageTypeError
		badLen  *invalidMessageLengthError
	)
	switch {
	case errors.As(err, &ne) && ne.Timeout() && idle:
		return errIdleTimeout
	case errors.As(err, &tooBig):
		return protocolError(fmt.Sprintf("invalid message length %d (max_message_size is %d)", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	case errors.As(err, &badType):
		return protocolError(badType.Error())
	case errors.As(err, &badLen):
		return protocolError("invalid message length") // pq_getmessage's words, without the number
	}
	return protocolError("could not decode frontend message: " + err.Error())
}

func protocolError(msg string) *pgerr.Error {
	return &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: msg}
}

// writeFatal sends one ErrorResponse directly (before a pgproto3 backend
// exists).
func writeFatal(conn net.Conn, e *pgerr.Error) {
	buf, err := errorResponse(e).Encode(nil)
	if err == nil {
		_, _ = conn.Write(buf)
	}
}

func errorResponse(e *pgerr.Error) *pgproto3.ErrorResponse {
	sev := e.Severity
	if sev == "" {
		sev = pgerr.SeverityError
	}
	return &pgproto3.ErrorResponse{
		Severity: sev, SeverityUnlocalized: sev, Code: e.Code, Message: e.Message,
		Detail: e.Detail, Hint: e.Hint, Position: e.Position, Where: e.Where,
		SchemaName: e.SchemaName, TableName: e.TableName, ColumnName: e.ColumnName,
		DataTypeName: e.DataTypeName, ConstraintName: e.ConstraintName,
	}
}

func noticeResponse(e *pgerr.Error) *pgproto3.NoticeResponse {
	r := pgproto3.NoticeResponse(*errorResponse(e))
	return &r
}

// fatal sends a FATAL error and ends the session.
func (b *backend) fatal(e *pgerr.Error) {
	if b.terminatedErr() != nil {
		b.sess.SetEndCause(sql.EndKilled) // pg_terminate_backend or shutdown
	} else {
		b.sess.SetEndCause(sql.EndFatal)
	}
	b.sess.Abort()
	ee := *e
	ee.Severity = pgerr.SeverityFatal
	b.send(errorResponse(&ee))
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
