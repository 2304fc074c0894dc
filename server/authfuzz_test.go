package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// FuzzAuthExchange feeds arbitrary bytes to the server as a client's
// answer to AuthenticationSASL: the server must never authenticate it,
// must end the connection (with an error or silently), and must go on
// serving others, with nothing logged at error level.
//
// Seeds live in testdata/fuzz/FuzzAuthExchange: a well-formed
// SASLInitialResponse, one for another mechanism, an oversized message,
// a password message where a SASL response is due.
func FuzzAuthExchange(f *testing.F) {
	panics := &errorLog{}
	hba := filepath.Join(f.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	inst := lockdtest.Start(f, lockdtest.Options{Logger: slog.New(panics), Settings: []string{"hba_file=" + hba, "authentication_timeout=2"}})
	watch := inst.Connect(f)
	ctx := context.Background()
	if _, err := watch.Exec(ctx, "create role alice login password 'secret'"); err != nil {
		f.Fatal(err)
	}
	f.Add(saslInitial("SCRAM-SHA-256", "n,,n=,r=abcdefghijkl"))
	f.Add(append(saslInitial("SCRAM-SHA-256", "n,,n=,r=abc"), rawMessage('p', []byte("c=biws,r=abc,p=AAAA"))...))
	f.Add(saslInitial("PLAIN", "\x00alice\x00secret"))
	f.Add(rawMessage('p', []byte("secret\x00")))
	startup := startupPacket(pgproto3.ProtocolVersion30, "user", "alice", "database", "postgres")

	f.Fuzz(func(t *testing.T, data []byte) {
		conn, err := net.DialTimeout("tcp", inst.Addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(startup); err != nil {
			t.Fatal(err)
		}
		fe := pgproto3.NewFrontend(conn, conn)
		if m, err := fe.Receive(); err != nil {
			t.Fatalf("no SASL request: %v", err)
		} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
			t.Fatalf("got %T, want AuthenticationSASL", m)
		}
		if len(data) > 0 {
			if _, err := conn.Write(data); err != nil && !isClosed(err) {
				t.Fatal(err)
			}
		}
		_ = conn.(*net.TCPConn).CloseWrite()
		// The server answers, then closes: at EOF, or at
		// authentication_timeout at the latest.
		_ = conn.SetReadDeadline(time.Now().Add(4 * time.Second))
		out, err := io.ReadAll(conn)
		if err != nil && !isClosed(err) {
			t.Fatalf("connection not closed: %v (read %q)", err, out)
		}
		// 'R' with code 0 is AuthenticationOk.
		if bytes.Contains(out, []byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}) {
			t.Fatalf("input %q authenticated", data)
		}
		var one int
		if err := watch.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("server unhealthy after input: %v", err)
		}
		if msgs := panics.take(); len(msgs) > 0 {
			t.Fatalf("server logged errors for input %q:\n%s", data, strings.Join(msgs, "\n"))
		}
	})
}
