package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// A target is a server the sweep runs against: lockd, or PostgreSQL.
type target interface {
	// Kind is "lockd" or "postgres".
	Kind() string
	// ConnInfo is a libpq connection string for pgbench, psql and pgx.
	ConnInfo() string
	// Apply puts a variant's settings in force (names lists every setting
	// any variant sets, so the others are reset) and reports whether the
	// server had to restart.
	Apply(ctx context.Context, settings map[string]string, names []string) (restarted bool, err error)
	// CPU is the CPU time the server has used so far, in seconds.
	CPU() (float64, bool)
	// Metrics reads /metrics (lockd only; nil otherwise).
	Metrics(ctx context.Context) (scrape, error)
	// Alive reports why the server is not running, or nil.
	Alive() error
	// Restart starts the server again after it died.
	Restart(ctx context.Context) error
	// Stop stops a server the runner started.
	Stop() error
	// Log is the server's log file ("" when the runner did not start it).
	Log() string
}

// freePort returns a loopback TCP port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// connect opens a pgx connection using the simple protocol (no statement
// cache, so nothing depends on the server keeping prepared statements).
func connect(ctx context.Context, conninfo string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(conninfo)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cfg.RuntimeParams["application_name"] = "lockd bench"
	cfg.ConnectTimeout = 5 * time.Second
	return pgx.ConnectConfig(ctx, cfg)
}

// waitReady polls until the server accepts a connection, the process
// exits (exited is closed), or the timeout passes.
func waitReady(ctx context.Context, conninfo string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		c, err := connect(ctx, conninfo)
		if err == nil {
			c.Close(ctx)
			return nil
		}
		last = err
		select {
		case <-exited:
			return errors.New("the server exited during start-up")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("no connection after %s: %v", timeout, last)
}

// query runs a query and returns its rows as strings.
func query(ctx context.Context, conninfo, sql string) ([][]string, error) {
	c, err := connect(ctx, conninfo)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// exec runs statements one by one on one connection.
func execSQL(ctx context.Context, conninfo string, stmts ...string) error {
	c, err := connect(ctx, conninfo)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// settingsInForce reads pg_settings.
func settingsInForce(ctx context.Context, conninfo string) (map[string]string, error) {
	rows, err := query(ctx, conninfo, "select name, setting, coalesce(unit, '') from pg_settings")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		v := r[1]
		if r[2] != "" {
			v += " " + r[2]
		}
		out[r[0]] = v
	}
	return out, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// childAttr puts a child in its own process group, so a Ctrl-C at the
// terminal reaches the runner alone and the runner stops the children in
// order, and kills it if the runner dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// lookBin finds a client program on PATH or in dirs.
func lookBin(name string, dirs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := d + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH (nor in %s): install PostgreSQL's client programs (Debian: apt-get install postgresql-client-15)", name, strings.Join(dirs, ", "))
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
