package server

import (
	"bytes"
	"crypto/subtle"
	"crypto/tls"
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
	maxStartupPacket  = 10000
)

// startupResult is what a connection asked for in its startup packet.
type startupResult struct {
	params map[string]string
	cancel bool
	conn   net.Conn // the connection from here on: a *tls.Conn after SSL
}

// readStartup reads packets until a StartupMessage or a CancelRequest
// (handled here). An SSLRequest is answered 'S' and followed by the TLS
// handshake when ssl is on (tls.go), 'N' otherwise; a GSSAPI encryption
// request is answered 'N'. Packets are read straight from the connection,
// unbuffered, so nothing a client sends after the startup packet is lost
// (and nothing sent in plaintext after an SSLRequest is read as part of
// the TLS stream's packets: the handshake fails on it).
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
			ts := s.tls.Load()
			if ts == nil {
				if _, err := conn.Write([]byte{'N'}); err != nil {
					return nil, err
				}
				continue
			}
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return nil, err
			}
			tc := tls.Server(conn, ts.cfg)
			if err := tc.Handshake(); err != nil {
				return nil, fmt.Errorf("could not accept SSL connection: %w", err)
			}
			conn = tc
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
			// Any 3.x is accepted, as PostgreSQL 15 does, and negotiated
			// down to 3.0.
			minor := code & 0xffff
			params, ok := parseStartupParams(body)
			if !ok {
				e := protocolError("invalid startup packet layout: expected terminator as last byte")
				writeFatal(conn, e)
				return nil, e
			}
			res := &startupResult{params: params, conn: conn}
			if minor != 0 || hasProtocolOptions(params) {
				var unrecognized []string
				for k := range params {
					if strings.HasPrefix(k, "_pq_.") {
						unrecognized = append(unrecognized, k)
						delete(params, k)
					}
				}
				neg := &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unrecognized}
				buf, _ := neg.Encode(nil)
				if _, err := conn.Write(buf); err != nil {
					return nil, err
				}
			}
			return res, nil
		default:
			// A repeated SSLRequest or GSSENCRequest lands here too, as in
			// PostgreSQL's ProcessStartupPacket.
			e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported,
				Message: fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)}
			writeFatal(conn, e)
			return nil, e
		}
	}
}

// parseStartupParams reads the name/value pairs of a StartupMessage body
// (after the protocol version) as PostgreSQL's ProcessStartupPacket does:
// pairs up to an empty name, and the packet must end right after that
// terminator. An empty list (just the terminator) is valid.
func parseStartupParams(body []byte) (map[string]string, bool) {
	cstr := func(off int) string {
		if i := bytes.IndexByte(body[off:], 0); i >= 0 {
			return string(body[off : off+i])
		}
		return string(body[off:])
	}
	params := map[string]string{}
	off := 4
	for off < len(body) {
		name := cstr(off)
		if name == "" {
			break
		}
		voff := off + len(name) + 1
		if voff >= len(body) {
			break // missing value
		}
		val := cstr(voff)
		params[name] = val
		off = voff + len(val) + 1
	}
	return params, off == len(body)-1
}

func hasProtocolOptions(p map[string]string) bool {
	for k := range p {
		if strings.HasPrefix(k, "_pq_.") {
			return true
		}
	}
	return false
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

func authTimeout(v int64) time.Duration { return time.Duration(v) * time.Second }
