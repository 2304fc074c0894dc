package server

import (
	"crypto/rand"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/sql"
)

// After the startup packet a connection is authenticated (authenticate.go:
// the pg_hba.conf rule that matches it and its method), its role checked
// (it must exist and may log in, within its connection limit), checked
// against the connection limit and shutdown, and given its SQL session.

// newBackend checks the authenticated user's role and the limits, and
// builds the session.
func (s *Server) newBackend(conn net.Conn, params map[string]string, how string) (*backend, *pgerr.Error) {
	user, db := params["user"], params["database"]
	if db == "" {
		db = user
	}
	role := s.inst.engine.Role(user)
	if role == nil {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "role \"" + user + "\" does not exist"}
	}
	if !role.CanLogin {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec, Message: "role \"" + user + "\" is not permitted to log in"}
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
	if !role.Super {
		// A role that is not a superuser may not set superuser settings
		// in its startup packet (PGOPTIONS) either.
		for i := range guc.Table {
			d := &guc.Table[i]
			if (d.Context == guc.Superuser || d.Context == guc.SuperuserBackend) && gs.Source(d.Name) == guc.SourceClient {
				return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InsufficientPrivilege,
					Message: "permission denied to set parameter \"" + d.Name + "\""}
			}
		}
		if err := gs.SetInternal("is_superuser", "off"); err != nil {
			e := pgerr.From(err)
			e.Severity = pgerr.SeverityFatal
			return nil, e
		}
	}
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.CannotConnectNow, Message: "the database system is shutting down"}
	}
	if len(s.backends) >= s.inst.maxConnections {
		s.mu.Unlock()
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.TooManyConnections, Message: "sorry, too many clients already"}
	}
	if role.ConnLimit >= 0 && !role.Super {
		n := 0
		for _, o := range s.backends {
			if o.user == user {
				n++
			}
		}
		if n >= role.ConnLimit {
			s.mu.Unlock()
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.TooManyConnections, Message: "too many connections for role \"" + user + "\""}
		}
	}
	pid := s.nextPID.Add(1)
	b := &backend{srv: s, conn: conn, pid: pid, secret: newSecret(), gucs: gs, user: user,
		app: params["application_name"]}
	s.backends[pid] = b
	s.mu.Unlock()
	sess, err := s.inst.engine.NewSession(sql.SessionInfo{PID: pid, User: user, Database: db, Settings: gs, ClientAddr: conn.RemoteAddr(), ServerAddr: conn.LocalAddr(), SSL: sslInfo(conn)})
	if err != nil {
		s.mu.Lock()
		delete(s.backends, pid)
		s.mu.Unlock()
		e := pgerr.From(err)
		e.Severity = pgerr.SeverityFatal
		return nil, e
	}
	b.sess = sess
	maxBody := int(s.settings.Value("max_message_size").Int)
	b.frames = frameReader{r: conn, maxBody: maxBody}
	b.be = pgproto3.NewBackend(&b.frames, conn)
	b.be.SetMaxBodyLen(maxBody)
	if s.settings.Value("log_connections").Bool {
		ssl := "off"
		if x := sslInfo(conn); x != nil {
			ssl = fmt.Sprintf("%s %s %d bits", x.Version, x.Cipher, x.Bits)
		}
		s.log.Info("connection authorized", "pid", pid, "user", user, "database", db, "application_name", b.app,
			"remote", conn.RemoteAddr().String(), "method", how, "ssl", ssl)
	}
	return b, nil
}

// greet ends the startup phase of an authorized connection:
// AuthenticationOk, the ParameterStatus reports, BackendKeyData (for
// CancelRequest) and the first ReadyForQuery, in one write.
func (b *backend) greet() error {
	b.send(&pgproto3.AuthenticationOk{})
	b.sendReports()
	b.send(&pgproto3.BackendKeyData{ProcessID: uint32(b.pid), SecretKey: b.secret[:]})
	b.send(&pgproto3.ReadyForQuery{TxStatus: byte(b.sess.TxStatus())})
	return b.be.Flush()
}

// endBackend ends an authorized connection's session (aborting its
// transaction and releasing its locks) and forgets the backend.
func (s *Server) endBackend(b *backend) {
	b.sess.Close()
	s.mu.Lock()
	delete(s.backends, b.pid)
	s.mu.Unlock()
	if s.settings.Value("log_disconnections").Bool {
		s.log.Info("disconnection", "pid", b.pid, "user", b.user)
	}
}

func newSecret() [4]byte {
	var k [4]byte
	_, _ = rand.Read(k[:])
	return k
}
