package server_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// Bad input during authentication: each gets PostgreSQL's error or a
// silent close, and the server serves everyone else throughout.

func startSCRAM(t *testing.T, settings ...string) *lockdtest.Instance {
	t.Helper()
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte("host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{Settings: append(settings, "hba_file="+path)})
	admin := inst.Connect(t)
	mustExec(t, admin, "create role alice login password 'secret'")
	admin.Close(context.Background())
	waitSessions(t, inst, 0)
	return inst
}

// saslStart connects as alice and reads the AuthenticationSASL request.
func saslStart(t *testing.T, inst *lockdtest.Instance) *rawClient {
	t.Helper()
	conn := dial(t, inst)
	c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	write(t, conn, startupPacket(pgproto3.ProtocolVersion30, "user", "alice", "database", "postgres"))
	m, ok := c.recv().(*pgproto3.AuthenticationSASL)
	if !ok || len(m.AuthMechanisms) != 1 || m.AuthMechanisms[0] != "SCRAM-SHA-256" {
		t.Fatalf("got %#v, want AuthenticationSASL SCRAM-SHA-256", m)
	}
	return c
}

func rawMessage(typ byte, body []byte) []byte {
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(body)+4))
	return append(out, body...)
}

func saslInitial(mech, data string) []byte {
	body := append([]byte(mech), 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(body[len(mech)+1:], uint32(len(data)))
	return rawMessage('p', append(body, data...))
}

func TestBadSASL(t *testing.T) {
	for _, c := range []struct {
		name string
		send []byte
		code string
		msg  string
	}{
		{"oversized", rawMessage('p', make([]byte, 70000)), "08P01", "invalid message length"},
		{"wrong message", rawMessage('Q', []byte("select 1\x00")), "08P01", "expected SASL response, got message type 81"},
		{"bad layout", rawMessage('p', []byte("SCRAM-SHA-256")), "08P01", "invalid message format"},
		{"bad mechanism", saslInitial("PLAIN", "x"), "08P01", "client selected an invalid SASL authentication mechanism"},
		{"malformed", saslInitial("SCRAM-SHA-256", "n,,r=x"), "08P01", "malformed SCRAM message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst := startSCRAM(t)
			rc := saslStart(t, inst)
			write(t, rc.conn, c.send)
			expectFatal(t, rc.conn, c.code, c.msg)
			assertServes(t, inst)
		})
	}
}

// A client that stalls mid-exchange is cut off at authentication_timeout
// without a message; others connect meanwhile.
func TestSASLStall(t *testing.T) {
	inst := startSCRAM(t, "authentication_timeout=1")
	start := time.Now()
	rc := saslStart(t, inst)
	write(t, rc.conn, saslInitial("SCRAM-SHA-256", "n,,n=,r=abcdef"))
	if _, ok := rc.recv().(*pgproto3.AuthenticationSASLContinue); !ok {
		t.Fatal("no AuthenticationSASLContinue")
	}
	assertServes(t, inst)
	if got := readToClose(t, rc.conn, 5*time.Second); len(got) != 0 {
		t.Fatalf("server sent %q", got)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("closed after %v, before authentication_timeout", d)
	}
}

// A client that hangs up at the password prompt (as psql does before it
// asks for one) is closed silently.
func TestSASLHangUp(t *testing.T) {
	inst := startSCRAM(t)
	rc := saslStart(t, inst)
	rc.conn.Close()
	assertServes(t, inst)
}
