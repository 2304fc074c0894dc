package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// TestPgActivity runs pg_activity (Debian's pg-activity) against lockd
// under pgbench load, in a detached tmux session of a fixed size, and
// reads its screen: the pgbench sessions are listed with their queries,
// states, client address and wait events, and pg_activity reports no
// error. It runs pg_activity as user nobody, who cannot read lockd's data
// directory, so pg_activity does not take lockd's backends for local
// processes (scripts/check-pg-activity.sh explains why, and runs the same
// check for longer); that needs root.
func TestPgActivity(t *testing.T) {
	pga, err := exec.LookPath("pg_activity")
	if err != nil {
		t.Skip("pg_activity not found on PATH (apt-get install pg-activity)")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not found on PATH (apt-get install tmux)")
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("pg_activity must run as another user than lockd (runuser -u nobody), which needs root")
	}
	pgbench := need(t, "pgbench")
	inst := lockdtest.Start(t, lockdtest.Options{})
	port := strconv.Itoa(inst.Port)
	conn := []string{"-h", "127.0.0.1", "-p", port, "-U", "postgres"}
	if o := run(t, 60*time.Second, pgbench, append(append([]string{"-i", "-s", "1", "-q"}, conn...), "postgres")...); o.code != 0 {
		t.Fatalf("pgbench -i: exit %d\n%s", o.code, o.stderr)
	}
	done := make(chan output, 1)
	go func() {
		done <- run(t, 60*time.Second, pgbench, append(append([]string{"-c", "4", "-T", "12"}, conn...), "postgres")...)
	}()
	defer func() {
		if o := <-done; o.code != 0 {
			t.Errorf("pgbench: exit %d\n%s", o.code, o.stderr)
		}
	}()

	// pg_activity's stderr goes to a file user nobody may write
	dir := t.TempDir()
	errFile := filepath.Join(dir, "pg_activity.err")
	if err := os.WriteFile(errFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(errFile, 0o666); err != nil {
		t.Fatal(err)
	}
	// a tmux server of its own (-L), killed at the end
	sock := fmt.Sprintf("lockd-pga-%d-%d", os.Getpid(), time.Now().UnixNano())
	tm := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, tmux, append([]string{"-L", sock}, args...)...)
		cmd.Env = append(clientEnv(), "TERM=xterm")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	shell := fmt.Sprintf("%s -u nobody -- %s -h 127.0.0.1 -p %s -U postgres -d postgres 2>%s; echo pg_activity exited with status $?; sleep 600",
		runuser, pga, port, errFile)
	if out, err := tm("new-session", "-d", "-s", "pga", "-x", "200", "-y", "50", shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	defer func() { _, _ = tm("kill-server") }()

	// pg_activity refreshes every 2 s: capture four screens, 2 s apart
	time.Sleep(5 * time.Second)
	var screens []string
	for i := 0; i < 4; i++ {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		s, err := tm("capture-pane", "-p", "-t", "pga")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v\n%s", err, s)
		}
		screens = append(screens, s)
	}
	all := strings.Join(screens, "\n")
	stderr, _ := os.ReadFile(errFile)
	show := func() string {
		return "screen:\n" + screens[len(screens)-1] + "\npg_activity's stderr:\n" + string(stderr)
	}
	for _, c := range []struct{ what, re string }{
		{"the running-queries list", `RUNNING QUERIES`},
		{"a wait-event column", `(?m)^PID .*Waiting .*state .*Query`},
		{"pgbench's sessions with their query text", `pgbench .*(UPDATE pgbench_|SELECT abalance|INSERT INTO pgbench_history|BEGIN;|END;)`},
		{"the sessions' states", `pgbench .* (active|idle in transaction) `},
		{"wait events", `pgbench .* (transactionid|tuple|relation|WALSync|WALWrite|WALInsert|ClientRead|LockManager|BufferContent|ProcArray|XidGen|DataFileRead|DataFileExtend) +(active|idle in transaction) `},
		{"the client address (inet)", `pgbench +postgres +127\.0\.0\.1/32 `},
	} {
		if !regexp.MustCompile(c.re).MatchString(all) {
			t.Errorf("pg_activity shows no %s (/%s/)", c.what, c.re)
		}
	}
	if bad := regexp.MustCompile(`(?i)traceback|error|exception|exited with status`); bad.MatchString(all) || bad.Match(stderr) {
		t.Errorf("pg_activity reported a problem")
	}
	if t.Failed() {
		t.Log(show())
	}
}
