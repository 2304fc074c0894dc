package sqlscript

import (
	"context"
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

var dsn = flag.String("dsn", "", "run the SQL scripts against this server instead of a lockd of their own, "+
	"to compare with PostgreSQL (steps that restart, crash or checkpoint lockd and cases with a server of their own are skipped)")

// server is what the cases of a file run against: the lockd the runner
// started, or with -dsn a server someone else runs.
type server interface {
	connString() string
	// sessions counts the client sessions the server has open.
	sessions() (int, error)
	// restart, crash and checkpoint return false if the server cannot.
	restart(t testing.TB) bool
	crash(t testing.TB) bool
	checkpoint() (bool, error)
	dataDir() (string, error)
}

type lockdServer struct{ inst *lockdtest.Instance }

func startLockd(t testing.TB, settings []string) server {
	return &lockdServer{lockdtest.Start(t, lockdtest.Options{Settings: settings})}
}

func (s *lockdServer) connString() string        { return s.inst.ConnString() }
func (s *lockdServer) sessions() (int, error)    { return s.inst.Server.ActiveSessions(), nil }
func (s *lockdServer) restart(t testing.TB) bool { s.inst.Restart(t); return true }
func (s *lockdServer) crash(t testing.TB) bool   { s.inst.Crash(t); s.inst.Restart(t); return true }
func (s *lockdServer) checkpoint() (bool, error) { return true, s.inst.Server.Checkpoint() }
func (s *lockdServer) dataDir() (string, error)  { return s.inst.DataDir, nil }

// externalServer is a server given with -dsn. It counts sessions and
// finds its data directory through a connection of its own.
type externalServer struct {
	dsn  string
	conn *pgconn.PgConn
}

func (s *externalServer) connString() string { return s.dsn }

func (s *externalServer) query(sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	if s.conn == nil || s.conn.IsClosed() {
		c, err := pgconn.Connect(ctx, s.dsn)
		if err != nil {
			return "", err
		}
		s.conn = c
	}
	rs, err := s.conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	return string(rs[0].Rows[0][0]), nil
}

func (s *externalServer) sessions() (int, error) {
	v, err := s.query("select count(*) from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

func (s *externalServer) restart(testing.TB) bool { return false }
func (s *externalServer) crash(testing.TB) bool   { return false }

func (s *externalServer) checkpoint() (bool, error) {
	_, err := s.query("checkpoint; select 1")
	return true, err
}

func (s *externalServer) dataDir() (string, error) { return s.query("show data_directory") }

// waitSessions waits until srv has ended all but n client sessions.
func waitSessions(srv server, n int) (int, bool) {
	deadline := time.Now().Add(waitTimeout)
	for {
		got, err := srv.sessions()
		if err == nil && got <= n {
			return got, true
		}
		if time.Now().After(deadline) {
			return got, false
		}
		time.Sleep(time.Millisecond)
	}
}

// tmpDir is the directory $tmpdir names; a server given with -dsn may run
// as another user, so anyone may write there.
func tmpDir(t testing.TB) string {
	if *dsn == "" {
		return t.TempDir()
	}
	d, err := os.MkdirTemp("", "sqlscript")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	return d
}
