package server_test

// Bad input over raw TCP: what a client sees when it speaks the protocol
// wrongly, and proof that nothing is lost afterwards (the session goes
// away and the server keeps serving).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

const (
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
	codeCancelRequest = 80877102
	ioTimeout         = 10 * time.Second // generous: only ever hit when something is broken
)

// startBad starts a server of its own for one bad-input test, so that the
// session count has a known baseline of 0.
func startBad(t *testing.T, settings ...string) *lockdtest.Instance {
	t.Helper()
	t.Parallel()
	return lockdtest.Start(t, lockdtest.Options{Settings: settings})
}

// waitSessions polls until the server has n sessions.
func waitSessions(t testing.TB, inst *lockdtest.Instance, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := inst.Server.ActiveSessions()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ActiveSessions() = %d, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// assertServes checks that nothing was lost: the bad client's session (if
// any) is gone, and a fresh connection can run a query.
func assertServes(t *testing.T, inst *lockdtest.Instance) {
	t.Helper()
	waitSessions(t, inst, 0)
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, inst.ConnString())
	if err != nil {
		t.Fatalf("fresh connection after bad client: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1 after bad client: %d %v", n, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitSessions(t, inst, 0)
}

func dial(t *testing.T, inst *lockdtest.Instance) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", inst.Addr, ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func write(t *testing.T, conn net.Conn, b []byte) {
	t.Helper()
	_ = conn.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := conn.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// startupPacket builds a startup packet by hand: any protocol code,
// parameters as name, value, name, value, ...
func startupPacket(code uint32, kv ...string) []byte {
	body := binary.BigEndian.AppendUint32(nil, code)
	for _, s := range kv {
		body = append(append(body, s...), 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

// request builds an 8-byte SSLRequest/GSSENCRequest-style packet.
func request(code uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code)
}

// isClosed reports whether err from a read means the peer closed the
// connection (as opposed to a timeout).
func isClosed(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // EOF, unexpected EOF, connection reset
}

// readToClose reads everything the server sends until it closes the
// connection, failing if it is still open after within.
func readToClose(t *testing.T, conn net.Conn, within time.Duration) []byte {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(within))
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			if !isClosed(err) {
				t.Fatalf("server did not close the connection within %v (read %q)", within, out.Bytes())
			}
			return out.Bytes()
		}
	}
}

// decodeBackend splits raw server output into message summaries.
func decodeBackend(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for rest := data; len(rest) > 0; {
		if len(rest) < 5 {
			t.Fatalf("truncated server output %q", data)
		}
		n := int(binary.BigEndian.Uint32(rest[1:5])) + 1
		if n < 5 || n > len(rest) {
			t.Fatalf("truncated server output %q", data)
		}
		fe := pgproto3.NewFrontend(bytes.NewReader(rest[:n]), io.Discard)
		m, err := fe.Receive()
		if err != nil {
			t.Fatalf("undecodable server output %q: %v", rest[:n], err)
		}
		out = append(out, summary(m))
		rest = rest[n:]
	}
	return out
}

// summary renders a backend message as one comparable line.
func summary(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ErrorResponse:
		s := fmt.Sprintf("ErrorResponse %s %s %s", m.Severity, m.Code, m.Message)
		if m.Position != 0 {
			s += fmt.Sprintf(" P=%d", m.Position)
		}
		return s
	case *pgproto3.NoticeResponse:
		return fmt.Sprintf("NoticeResponse %s %s %s", m.Severity, m.Code, m.Message)
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.DataRow:
		vals := make([]string, len(m.Values))
		for i, v := range m.Values {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = string(v)
			}
		}
		return "DataRow " + strings.Join(vals, ",")
	case *pgproto3.RowDescription:
		names := make([]string, len(m.Fields))
		for i, f := range m.Fields {
			names[i] = fmt.Sprintf("%s:%d", f.Name, f.DataTypeOID)
		}
		return "RowDescription " + strings.Join(names, ",")
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs)
	case *pgproto3.NegotiateProtocolVersion:
		return fmt.Sprintf("NegotiateProtocolVersion %d %v", m.NewestMinorProtocol, m.UnrecognizedOptions)
	case *pgproto3.ParameterStatus:
		return "ParameterStatus " + m.Name
	case *pgproto3.BackendKeyData:
		return fmt.Sprintf("BackendKeyData key=%d bytes", len(m.SecretKey))
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}

// expectFatal checks that the server sends exactly one FATAL error and
// closes the connection.
func expectFatal(t *testing.T, conn net.Conn, code, msg string) {
	t.Helper()
	got := decodeBackend(t, readToClose(t, conn, ioTimeout))
	want := []string{"ErrorResponse FATAL " + code + " " + msg}
	if !equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// expectSilentClose checks that the server closes without a word.
func expectSilentClose(t *testing.T, conn net.Conn) {
	t.Helper()
	if got := readToClose(t, conn, ioTimeout); len(got) != 0 {
		t.Fatalf("server sent %q before closing; want nothing", got)
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// rawClient is a started-up session spoken to with pgproto3's Frontend.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	fe   *pgproto3.Frontend
	pid  uint32
	key  []byte
}

// connectRaw opens a TCP connection and completes a protocol 3.0 startup
// as user postgres.
func connectRaw(t *testing.T, inst *lockdtest.Instance) *rawClient {
	t.Helper()
	conn := dial(t, inst)
	c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	write(t, conn, startupPacket(pgproto3.ProtocolVersion30, "user", "postgres", "database", "postgres"))
	for {
		switch m := c.recv().(type) {
		case *pgproto3.BackendKeyData:
			c.pid, c.key = m.ProcessID, append([]byte(nil), m.SecretKey...)
		case *pgproto3.ReadyForQuery:
			if m.TxStatus != 'I' {
				t.Fatalf("startup ended in status %c", m.TxStatus)
			}
			if len(c.key) != 4 {
				t.Fatalf("BackendKeyData key of %d bytes", len(c.key))
			}
			return c
		case *pgproto3.ErrorResponse:
			t.Fatalf("startup failed: %s", summary(m))
		}
	}
}

func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(ioTimeout))
	if err := c.fe.Flush(); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *rawClient) recv() pgproto3.BackendMessage {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(ioTimeout))
	m, err := c.fe.Receive()
	if err != nil {
		c.t.Fatalf("receive: %v", err)
	}
	return m
}

// expect reads len(want) messages and compares their summaries.
func (c *rawClient) expect(want ...string) {
	c.t.Helper()
	got := make([]string, 0, len(want))
	for range want {
		got = append(got, summary(c.recv()))
	}
	if !equal(got, want) {
		c.t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// untilReady reads up to and including ReadyForQuery.
func (c *rawClient) untilReady() []string {
	c.t.Helper()
	var got []string
	for {
		m := c.recv()
		got = append(got, summary(m))
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return got
		}
	}
}

// expectEOF checks that the server closed the connection (after whatever
// was already read).
func (c *rawClient) expectEOF() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(ioTimeout))
	m, err := c.fe.Receive()
	if err == nil {
		c.t.Fatalf("want close, got %s", summary(m))
	}
	if !isClosed(err) {
		c.t.Fatalf("server did not close the connection: %v", err)
	}
}

// ---- startup phase ----

func TestBadStartupGarbage(t *testing.T) {
	for name, junk := range map[string][]byte{
		"http":        []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"tls hello":   {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03},
		"zero length": {0, 0, 0, 0},
		"negative":    {0xff, 0xff, 0xff, 0xff, 0, 3, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			write(t, conn, junk)
			expectSilentClose(t, conn)
			assertServes(t, inst)
		})
	}
}

func TestBadStartupLength(t *testing.T) {
	for _, n := range []uint32{4, 7, 10001, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			// a length word and a body that would be valid at 3.0
			pkt := binary.BigEndian.AppendUint32(nil, n)
			pkt = append(pkt, startupPacket(pgproto3.ProtocolVersion30, "user", "postgres")[4:]...)
			write(t, conn, pkt)
			expectSilentClose(t, conn) // PostgreSQL: COMMERROR "invalid length of startup packet", nothing sent
			assertServes(t, inst)
		})
	}
	t.Run("layout", func(t *testing.T) {
		// A 3.0 packet without the final terminator.
		inst := startBad(t)
		conn := dial(t, inst)
		pkt := startupPacket(pgproto3.ProtocolVersion30, "user", "postgres")
		pkt = pkt[:len(pkt)-1]
		binary.BigEndian.PutUint32(pkt, uint32(len(pkt)))
		write(t, conn, pkt)
		expectFatal(t, conn, "08P01", "invalid startup packet layout: expected terminator as last byte")
		assertServes(t, inst)
	})
	t.Run("no parameters", func(t *testing.T) {
		// Only the terminator: a valid layout without a user.
		inst := startBad(t)
		conn := dial(t, inst)
		write(t, conn, startupPacket(pgproto3.ProtocolVersion30))
		expectFatal(t, conn, "28000", "no PostgreSQL user name specified in startup packet")
		assertServes(t, inst)
	})
}

func TestBadStartupProtocolVersion(t *testing.T) {
	for _, v := range []struct{ major, minor uint32 }{{2, 0}, {4, 0}, {1234, 1234}} {
		t.Run(fmt.Sprintf("%d.%d", v.major, v.minor), func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			write(t, conn, startupPacket(v.major<<16|v.minor, "user", "postgres"))
			expectFatal(t, conn, "0A000", fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", v.major, v.minor))
			assertServes(t, inst)
		})
	}
	t.Run("3.2", func(t *testing.T) {
		inst := startBad(t)
		conn := dial(t, inst)
		c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
		write(t, conn, startupPacket(pgproto3.ProtocolVersion32, "user", "postgres", "_pq_.foo", "bar"))
		c.expect("NegotiateProtocolVersion 0 [_pq_.foo]", "AuthenticationOk")
		got := c.untilReady()
		if got[len(got)-2] != "BackendKeyData key=4 bytes" || got[len(got)-1] != "ReadyForQuery I" {
			t.Fatalf("startup at 3.2: %q", got)
		}
		c.send(&pgproto3.Query{String: "select 1"})
		c.expect("RowDescription ?column?:23", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
		c.send(&pgproto3.Terminate{})
		c.expectEOF()
		assertServes(t, inst)
	})
}

func TestBadStartupEncryptionRequests(t *testing.T) {
	readN := func(t *testing.T, conn net.Conn) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(ioTimeout))
		var b [1]byte
		if _, err := io.ReadFull(conn, b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("answer to request: %q %v", b[0], err)
		}
	}
	for _, reqs := range [][]uint32{
		{codeSSLRequest},
		{codeGSSENCRequest},
		{codeSSLRequest, codeGSSENCRequest},
		{codeGSSENCRequest, codeSSLRequest},
	} {
		t.Run(fmt.Sprint(reqs), func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			for _, code := range reqs {
				write(t, conn, request(code))
				readN(t, conn)
			}
			c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
			write(t, conn, startupPacket(pgproto3.ProtocolVersion30, "user", "postgres"))
			if got := c.untilReady(); got[0] != "AuthenticationOk" {
				t.Fatalf("startup after request: %q", got)
			}
			c.send(&pgproto3.Query{String: "select 1"})
			c.expect("RowDescription ?column?:23", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
			c.send(&pgproto3.Terminate{})
			c.expectEOF()
			assertServes(t, inst)
		})
	}
	// A repeated request falls through to the protocol version check, as
	// in PostgreSQL's ProcessStartupPacket (ssl_done/gss_done already set).
	for _, tc := range []struct {
		code uint32
		msg  string
	}{
		{codeSSLRequest, "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0"},
		{codeGSSENCRequest, "unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0"},
	} {
		t.Run(fmt.Sprint("repeated ", tc.code), func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			write(t, conn, request(tc.code))
			readN(t, conn)
			write(t, conn, request(tc.code))
			expectFatal(t, conn, "0A000", tc.msg)
			assertServes(t, inst)
		})
	}
}

func TestBadStartupTimeout(t *testing.T) {
	for name, partial := range map[string][]byte{
		"nothing":        nil,
		"length only":    {0, 0, 0, 100},
		"half a packet":  startupPacket(pgproto3.ProtocolVersion30, "user", "postgres")[:10],
		"after SSL 'N'":  request(codeSSLRequest),
		"half a request": {0, 0, 0, 8, 0x04},
	} {
		t.Run(name, func(t *testing.T) {
			inst := startBad(t, "authentication_timeout=1")
			start := time.Now() // before dialling: the server's clock starts at accept
			conn := dial(t, inst)
			if partial != nil {
				write(t, conn, partial)
			}
			got := readToClose(t, conn, 5*time.Second)
			if name == "after SSL 'N'" {
				if string(got) != "N" {
					t.Fatalf("got %q, want only N", got)
				}
			} else if len(got) != 0 {
				t.Fatalf("server sent %q", got)
			}
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Fatalf("closed after %v, before authentication_timeout", d)
			}
			assertServes(t, inst)
		})
	}
}

func TestBadStartupParameters(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kv         []string
		code, want string
	}{
		{"no user", []string{"database", "postgres"}, "28000", "no PostgreSQL user name specified in startup packet"},
		{"empty user", []string{"user", "", "database", "postgres"}, "28000", "no PostgreSQL user name specified in startup packet"},
		{"unknown parameter", []string{"user", "postgres", "foo", "bar"}, "42704", `unrecognized configuration parameter "foo"`},
		{"bad value", []string{"user", "postgres", "lock_timeout", "abc"}, "22023", `invalid value for parameter "lock_timeout": "abc"`},
		{"bad options", []string{"user", "postgres", "options", "-c foo=1"}, "42704", `unrecognized configuration parameter "foo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := startBad(t)
			conn := dial(t, inst)
			write(t, conn, startupPacket(pgproto3.ProtocolVersion30, tc.kv...))
			expectFatal(t, conn, tc.code, tc.want)
			assertServes(t, inst)
		})
	}
}

// ---- after startup ----

func TestBadMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []string
		bytes    []byte
		want     string // FATAL "code message"; empty: closed, a FATAL 08P01 allowed
	}{
		{"type Z", nil, []byte{'Z', 0, 0, 0, 4}, "08P01 invalid frontend message type 90"},
		{"type 0x01", nil, []byte{0x01, 0, 0, 0, 4}, "08P01 invalid frontend message type 1"},
		{"type 0xff", nil, []byte{0xff, 0, 0, 0, 4}, "08P01 invalid frontend message type 255"},
		{"password message", nil, []byte{'p', 0, 0, 0, 8, 'a', 'b', 'c', 0}, "08P01 invalid frontend message type 112"},
		{"query over max_message_size", []string{"max_message_size=1024"},
			append([]byte{'Q', 0, 0, 0x0f, 0xa5}, append(bytes.Repeat([]byte{' '}, 4000), 0)...),
			"08P01 invalid message length 4001 (max_message_size is 1024)"},
		{"header claims 10MB", []string{"max_message_size=1024"}, []byte{'Q', 0, 0xa0, 0, 0}, "08P01 invalid message length 10485756 (max_message_size is 1024)"},
		{"length 3", nil, []byte{'Q', 0, 0, 0, 3}, ""},
		{"length 0", nil, []byte{'S', 0, 0, 0, 0}, ""},
		{"negative length", nil, []byte{'Q', 0x80, 0, 0, 0}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := startBad(t, tc.settings...)
			c := connectRaw(t, inst)
			waitSessions(t, inst, 1)
			write(t, c.conn, tc.bytes)
			got := decodeBackend(t, readToClose(t, c.conn, ioTimeout))
			switch {
			case tc.want != "":
				if want := []string{"ErrorResponse FATAL " + tc.want}; !equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, want)
				}
			case len(got) > 1 || len(got) == 1 && !strings.HasPrefix(got[0], "ErrorResponse FATAL 08P01 "):
				t.Fatalf("got %q, want a close (with at most a FATAL 08P01)", got)
			}
			assertServes(t, inst)
		})
	}
}

func TestBadMessageTruncated(t *testing.T) {
	// A message header promising more than is ever sent, then the client
	// goes away: the session ends quietly.
	inst := startBad(t)
	c := connectRaw(t, inst)
	waitSessions(t, inst, 1)
	write(t, c.conn, []byte{'Q', 0, 0, 0, 100, 's', 'e', 'l'})
	c.conn.Close()
	assertServes(t, inst)
}

func TestClientGoneMidStatement(t *testing.T) {
	t.Run("pg_sleep", func(t *testing.T) {
		// Like PostgreSQL with client_connection_check_interval = 0, lockd
		// only notices a vanished client when the statement ends; here it
		// ends by itself after the client has gone.
		inst := startBad(t)
		c := connectRaw(t, inst)
		c.send(&pgproto3.Query{String: "select pg_sleep(0.5)"})
		c.conn.Close()
		assertServes(t, inst)
	})
	t.Run("pg_sleep cancelled", func(t *testing.T) {
		// A 30 s sleep whose client has gone: the server keeps serving
		// others meanwhile, and the session ends as soon as the statement
		// does (here: pg_cancel_backend).
		inst := startBad(t)
		c := connectRaw(t, inst)
		c.send(&pgproto3.Query{String: "select pg_sleep(30)"})
		waitActive(t, inst, c.pid)
		c.conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		other, err := pgx.Connect(ctx, inst.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(ctx)
		var ok bool
		if err := other.QueryRow(ctx, "select pg_cancel_backend($1)", int32(c.pid)).Scan(&ok); err != nil || !ok {
			t.Fatalf("pg_cancel_backend: %v %v", ok, err)
		}
		waitSessions(t, inst, 1)
		other.Close(ctx)
		assertServes(t, inst)
	})
	t.Run("streaming rows", func(t *testing.T) {
		// The server is writing when the client goes: the write fails and
		// the statement is abandoned.
		inst := startBad(t)
		c := connectRaw(t, inst)
		c.send(&pgproto3.Query{String: "select g from generate_series(1, 100000000) g"})
		c.expect("RowDescription g:23", "DataRow 1")
		c.conn.Close()
		assertServes(t, inst)
	})
	t.Run("in transaction", func(t *testing.T) {
		inst := startBad(t)
		c := connectRaw(t, inst)
		c.send(&pgproto3.Query{String: "begin"})
		c.expect("CommandComplete BEGIN", "ReadyForQuery T")
		c.send(&pgproto3.Query{String: "set local lock_timeout = '5s'"})
		c.expect("CommandComplete SET", "ReadyForQuery T")
		c.send(&pgproto3.Query{String: "select 1"})
		c.expect("RowDescription ?column?:23", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery T")
		c.conn.Close()
		assertServes(t, inst)
		// and the dead session's locks went with it
		ctx := context.Background()
		other := inst.Connect(t)
		var n int64
		if err := other.QueryRow(ctx, "select count(*) from pg_locks where pid = $1", int32(c.pid)).Scan(&n); err != nil || n != 0 {
			t.Fatalf("locks of the gone session: %d %v", n, err)
		}
		if err := other.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1", int32(c.pid)).Scan(&n); err != nil || n != 0 {
			t.Fatalf("activity of the gone session: %d %v", n, err)
		}
	})
	t.Run("failed transaction", func(t *testing.T) {
		inst := startBad(t)
		c := connectRaw(t, inst)
		c.send(&pgproto3.Query{String: "begin"}, &pgproto3.Query{String: "select 1/0"})
		c.expect("CommandComplete BEGIN", "ReadyForQuery T")
		if got := c.untilReady(); got[len(got)-2] != "ErrorResponse ERROR 22012 division by zero" || got[len(got)-1] != "ReadyForQuery E" {
			t.Fatalf("got %q", got)
		}
		c.conn.Close()
		assertServes(t, inst)
	})
}

func TestTerminateMessage(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	waitSessions(t, inst, 1)
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("CommandComplete BEGIN", "ReadyForQuery T")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

// ---- extended protocol ----

func TestExtendedErrorSkipsToSync(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	badPipeline := []pgproto3.FrontendMessage{
		&pgproto3.Parse{Name: "bad", Query: "selec 1"},
		&pgproto3.Bind{PreparedStatement: "bad"},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}
	syntaxErr := `ErrorResponse ERROR 42601 syntax error at or near "selec" P=1`

	// outside a transaction block: one error, then ReadyForQuery I
	c.send(badPipeline...)
	if got, want := c.untilReady(), []string{syntaxErr, "ReadyForQuery I"}; !equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// the failed Parse stored nothing
	c.send(&pgproto3.Bind{PreparedStatement: "bad"}, &pgproto3.Sync{})
	c.expect(`ErrorResponse ERROR 26000 prepared statement "bad" does not exist`, "ReadyForQuery I")

	// inside one: status E, later statements get 25P02 until ROLLBACK
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("CommandComplete BEGIN", "ReadyForQuery T")
	c.send(badPipeline...)
	if got, want := c.untilReady(), []string{syntaxErr, "ReadyForQuery E"}; !equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	c.send(&pgproto3.Query{String: "select 1"})
	c.expect("ErrorResponse ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block", "ReadyForQuery E")
	c.send(&pgproto3.Query{String: "rollback"})
	c.expect("CommandComplete ROLLBACK", "ReadyForQuery I")

	// an error in Execute (not Parse) also skips to Sync
	c.send(&pgproto3.Parse{Query: "select 1/g from generate_series(0, 1) g"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select 2"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if got, want := c.untilReady(), []string{"ParseComplete", "BindComplete", "ErrorResponse ERROR 22012 division by zero", "ReadyForQuery I"}; !equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// bad Describe / Close subtypes are errors, not crashes
	c.send(&pgproto3.Describe{ObjectType: 'X', Name: "x"}, &pgproto3.Sync{})
	c.expect("ErrorResponse ERROR 08P01 invalid DESCRIBE message subtype 88", "ReadyForQuery I")
	c.send(&pgproto3.Close{ObjectType: 'X', Name: "x"}, &pgproto3.Sync{})
	c.expect("ErrorResponse ERROR 08P01 invalid CLOSE message subtype 88", "ReadyForQuery I")
	// unknown portal
	c.send(&pgproto3.Execute{Portal: "nope"}, &pgproto3.Sync{})
	c.expect(`ErrorResponse ERROR 34000 portal "nope" does not exist`, "ReadyForQuery I")

	c.send(&pgproto3.Query{String: "select 1"})
	c.expect("RowDescription ?column?:23", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

func TestExecuteMaxRows(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	c.send(&pgproto3.Parse{Query: "select g from generate_series(1,5) g"}, &pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2}, &pgproto3.Flush{})
	c.expect("ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "PortalSuspended")
	c.send(&pgproto3.Execute{MaxRows: 2}, &pgproto3.Flush{})
	c.expect("DataRow 3", "DataRow 4", "PortalSuspended")
	c.send(&pgproto3.Execute{MaxRows: 2}, &pgproto3.Flush{})
	// the tag counts this Execute's rows, as PostgreSQL's does
	c.expect("DataRow 5", "CommandComplete SELECT 1")
	c.send(&pgproto3.Sync{})
	c.expect("ReadyForQuery I")
	// the portal is gone after the implicit transaction ends
	c.send(&pgproto3.Execute{MaxRows: 2}, &pgproto3.Sync{})
	c.expect(`ErrorResponse ERROR 34000 portal "" does not exist`, "ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

func TestDescribeAndCloseStatement(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	c.send(&pgproto3.Parse{Name: "s1", Query: "select $1::int + 1 as n"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Parse{Name: "s2", Query: "set lock_timeout = 0"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s2"},
		&pgproto3.Sync{})
	c.expect("ParseComplete", "ParameterDescription [23]", "RowDescription n:23",
		"ParseComplete", "ParameterDescription []", "NoData", "ReadyForQuery I")
	c.send(&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("41")}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect("BindComplete", "DataRow 42", "CommandComplete SELECT 1", "ReadyForQuery I")

	c.send(&pgproto3.Close{ObjectType: 'S', Name: "s1"}, &pgproto3.Sync{})
	c.expect("CloseComplete", "ReadyForQuery I")
	// closing what does not exist is not an error
	c.send(&pgproto3.Close{ObjectType: 'S', Name: "s1"}, &pgproto3.Close{ObjectType: 'P', Name: "nope"}, &pgproto3.Sync{})
	c.expect("CloseComplete", "CloseComplete", "ReadyForQuery I")
	c.send(&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("41")}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect(`ErrorResponse ERROR 26000 prepared statement "s1" does not exist`, "ReadyForQuery I")
	c.send(&pgproto3.Describe{ObjectType: 'S', Name: "s1"}, &pgproto3.Sync{})
	c.expect(`ErrorResponse ERROR 26000 prepared statement "s1" does not exist`, "ReadyForQuery I")
	// s2 is untouched
	c.send(&pgproto3.Describe{ObjectType: 'S', Name: "s2"}, &pgproto3.Sync{})
	c.expect("ParameterDescription []", "NoData", "ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

func TestFlushWithoutSync(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	c.send(&pgproto3.Parse{Query: "select 7 as x"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{}, &pgproto3.Flush{})
	// All of it arrives before any Sync is sent.
	c.expect("ParseComplete", "BindComplete", "RowDescription x:23", "DataRow 7", "CommandComplete SELECT 1")
	// An error is flushed too, and nothing more comes until Sync.
	c.send(&pgproto3.Parse{Query: "selec"}, &pgproto3.Flush{})
	c.expect(`ErrorResponse ERROR 42601 syntax error at or near "selec" P=1`)
	c.send(&pgproto3.Sync{})
	c.expect("ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

// ---- cancel ----

func cancelPacket(pid uint32, key []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 16)
	b = binary.BigEndian.AppendUint32(b, codeCancelRequest)
	b = binary.BigEndian.AppendUint32(b, pid)
	return append(b, key...)
}

// sendCancel sends a CancelRequest on a new connection and checks that
// the server closes it without writing anything.
func sendCancel(t *testing.T, inst *lockdtest.Instance, pid uint32, key []byte) {
	t.Helper()
	conn := dial(t, inst)
	write(t, conn, cancelPacket(pid, key))
	expectSilentClose(t, conn)
}

// waitActive polls pg_stat_activity until pid is running a statement (so
// that a cancel sent now has something to cancel).
func waitActive(t *testing.T, inst *lockdtest.Instance, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, inst.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for {
		var n int
		if err := c.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1 and state = 'active'", int32(pid)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("backend %d never became active", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCancelRequestRaw(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)

	// wrong key, unknown pid, short packet: no effect on the statement
	c.send(&pgproto3.Query{String: "select pg_sleep(0.5)"})
	waitActive(t, inst, c.pid)
	wrong := append([]byte(nil), c.key...)
	wrong[0] ^= 0xff
	sendCancel(t, inst, c.pid, wrong)
	sendCancel(t, inst, c.pid+12345, c.key)
	short := dial(t, inst)
	write(t, short, cancelPacket(c.pid, c.key)[:12]) // length says 16
	short.Close()
	if got, want := c.untilReady(), []string{"RowDescription pg_sleep:2278", "DataRow ", "CommandComplete SELECT 1", "ReadyForQuery I"}; !equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}

	// right key: 57014, and the session goes on
	c.send(&pgproto3.Query{String: "select pg_sleep(30)"})
	waitActive(t, inst, c.pid)
	start := time.Now()
	sendCancel(t, inst, c.pid, c.key)
	c.expect("RowDescription pg_sleep:2278", "ErrorResponse ERROR 57014 canceling statement due to user request", "ReadyForQuery I")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	// a cancel while idle does nothing to the next statement
	sendCancel(t, inst, c.pid, c.key)
	c.send(&pgproto3.Query{String: "select 1"})
	c.expect("RowDescription ?column?:23", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}

// ---- volume ----

func TestManyRows(t *testing.T) {
	inst := startBad(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := inst.Connect(t)
	rows, err := c.Query(ctx, "select g from generate_series(1, 200000) g")
	if err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	for rows.Next() {
		var g int64
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		n++
		if g != n {
			t.Fatalf("row %d is %d", n, g)
		}
		sum += g
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 200000 || sum != 200000*200001/2 || rows.CommandTag().String() != "SELECT 200000" {
		t.Fatalf("%d rows, sum %d, tag %q", n, sum, rows.CommandTag())
	}
	c.Close(ctx)
	assertServes(t, inst)
}
