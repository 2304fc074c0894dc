package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lockd/guc"
)

// lockdTarget is lockd run as a child process: the lockd binary itself
// (os.Executable for `lockd bench`), on a fresh data directory in the
// runner's work directory or on one the spec names. The spec's [lockd]
// settings are its configuration file; a variant's settings are set with
// ALTER SYSTEM, then pg_reload_conf() or, when a postmaster setting
// changes, a restart.
type lockdTarget struct {
	bin, dataDir, conf, log string
	port, mport             int

	cmd    *exec.Cmd
	exited chan struct{}
	werr   error // the process's exit status, once exited is closed
}

func startLockd(ctx context.Context, bin, workDir, dataDir string, settings map[string]string, logDir string) (*lockdTarget, error) {
	if dataDir == "" {
		dataDir = filepath.Join(workDir, "lockd-data")
	}
	t := &lockdTarget{bin: bin, dataDir: dataDir, conf: filepath.Join(workDir, "lockd.conf"), log: filepath.Join(logDir, "lockd.log")}
	var b strings.Builder
	b.WriteString("# written by lockd bench from the spec's [lockd] settings\n")
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s = %s\n", n, strconv.Quote(settings[n]))
	}
	if err := os.WriteFile(t.conf, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	var err error
	if t.port, err = freePort(); err != nil {
		return nil, err
	}
	if t.mport, err = freePort(); err != nil {
		return nil, err
	}
	return t, t.start(ctx)
}

func (t *lockdTarget) start(ctx context.Context) error {
	logf, err := os.OpenFile(t.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	t.cmd = exec.Command(t.bin, "-D", t.dataDir, "-p", strconv.Itoa(t.port), "--config", t.conf,
		"-c", "metrics_listen_address=127.0.0.1:"+strconv.Itoa(t.mport))
	t.cmd.Stdout, t.cmd.Stderr = logf, logf
	t.cmd.SysProcAttr = childAttr()
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("starting lockd (%s): %w", t.bin, err)
	}
	t.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		t.werr = cmd.Wait()
		close(done)
	}(t.cmd, t.exited)
	if err := waitReady(ctx, t.ConnInfo(), t.exited, 60*time.Second); err != nil {
		t.Stop()
		return fmt.Errorf("lockd did not start: %v; its log (%s) ends:\n%s", err, t.log, tail(t.log, 10))
	}
	return nil
}

func (t *lockdTarget) Kind() string { return "lockd" }
func (t *lockdTarget) Log() string  { return t.log }

func (t *lockdTarget) ConnInfo() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", t.port)
}

// Alive reports whether lockd runs and accepts connections. A process
// that was killed can take a moment to be reaped (a large heap to unmap),
// so a failed connection waits a little for the exit before calling the
// server hung.
func (t *lockdTarget) Alive() error {
	if t.hasExited() {
		return t.exitErr()
	}
	if err := waitReady(context.Background(), t.ConnInfo(), t.exited, 3*time.Second); err == nil {
		return nil
	}
	select {
	case <-t.exited:
		return t.exitErr()
	case <-time.After(5 * time.Second):
		return fmt.Errorf("lockd runs but accepts no connections; its log (%s) ends:\n%s", t.log, tail(t.log, 10))
	}
}

func (t *lockdTarget) hasExited() bool {
	select {
	case <-t.exited:
		return true
	default:
		return false
	}
}

func (t *lockdTarget) exitErr() error {
	return fmt.Errorf("lockd exited (%v); its log (%s) ends:\n%s", t.werr, t.log, tail(t.log, 10))
}

func (t *lockdTarget) CPU() (float64, bool) {
	if t.hasExited() {
		return 0, false
	}
	return treeCPU(t.cmd.Process.Pid)
}

func (t *lockdTarget) Metrics(ctx context.Context) (scrape, error) {
	return fetchMetrics(ctx, "127.0.0.1:"+strconv.Itoa(t.mport))
}

// Stop shuts lockd down fast (SIGINT: sessions aborted, a checkpoint, a
// clean exit), and kills it if it has not exited after 30 s.
func (t *lockdTarget) Stop() error {
	if t.cmd == nil || t.cmd.Process == nil {
		return nil
	}
	select {
	case <-t.exited:
		return nil
	default:
	}
	_ = t.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-t.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.exited
		return errors.New("lockd did not stop within 30 s of SIGINT; killed")
	}
}

func (t *lockdTarget) Restart(ctx context.Context) error {
	_ = t.Stop()
	return t.start(ctx)
}

// Apply sets the variant's settings with ALTER SYSTEM (and resets those
// other variants set), then restarts when a postmaster setting's value
// changes, or reloads; it then checks with SHOW that each setting is in
// force.
func (t *lockdTarget) Apply(ctx context.Context, settings map[string]string, names []string) (bool, error) {
	var stmts []string
	for _, n := range names {
		if v, ok := settings[n]; ok {
			stmts = append(stmts, fmt.Sprintf("alter system set %s = %s", n, quoteLiteral(v)))
		} else {
			stmts = append(stmts, "alter system reset "+n)
		}
	}
	if len(stmts) == 0 {
		return false, nil
	}
	restart := false
	for _, n := range names {
		d, _ := guc.Lookup(n)
		if d.Context != guc.Postmaster {
			continue
		}
		want, ok := settings[n]
		if !ok {
			continue // reset: restart only if a set value differs (below)
		}
		if !t.showIs(ctx, d, want) {
			restart = true
		}
	}
	// A postmaster setting another variant had set and this one resets:
	// restart unless the server already runs with the value it falls
	// back to (which SHOW cannot tell before the restart); compare with
	// what the last restart saw.
	for _, n := range names {
		d, _ := guc.Lookup(n)
		if _, set := settings[n]; !set && d.Context == guc.Postmaster && t.sourceIsAuto(ctx, n) {
			restart = true
		}
	}
	if err := execSQL(ctx, t.ConnInfo(), stmts...); err != nil {
		return false, err
	}
	if restart {
		if err := t.Restart(ctx); err != nil {
			return true, err
		}
	} else if err := execSQL(ctx, t.ConnInfo(), "select pg_reload_conf()"); err != nil {
		return false, err
	}
	for n, want := range settings {
		d, _ := guc.Lookup(n)
		ok := false
		for i := 0; i < 20 && !ok; i++ {
			if ok = t.showIs(ctx, d, want); !ok {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if !ok {
			got, _ := query(ctx, t.ConnInfo(), "show "+n)
			return restart, fmt.Errorf("setting %s = %q did not take effect (the server shows %v)", n, want, got)
		}
	}
	return restart, nil
}

// showIs reports whether SHOW in a new session gives the value want.
func (t *lockdTarget) showIs(ctx context.Context, d *guc.Def, want string) bool {
	rows, err := query(ctx, t.ConnInfo(), "show "+d.Name)
	if err != nil || len(rows) != 1 {
		return false
	}
	got, err1 := guc.ParseValue(d, rows[0][0])
	exp, err2 := guc.ParseValue(d, want)
	return err1 == nil && err2 == nil && got == exp
}

// sourceIsAuto reports whether the running server took name from
// lockd.auto.conf, i.e. a variant's ALTER SYSTEM is in force.
func (t *lockdTarget) sourceIsAuto(ctx context.Context, name string) bool {
	rows, err := query(ctx, t.ConnInfo(), "select source, coalesce(sourcefile, '') from pg_settings where name = "+quoteLiteral(name))
	return err == nil && len(rows) == 1 && slices.Contains([]string{"configuration file"}, rows[0][0]) && strings.HasSuffix(rows[0][1], "lockd.auto.conf")
}
