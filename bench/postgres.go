package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// pgTarget is PostgreSQL: a throwaway cluster (initdb + pg_ctl, run as an
// unprivileged user when the runner is root, since PostgreSQL refuses to
// run as root) with the spec's [postgres] settings in its
// postgresql.conf, or an existing server reached by a DSN, left as it is.
type pgTarget struct {
	bindir, dir, log, osUser string
	outLog                   string // where Stop copies the log
	port                     int
	dsn                      string // an existing server
}

// pgOSUser is the account PostgreSQL runs as when the runner is root
// (scripts/lib.sh's PG_OS_USER).
func pgOSUser() string {
	if u := os.Getenv("PG_OS_USER"); u != "" {
		return u
	}
	return "pgbench_cmp"
}

// checkPGBin reports a clear error when bindir lacks PostgreSQL's server
// programs.
func checkPGBin(bindir string) error {
	for _, p := range []string{"postgres", "initdb", "pg_ctl"} {
		if st, err := os.Stat(filepath.Join(bindir, p)); err != nil || st.IsDir() {
			return fmt.Errorf("PostgreSQL's %s not found in %s: install PostgreSQL 15 (Debian: apt-get install postgresql-15) or pass --postgres BINDIR or a DSN", p, bindir)
		}
	}
	return nil
}

func startPostgres(ctx context.Context, bindir, workDir string, settings map[string]string, logDir string) (*pgTarget, error) {
	// The log lives in the cluster's directory, which the unprivileged
	// user owns; Stop copies it to logDir.
	t := &pgTarget{bindir: bindir, dir: filepath.Join(workDir, "pg"), outLog: filepath.Join(logDir, "postgres.log")}
	t.log = filepath.Join(t.dir, "postgres.log")
	if err := checkPGBin(bindir); err != nil {
		return nil, err
	}
	var err error
	if t.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(t.dir, 0o711); err != nil {
		return nil, err
	}
	// The unprivileged user must reach the work directory and write its
	// log; the work directory is the runner's (0711), the rest its own.
	if os.Geteuid() == 0 {
		t.osUser = pgOSUser()
		if _, err := user.Lookup(t.osUser); err != nil {
			if out, err := exec.Command("useradd", "-m", t.osUser).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("creating user %s for PostgreSQL: %v: %s", t.osUser, err, out)
			}
		}
		u, err := user.Lookup(t.osUser)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for d := workDir; ; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
				return nil, fmt.Errorf("PostgreSQL runs as %s, who cannot reach %s: %s is not searchable by others (set TMPDIR to a directory it can reach)", t.osUser, t.dir, d)
			}
			if d == "/" || d == "." {
				break
			}
		}
		if err := os.Chown(t.dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(t.dir, "data")
	if out, err := t.asPG(ctx, filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb failed: %v\n%s", err, out)
	}
	// The spec's settings, then the runner's own (last wins).
	var b strings.Builder
	b.WriteString("\n# written by lockd bench from the spec's [postgres] settings\n")
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s = %s\n", n, quoteLiteral(settings[n]))
	}
	fmt.Fprintf(&b, "listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = %s\n", t.port, quoteLiteral(t.dir))
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(b.String())
	f.Close()
	if err != nil {
		return nil, err
	}
	return t, t.start(ctx)
}

func connectPostgres(ctx context.Context, dsn string) (*pgTarget, error) {
	t := &pgTarget{dsn: dsn}
	if err := waitReady(ctx, dsn, nil, 10*time.Second); err != nil {
		return nil, fmt.Errorf("PostgreSQL at %q: %v", dsn, err)
	}
	return t, nil
}

// asPG runs a PostgreSQL program as the unprivileged user when root.
func (t *pgTarget) asPG(ctx context.Context, prog string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if t.osUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", t.osUser, "--", prog}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, prog, args...)
	}
	cmd.SysProcAttr = childAttr()
	cmd.SysProcAttr.Pdeathsig = 0 // pg_ctl leaves the postmaster running on purpose
	return cmd.CombinedOutput()
}

func (t *pgTarget) start(ctx context.Context) error {
	out, err := t.asPG(ctx, filepath.Join(t.bindir, "pg_ctl"), "-D", filepath.Join(t.dir, "data"), "-l", t.log, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start failed: %v\n%s\nits log (%s) ends:\n%s", err, out, t.log, tail(t.log, 10))
	}
	return waitReady(ctx, t.ConnInfo(), nil, 30*time.Second)
}

func (t *pgTarget) Kind() string { return "postgres" }
func (t *pgTarget) Log() string  { return t.outLog }

func (t *pgTarget) ConnInfo() string {
	if t.dsn != "" {
		return t.dsn
	}
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", t.port)
}

func (t *pgTarget) postmaster() int {
	if t.dsn != "" {
		return 0
	}
	return pidFromFile(filepath.Join(t.dir, "data", "postmaster.pid"))
}

func (t *pgTarget) Alive() error {
	if t.dsn != "" {
		return waitReady(context.Background(), t.dsn, nil, 2*time.Second)
	}
	pid := t.postmaster()
	if pid == 0 {
		return fmt.Errorf("PostgreSQL is not running; its log (%s) ends:\n%s", t.log, tail(t.log, 10))
	}
	if _, _, _, ok := procStat(pid); !ok {
		return fmt.Errorf("PostgreSQL's postmaster (pid %d) exited; its log (%s) ends:\n%s", pid, t.log, tail(t.log, 10))
	}
	return nil
}

func (t *pgTarget) CPU() (float64, bool) {
	pid := t.postmaster()
	if pid == 0 {
		return 0, false
	}
	return treeCPU(pid)
}

func (t *pgTarget) Metrics(context.Context) (scrape, error) { return nil, nil }

// Apply: PostgreSQL's settings are the spec's [postgres] ones, fixed for
// the whole sweep; variants are lockd's.
func (t *pgTarget) Apply(context.Context, map[string]string, []string) (bool, error) {
	return false, nil
}

func (t *pgTarget) Restart(ctx context.Context) error {
	if t.dsn != "" {
		return t.Alive()
	}
	_ = t.Stop()
	return t.start(ctx)
}

func (t *pgTarget) Stop() error {
	if t.dsn != "" {
		return nil
	}
	defer func() {
		if b, err := os.ReadFile(t.log); err == nil {
			_ = os.WriteFile(t.outLog, b, 0o644)
		}
	}()
	if t.postmaster() == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := t.asPG(ctx, filepath.Join(t.bindir, "pg_ctl"), "-D", filepath.Join(t.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}
