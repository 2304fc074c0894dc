package difftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL is a throwaway PostgreSQL 15 cluster on a loopback port, as
// scripts/lib.sh starts one: initdb with the C locale and UTF8, trust
// authentication for user postgres, TimeZone=UTC; fsync off, and JIT off
// (the planner switches the test turns off make plans costly enough for
// JIT, which then takes a second or two per query). PostgreSQL refuses to
// run as root, so when the caller is root the cluster runs as OSUser.
type PostgreSQL struct {
	Bin    string // the directory of initdb, pg_ctl and postgres
	OSUser string // the user it runs as when the caller is root
	Dir    string
	Port   int

	cmd    *exec.Cmd  // the running postmaster (or runuser around it)
	exited chan error // receives cmd.Wait's result
}

// ErrNoPostgreSQL is returned by StartPostgreSQL when the server binaries
// are not installed.
var ErrNoPostgreSQL = errors.New("difftest: PostgreSQL server binaries not found")

// StartPostgreSQL initializes and starts a cluster in a new temporary
// directory. Stop it with Stop.
func StartPostgreSQL(bin, osUser string) (*PostgreSQL, error) {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoPostgreSQL, err)
		}
	}
	p := &PostgreSQL{Bin: bin, OSUser: osUser}
	root := os.Geteuid() == 0
	if root {
		if _, err := user.Lookup(osUser); err != nil {
			// as scripts/lib.sh does: an unprivileged user for PostgreSQL
			if out, err := exec.Command("useradd", "-m", osUser).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("useradd %s: %v: %s", osUser, err, out)
			}
		}
	}
	dir, err := os.MkdirTemp("", "difftest-pg-")
	if err != nil {
		return nil, err
	}
	p.Dir = dir
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	if root {
		u, err := user.Lookup(osUser)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if out, err := p.run(filepath.Join(bin, "initdb"), "-D", p.data(), "-U", "postgres", "-A", "trust",
		"--no-sync", "--locale=C", "-E", "UTF8"); err != nil {
		p.Stop()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		err := p.start()
		if err == nil {
			return p, nil
		}
		if attempt == 2 {
			p.Stop()
			return nil, err
		}
	}
}

// start runs the postmaster in the foreground as a child of this process
// (not through pg_ctl, which detaches it): if the test dies, the child
// is told to stop (setParentDeath) rather than left running.
func (p *PostgreSQL) start() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	p.Port = port
	log, err := os.Create(filepath.Join(p.Dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := p.command(filepath.Join(p.Bin, "postgres"), "-D", p.data(), "-c", "listen_addresses=127.0.0.1",
		"-p", strconv.Itoa(port), "-c", "unix_socket_directories="+p.Dir, "-c", "TimeZone=UTC",
		"-c", "fsync=off", "-c", "jit=off")
	cmd.Stdout, cmd.Stderr = log, log
	setParentDeath(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgconn.Connect(ctx, p.ConnString())
		cancel()
		if err == nil {
			c.Close(context.Background())
			p.cmd, p.exited = cmd, exited
			return nil
		}
		select {
		case werr := <-exited:
			text, _ := os.ReadFile(filepath.Join(p.Dir, "postgres.log"))
			return fmt.Errorf("postgres exited (%v):\n%s", werr, text)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.cmd, p.exited = cmd, exited
			return fmt.Errorf("postgres did not accept connections within 30 s")
		}
	}
}

func (p *PostgreSQL) data() string { return filepath.Join(p.Dir, "data") }

// command is a PostgreSQL program to run as OSUser when the caller is
// root (runuser passes a SIGTERM on to it).
func (p *PostgreSQL) command(prog string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", p.OSUser, "--", prog}, args...)...)
	} else {
		cmd = exec.Command(prog, args...)
	}
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// run runs a PostgreSQL program to its end and returns its output.
func (p *PostgreSQL) run(prog string, args ...string) ([]byte, error) {
	cmd := p.command(prog, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// ConnString is a libpq URL for user postgres.
func (p *PostgreSQL) ConnString() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
}

// Stop stops the server (an immediate shutdown: the cluster is thrown
// away) and removes its directory.
func (p *PostgreSQL) Stop() {
	if p.Dir == "" {
		return
	}
	if p.cmd != nil {
		// the postmaster's pid is the first line of postmaster.pid (under
		// runuser it is not our child's)
		if b, err := os.ReadFile(filepath.Join(p.data(), "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
				syscall.Kill(pid, syscall.SIGQUIT)
			}
		}
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
		p.cmd = nil
	}
	os.RemoveAll(p.Dir)
	p.Dir = ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
