package server

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/auth"
	"lockd/pgerr"
)

// Client authentication, as PostgreSQL 15's ClientAuthentication: the
// first pg_hba.conf rule that matches the connection (type, database,
// user, address) decides the method; no rule is a refusal. Methods:
// trust, reject, scram-sha-256 (SASL), md5 (SCRAM instead when the role's
// password is a SCRAM verifier, as PostgreSQL does) and password
// (cleartext). A role that does not exist, has no password or a password
// of the wrong kind, or whose password has expired goes through the same
// exchange and gets the same message as a wrong password (28P01); the
// server log says why. The whole of it runs under authentication_timeout
// (the connection's deadline, set by handle).

// errAuthEOF is a client that closed the connection during the
// exchange, as psql does when it needs to prompt for a password: no
// message, nothing logged.
var errAuthEOF = errors.New("server: client closed the connection during authentication")

// authenticate runs the authentication of the connection for params'
// user and database, and says how it went for log_connections ("trust",
// or the method and the hba line). A *pgerr.Error is sent to the client;
// errAuthEOF and I/O errors end the connection silently.
func (s *Server) authenticate(conn net.Conn, params map[string]string) (how string, err error) {
	user := params["user"]
	if user == "" {
		return "", &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "no PostgreSQL user name specified in startup packet"}
	}
	db := params["database"]
	if db == "" {
		db = user
	}
	if params["replication"] != "" && params["replication"] != "false" && params["replication"] != "0" {
		return "", &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported, Message: "replication connections are not supported by lockd"}
	}
	h := s.hba.Load()
	if h == nil {
		return "trust (no hba_file)", nil
	}
	host, ip := remoteIP(conn)
	ssl := isTLS(conn)
	enc := "no encryption"
	if ssl {
		enc = "SSL encryption"
	}
	line := h.Match(auth.HBAConn{Addr: ip, SSL: ssl, Database: db, User: user})
	if line == nil {
		e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec,
			Message: fmt.Sprintf("no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", %s", host, user, db, enc)}
		s.log.Warn(e.Message)
		return "", e
	}
	if line.ClientCert != "" {
		c := clientCert(conn)
		if c == nil {
			e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "connection requires a valid client certificate"}
			s.log.Warn(e.Message, "user", user, "hba_line", line.LineNo)
			return "", e
		}
		if line.ClientCert == "verify-full" && c.Subject.CommonName != user {
			e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec,
				Message: fmt.Sprintf("certificate validation (clientcert=verify-full) failed for user \"%s\": CN mismatch", user)}
			s.log.Warn(e.Message, "hba_line", line.LineNo)
			return "", e
		}
	}
	failed := func(detail string) error {
		e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidPassword,
			Message: fmt.Sprintf("password authentication failed for user \"%s\"", user)}
		s.log.Warn(e.Message, "detail", detail, "hba_line", line.LineNo, "remote", host)
		return e
	}
	role := s.inst.engine.Role(user)
	stored, why := "", ""
	switch {
	case role == nil:
		why = fmt.Sprintf("Role \"%s\" does not exist.", user)
	case role.Password == "":
		why = fmt.Sprintf("User \"%s\" has no password assigned.", user)
	case role.Expired(time.Now()):
		why = fmt.Sprintf("User \"%s\" has an expired password.", user)
	default:
		stored = role.Password
	}
	method := line.Method
	if method == "md5" && auth.TypeOf(stored) == auth.PasswordSCRAM {
		method = "scram-sha-256"
	}
	switch method {
	case "trust":
		return fmt.Sprintf("%s (%s:%d)", method, h.File, line.LineNo), nil
	case "reject":
		e := &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec,
			Message: fmt.Sprintf("pg_hba.conf rejects connection for host \"%s\", user \"%s\", database \"%s\", %s", host, user, db, enc)}
		s.log.Warn(e.Message)
		return "", e
	case "scram-sha-256":
		if stored != "" && auth.TypeOf(stored) != auth.PasswordSCRAM {
			why, stored = fmt.Sprintf("User \"%s\" does not have a valid SCRAM secret.", user), ""
		}
		ok, err := s.saslExchange(conn, user, stored)
		if err != nil {
			return "", err
		}
		if !ok {
			if why == "" {
				why = "Password does not match for user \"" + user + "\"."
			}
			return "", failed(why)
		}
		return fmt.Sprintf("%s (%s:%d)", method, h.File, line.LineNo), nil
	case "md5":
		var salt [4]byte
		_, _ = rand.Read(salt[:])
		if err := writeMsg(conn, &pgproto3.AuthenticationMD5Password{Salt: salt}); err != nil {
			return "", err
		}
		pw, err := readPassword(conn)
		if err != nil {
			return "", err
		}
		if stored != "" && auth.TypeOf(stored) != auth.PasswordMD5 {
			why = fmt.Sprintf("User \"%s\" has a password that cannot be used with MD5 authentication.", user)
		}
		if why != "" || !auth.CheckMD5(stored, salt, pw) {
			if why == "" {
				why = "Password does not match for user \"" + user + "\"."
			}
			return "", failed(why)
		}
		return fmt.Sprintf("%s (%s:%d)", method, h.File, line.LineNo), nil
	case "password":
		if err := writeMsg(conn, &pgproto3.AuthenticationCleartextPassword{}); err != nil {
			return "", err
		}
		pw, err := readPassword(conn)
		if err != nil {
			return "", err
		}
		if why != "" {
			// Spend the time a real check takes, so that an unknown user
			// answers as slowly as a wrong password.
			_ = auth.CheckPlain(user, s.mockVerifier, pw)
		}
		if why != "" || !auth.CheckPlain(user, stored, pw) {
			if why == "" {
				why = "Password does not match for user \"" + user + "\"."
			}
			return "", failed(why)
		}
		return fmt.Sprintf("%s (%s:%d)", method, h.File, line.LineNo), nil
	}
	return "", &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "invalid authentication method"}
}

// saslExchange runs SCRAM-SHA-256 with the client. stored is the role's
// verifier ("" for a mock exchange). It reports whether the proof was
// right; a malformed exchange is an error sent to the client.
func (s *Server) saslExchange(conn net.Conn, user, stored string) (bool, error) {
	sc := auth.NewSCRAM(user, stored, s.mockSecret, s.channelBinding(conn))
	if err := writeMsg(conn, &pgproto3.AuthenticationSASL{AuthMechanisms: sc.Mechanisms()}); err != nil {
		return false, err
	}
	body, err := readAuthMessage(conn, "SASL response")
	if err != nil {
		return false, err
	}
	// SASLInitialResponse: mechanism, then the length of the data (-1:
	// none) and the data.
	i := bytes.IndexByte(body, 0)
	if i < 0 || len(body) < i+5 {
		return false, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: "invalid message format"}
	}
	mech := string(body[:i])
	n := int32(binary.BigEndian.Uint32(body[i+1:]))
	data := body[i+5:]
	if n < 0 || int(n) != len(data) {
		return false, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: "invalid message format"}
	}
	first, err := sc.Start(mech, data)
	if err != nil {
		return false, err
	}
	if err := writeMsg(conn, &pgproto3.AuthenticationSASLContinue{Data: first}); err != nil {
		return false, err
	}
	body, err = readAuthMessage(conn, "SASL response")
	if err != nil {
		return false, err
	}
	final, err := sc.Finish(body)
	if errors.Is(err, auth.ErrAuthFailed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, writeMsg(conn, &pgproto3.AuthenticationSASLFinal{Data: final})
}

func writeMsg(conn net.Conn, m pgproto3.BackendMessage) error {
	buf, err := m.Encode(nil)
	if err != nil {
		return err
	}
	_, err = conn.Write(buf)
	return err
}

// readAuthMessage reads a 'p' message (a password or SASL response) of
// at most auth.MaxSASLMessage bytes, straight from the connection.
func readAuthMessage(conn net.Conn, what string) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAuthEOF
		}
		return nil, err
	}
	if hdr[0] != 'p' {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
			Message: fmt.Sprintf("expected %s, got message type %d", what, hdr[0])}
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[1:])))
	if n < 4 || n-4 > auth.MaxSASLMessage {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: "invalid message length"}
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(conn, body); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAuthEOF
		}
		return nil, err
	}
	return body, nil
}

// readPassword reads a PasswordMessage (recv_password_packet).
func readPassword(conn net.Conn) (string, error) {
	body, err := readAuthMessage(conn, "password response")
	if err != nil {
		return "", err
	}
	i := bytes.IndexByte(body, 0)
	if i != len(body)-1 {
		return "", &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: "invalid password packet size"}
	}
	if i == 0 {
		return "", &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidPassword, Message: "empty password returned by client"}
	}
	return string(body[:i]), nil
}

// remoteIP is the client's address as text and as an IP.
func remoteIP(conn net.Conn) (string, net.IP) {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String(), a.IP
	}
	host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	return host, net.ParseIP(host)
}
