package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/pgerr"
)

// Startup packet codes (protocol.sgml).
const (
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
	codeCancelRequest = 80877102
	protocol30        = 3 << 16
	maxStartupPacket  = 10000
)

// startupResult is what a connection asked for in its startup packet.
type startupResult struct {
	params map[string]string
	cancel bool
}

// readStartup reads packets until a StartupMessage (answering SSL and
// GSSAPI encryption requests with 'N') or a CancelRequest (handled here).
// Packets are read straight from the connection, unbuffered, so nothing
// a client sends after the startup packet is lost.
func (s *Server) readStartup(conn net.Conn) (*startupResult, error) {
	var hdr [4]byte
	sslDone, gssDone := false, false
	for {
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return nil, err
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[:])))
		if n < 8 || n > maxStartupPacket {
			return nil, fmt.Errorf("invalid length of startup packet: %d", n)
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(conn, body); err != nil {
			return nil, fmt.Errorf("incomplete startup packet: %w", err)
		}
		code := binary.BigEndian.Uint32(body)
		switch {
		case code == codeSSLRequest && !sslDone:
			sslDone = true
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		case code == codeGSSENCRequest && !gssDone:
			gssDone = true
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		case code == codeCancelRequest:
			if len(body) != 12 {
				return nil, fmt.Errorf("invalid length of cancel request packet: %d", n)
			}
			s.handleCancel(int32(binary.BigEndian.Uint32(body[4:])), body[8:12])
			return &startupResult{cancel: true}, nil
		case code>>16 == 3:
			var m pgproto3.StartupMessage
			minor := code & 0xffff
			if minor != 0 {
				// Decode insists on 3.0 or 3.2; we answer as PostgreSQL 15:
				// accept, and negotiate down to 3.0.
				binary.BigEndian.PutUint32(body, protocol30)
			}
			if err := m.Decode(body); err != nil {
				return nil, protocolError("invalid startup packet layout: expected terminator as last byte")
			}
			res := &startupResult{params: m.Parameters}
			if minor != 0 || hasProtocolOptions(m.Parameters) {
				var unrecognized []string
				for k := range m.Parameters {
					if strings.HasPrefix(k, "_pq_.") {
						unrecognized = append(unrecognized, k)
						delete(m.Parameters, k)
					}
				}
				neg := &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unrecognized}
				buf, _ := neg.Encode(nil)
				if _, err := conn.Write(buf); err != nil {
					return nil, err
				}
			}
			return res, nil
		case code == codeSSLRequest || code == codeGSSENCRequest:
			return nil, protocolError("received unencrypted data after SSL request")
		default:
			e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported,
				Message: fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)}
			writeFatal(conn, e)
			return nil, e
		}
	}
}

func hasProtocolOptions(p map[string]string) bool {
	for k := range p {
		if strings.HasPrefix(k, "_pq_.") {
			return true
		}
	}
	return false
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
		Detail: e.Detail, Hint: e.Hint, Position: e.Position,
	}
}

func noticeResponse(e *pgerr.Error) *pgproto3.NoticeResponse {
	r := pgproto3.NoticeResponse(*errorResponse(e))
	return &r
}

// handleCancel cancels the statement running in the backend with that
// pid and key. Nothing is ever written back (libpq waits for the close).
func (s *Server) handleCancel(pid int32, key []byte) {
	b := s.backend(pid)
	if b == nil {
		s.log.Info("cancel request for unknown backend", "pid", pid)
		return
	}
	if subtle.ConstantTimeCompare(b.secret[:], key) != 1 {
		s.log.Info("wrong key in cancel request", "pid", pid)
		return
	}
	b.cancel(errCanceled)
}

func newSecret() [4]byte {
	var k [4]byte
	_, _ = rand.Read(k[:])
	return k
}

func authTimeout(v int64) time.Duration { return time.Duration(v) * time.Second }
