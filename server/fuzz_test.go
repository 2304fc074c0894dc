package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// FuzzMessageLoop feeds arbitrary bytes to a session after a proper
// startup and checks that the server survives: the fuzzed session ends,
// and a long-lived connection can still run a query.
//
// Seeds live in testdata/fuzz/FuzzMessageLoop: valid simple and extended
// query traffic, truncated and oversized messages, unknown type bytes.
func FuzzMessageLoop(f *testing.F) {
	panics := &errorLog{}
	inst := lockdtest.Start(f, lockdtest.Options{Logger: slog.New(panics), Settings: []string{
		"max_message_size=65536",   // a huge claimed length fails at once instead of waiting
		"statement_timeout=1000",   // bounds what a fuzzed statement can hold up
		"authentication_timeout=5", // only our own startup happens here
	}})
	watch := inst.Connect(f)
	ctx := context.Background()
	var watchPID int32
	if err := watch.QueryRow(ctx, "select pg_backend_pid()").Scan(&watchPID); err != nil {
		f.Fatal(err)
	}
	startup := startupPacket(pgproto3.ProtocolVersion30, "user", "postgres", "database", "postgres")

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
		var pid uint32
	startup:
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatalf("startup: %v", err)
			}
			switch m := m.(type) {
			case *pgproto3.BackendKeyData:
				pid = m.ProcessID
			case *pgproto3.ReadyForQuery:
				break startup
			case *pgproto3.ErrorResponse:
				t.Fatalf("startup: %s", summary(m))
			}
		}

		// Write the input and half-close: the server sees everything, then
		// EOF, so most inputs end as soon as the server has handled them.
		if len(data) > 0 {
			if _, err := conn.Write(data); err != nil && !isClosed(err) {
				t.Fatal(err)
			}
		}
		_ = conn.(*net.TCPConn).CloseWrite()
		_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = io.Copy(io.Discard, conn)
		stillOpen := err != nil && errors.Is(err, os.ErrDeadlineExceeded)
		conn.Close()

		if stillOpen {
			// Something long-running (pg_sleep, a big result): end it.
			if _, err := watch.Exec(ctx, "select pg_terminate_backend($1)", int32(pid)); err != nil {
				t.Fatalf("watch connection: %v", err)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for inst.Server.ActiveSessions() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("fuzzed session did not end: %d sessions", inst.Server.ActiveSessions())
			}
			time.Sleep(time.Millisecond)
		}
		var one int
		if err := watch.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("server unhealthy after input: %v", err)
		}
		// A panic is caught per session (the client sees XX000) and so
		// would go unnoticed above: fail on any error-level log record.
		if msgs := panics.take(); len(msgs) > 0 {
			t.Fatalf("server logged errors for input %q:\n%s", data, strings.Join(msgs, "\n"))
		}
	})
}

// errorLog is a slog.Handler that keeps error-level records (such as
// "panic in session" with its stack) and drops the rest.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.msgs = append(h.msgs, b.String())
	h.mu.Unlock()
	return nil
}

func (h *errorLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorLog) WithGroup(string) slog.Handler      { return h }

func (h *errorLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.msgs
	h.msgs = nil
	return m
}
