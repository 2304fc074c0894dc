package sqlscript

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of the SQL scripts with what the statements gave")

// How long the runner waits for a statement, for a backend to start
// waiting for a lock, for a statement started with waits to finish, and
// for the server to end closed sessions.
const (
	statementTimeout = 30 * time.Second
	waitTimeout      = 10 * time.Second
	pollInterval     = 5 * time.Millisecond
)

// RunDir runs every script (*.txt) in dir, each file as a subtest and
// each case of a file as a subtest of that.
func RunDir(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s: %v", dir, err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			runFile(t, path, *rewrite, func(name string, f func(testing.TB)) {
				t.Run(name, func(t *testing.T) { f(t) })
			})
		})
	}
}

// fileRun is one script file being run.
type fileRun struct {
	path     string
	rewrite  bool
	settings []string
	shared   server // the server the cases share
	tmpdir   string
}

// runFile runs the cases of one file; runCase runs each (as a subtest, or
// directly in the runner's own tests).
func runFile(t testing.TB, path string, rewrite bool, runCase func(name string, f func(testing.TB))) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f := &fileRun{path: path, rewrite: rewrite, tmpdir: tmpDir(t)}
	var starts []int
	needShared := false
	for i, n := range nodes {
		switch n.kind {
		case kindSettings:
			f.settings = append(f.settings, n.settings...)
		case kindCase:
			starts = append(starts, i)
			needShared = needShared || !n.caseOpts.fresh
		}
	}
	switch {
	case *dsn != "":
		f.shared = &externalServer{dsn: *dsn}
	case needShared:
		f.shared = startLockd(t, f.settings)
	}
	for k, i := range starts {
		end := len(nodes)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		header, body := nodes[i], nodes[i+1:end]
		runCase(header.caseName, func(t testing.TB) { f.runCase(t, header, body) })
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(format(nodes)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// caseRun is one case being run. Everything in it belongs to the case's
// goroutine; statements started with waits run in their own goroutines
// and hand back an outcome.
type caseRun struct {
	t        testing.TB
	f        *fileRun
	opts     caseOptions
	srv      server
	sessions map[string]*session
	order    []string
	pids     map[uint32]string
	admin    *pgconn.PgConn // the runner's own connection: waits, resets
	altered  bool           // the case ran ALTER SYSTEM
}

func (f *fileRun) runCase(t testing.TB, header *node, body []*node) {
	c := &caseRun{t: t, f: f, opts: header.caseOpts, sessions: map[string]*session{}, pids: map[uint32]string{}}
	switch {
	case c.opts.fresh && *dsn != "":
		t.Skip("the case needs a lockd of its own")
	case c.opts.fresh:
		c.srv = startLockd(t, append(append([]string{}, f.settings...), c.opts.settings...))
	default:
		c.srv = f.shared
	}
	defer c.end()
	for i := 0; i < len(body); i++ {
		n := body[i]
		switch n.kind {
		case kindRepeat:
			j := i + 1
			for body[j].kind != kindEnd {
				j++
			}
			for iter := 1; iter <= n.count; iter++ {
				for _, m := range body[i+1 : j] {
					if m.kind == kindStep {
						c.runStep(m, iter)
					}
				}
			}
			i = j
		case kindStep:
			c.runStep(n, 0)
		}
	}
}

// runStep runs a step and compares its output; iter counts the runs of a
// repeat block (0 outside one).
func (c *caseRun) runStep(n *node, iter int) {
	c.t.Helper()
	st := n.step
	var got []string
	if st.eventually && (!c.f.rewrite || len(n.expected) > 0) {
		deadline := time.Now().Add(waitTimeout)
		for {
			got = c.do(n)
			if equal(got, n.expected) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	} else {
		got = c.do(n)
	}
	if !st.kind.prints() {
		return
	}
	where := fmt.Sprintf("%s:%d", c.f.path, n.lineNo)
	if iter > 1 {
		where += fmt.Sprintf(" (repeat, run %d)", iter)
		if !equal(got, n.actual) {
			c.t.Errorf("%s: %s\nthis run gave:\n%s\nthe first run gave:\n%s", where, n.text[0], indent(got), indent(n.actual))
			return
		}
	} else {
		n.actual, n.ran = got, true
	}
	if !c.f.rewrite && !equal(got, n.expected) {
		c.t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", where, n.text[0], indent(got), indent(n.expected))
	}
}

// do runs one step and returns what it printed.
func (c *caseRun) do(n *node) []string {
	st := n.step
	switch st.kind {
	case stepStatement:
		return c.statement(n)
	case stepAwait, stepPoll:
		s := c.sessions[st.session]
		if s == nil || s.pending == nil {
			return []string{"error: no statement of " + st.session + " started with waits"}
		}
		if st.kind == stepPoll {
			return c.poll(s)
		}
		return c.await(s)
	case stepRestart, stepCrash:
		c.closeSessions()
		c.pids = map[uint32]string{}
		done := false
		if st.kind == stepCrash {
			done = c.srv.crash(c.t)
		} else {
			done = c.srv.restart(c.t)
		}
		if !done {
			c.t.Logf("%s:%d: %s skipped: the server was not started by the runner", c.f.path, n.lineNo, n.text[0])
		}
	case stepCheckpoint:
		if _, err := c.srv.checkpoint(); err != nil {
			c.t.Errorf("%s:%d: checkpoint: %v", c.f.path, n.lineNo, err)
		}
	case stepFile:
		data, err := copyInput(st.input)
		var dir string
		if err == nil {
			dir, err = c.srv.dataDir()
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, st.text), []byte(data), 0o644)
		}
		if err != nil {
			c.t.Errorf("%s:%d: file: %v", c.f.path, n.lineNo, err)
		}
	}
	return nil
}

var alterSystemRE = regexp.MustCompile(`(?i)\balter\s+system\b`)

func (c *caseRun) statement(n *node) []string {
	st := n.step
	s, err := c.session(st.session)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	if s.pending != nil {
		return []string{fmt.Sprintf("error: %s still runs a statement started with waits (await it first)", st.session)}
	}
	text, err := c.substitute(st.text)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	if alterSystemRE.MatchString(text) {
		c.altered = true
	}
	r := c.renderer()
	if st.waits {
		p := s.start(text, st.input, n.lineNo)
		deadline := time.Now().Add(waitTimeout)
		for {
			select {
			case o := <-p.done:
				s.pending = nil
				return append([]string{"did not wait"}, c.finish(r, o, st, 0)...)
			default:
			}
			if w, err := c.waiting(s.pid); err != nil {
				return []string{"error: polling for the wait: " + err.Error()}
			} else if w {
				return nil
			}
			if time.Now().After(deadline) {
				return []string{fmt.Sprintf("did not wait for a lock within %v", waitTimeout)}
			}
			time.Sleep(pollInterval)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	start := time.Now()
	o := s.run(ctx, text, st.input)
	return c.finish(r, o, st, time.Since(start))
}

// finish prints an outcome, with the checks the step asked for.
func (c *caseRun) finish(r *renderer, o *outcome, st *step, took time.Duration) []string {
	out := r.render(o)
	if st.hasTook && (took < st.tookMin || st.tookMax > 0 && took > st.tookMax) {
		out = append(out, fmt.Sprintf("took %v, want %v..%v", took.Round(time.Millisecond), st.tookMin, st.tookMax))
	}
	if c.opts.txstatus {
		out = append(out, "status: "+string(o.status))
	}
	return out
}

func (c *caseRun) await(s *session) []string {
	select {
	case o := <-s.pending.done:
		s.pending = nil
		return c.finish(c.renderer(), o, &step{}, 0)
	case <-time.After(waitTimeout):
		return []string{fmt.Sprintf("still running after %v", waitTimeout)}
	}
}

// poll prints "waiting" while the statement waits for a lock, else its
// outcome once it has one.
func (c *caseRun) poll(s *session) []string {
	deadline := time.Now().Add(waitTimeout)
	for {
		select {
		case o := <-s.pending.done:
			s.pending = nil
			return c.finish(c.renderer(), o, &step{}, 0)
		default:
		}
		if w, err := c.waiting(s.pid); err != nil {
			return []string{"error: polling for the wait: " + err.Error()}
		} else if w {
			return []string{"waiting"}
		}
		if time.Now().After(deadline) {
			return []string{fmt.Sprintf("still running after %v, not waiting for a lock", waitTimeout)}
		}
		time.Sleep(pollInterval)
	}
}

// waiting reports whether backend pid waits for a heavyweight lock: its
// wait event is of type Lock and pg_locks has a request of it not granted.
func (c *caseRun) waiting(pid uint32) (bool, error) {
	admin, err := c.adminConn()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	q := fmt.Sprintf("select (select count(*) from pg_stat_activity where pid = %d and wait_event_type = 'Lock') > 0 "+
		"and (select count(*) from pg_locks where pid = %d and not granted) > 0", pid, pid)
	rs, err := admin.Exec(ctx, q).ReadAll()
	if err != nil {
		return false, err
	}
	return string(rs[0].Rows[0][0]) == "t", nil
}

func (c *caseRun) renderer() *renderer {
	return &renderer{pids: c.pids, verbose: c.opts.verbose}
}

// session returns the named session, connecting it on first use.
func (c *caseRun) session(name string) (*session, error) {
	if s := c.sessions[name]; s != nil {
		return s, nil
	}
	s := &session{name: name}
	cfg, err := pgx.ParseConfig(c.srv.connString())
	if err != nil {
		return nil, err
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { s.addNotice(n) }
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	if s.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connect %s: %w", name, err)
	}
	s.pid = s.conn.PgConn().PID()
	c.sessions[name] = s
	c.order = append(c.order, name)
	c.pids[s.pid] = name
	return s, nil
}

func (c *caseRun) adminConn() (*pgconn.PgConn, error) {
	if c.admin != nil && !c.admin.IsClosed() {
		return c.admin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	a, err := pgconn.Connect(ctx, c.srv.connString())
	if err != nil {
		return nil, err
	}
	c.admin = a
	return a, nil
}

var varRE = regexp.MustCompile(`\$([a-z][a-z0-9_]*)`)

// substitute replaces $NAME by session NAME's pid and $tmpdir by the
// file's temporary directory. A dollar-quote tag ($x$) and a $ inside an
// identifier are left alone.
func (c *caseRun) substitute(text string) (string, error) {
	var b strings.Builder
	last := 0
	for _, m := range varRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if end < len(text) && text[end] == '$' {
			continue
		}
		if start > 0 && isIdentChar(text[start-1]) {
			continue
		}
		name := text[m[2]:m[3]]
		b.WriteString(text[last:start])
		if name == "tmpdir" {
			b.WriteString(c.f.tmpdir)
		} else {
			s, err := c.session(name)
			if err != nil {
				return "", err
			}
			fmt.Fprint(&b, s.pid)
		}
		last = end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

func isIdentChar(b byte) bool {
	return b == '_' || b == '$' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// closeSessions ends the case's connections; a statement still running
// is an error in the script, and its backend is terminated.
func (c *caseRun) closeSessions() {
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	for _, name := range c.order {
		s := c.sessions[name]
		if s.pending != nil {
			c.t.Errorf("%s: the statement of %s on line %d was never awaited", c.f.path, name, s.pending.lineNo)
			if a, err := c.adminConn(); err == nil {
				_, _ = a.Exec(ctx, fmt.Sprintf("select pg_terminate_backend(%d)", s.pid)).ReadAll()
			}
			select {
			case <-s.pending.done:
			case <-time.After(waitTimeout):
				c.t.Errorf("%s: the statement of %s on line %d did not end when its backend was terminated", c.f.path, name, s.pending.lineNo)
				continue // leave the connection to the server's shutdown
			}
		}
		_ = s.conn.Close(ctx)
	}
	if c.admin != nil {
		_ = c.admin.Close(ctx)
		c.admin = nil
	}
	c.sessions, c.order = map[string]*session{}, nil
	c.waitSessions(0)
}

// waitSessions waits until the server has ended all but n sessions.
func (c *caseRun) waitSessions(n int) {
	if got, ok := waitSessions(c.srv, n); !ok {
		c.t.Errorf("%s: %d sessions still open, want %d", c.f.path, got, n)
	}
}

// end closes the case's sessions and, on a shared server, leaves an empty
// database for the next case.
func (c *caseRun) end() {
	c.closeSessions()
	if c.opts.fresh {
		return
	}
	if err := c.reset(); err != nil {
		c.t.Errorf("%s: cleaning up after the case: %v", c.f.path, err)
	}
	if c.admin != nil {
		_ = c.admin.Close(context.Background())
		c.admin = nil
	}
	c.waitSessions(0)
}

// reset drops the tables and sequences the case left and, if it ran ALTER
// SYSTEM, resets what it set.
func (c *caseRun) reset() error {
	a, err := c.adminConn()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	names := func(kinds string) ([]string, error) {
		rs, err := a.Exec(ctx, "select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace "+
			"where n.nspname = 'public' and c.relkind in ("+kinds+") order by 1").ReadAll()
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range rs[0].Rows {
			out = append(out, pgx.Identifier{string(r[0])}.Sanitize())
		}
		return out, nil
	}
	for _, k := range []struct{ kinds, drop string }{{"'r', 'p'", "table"}, {"'S'", "sequence"}} {
		rels, err := names(k.kinds)
		if err != nil {
			return err
		}
		if len(rels) == 0 {
			continue
		}
		if _, err := a.Exec(ctx, "drop "+k.drop+" if exists "+strings.Join(rels, ", ")+" cascade").ReadAll(); err != nil {
			return err
		}
	}
	if c.altered {
		for _, q := range []string{"alter system reset all", "select pg_reload_conf()"} {
			if _, err := a.Exec(ctx, q).ReadAll(); err != nil {
				return err
			}
		}
	}
	return nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "    (nothing)"
	}
	return "    " + strings.Join(lines, "\n    ")
}
