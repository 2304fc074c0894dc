package difftest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
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
		port, err := freePort()
		if err != nil {
			p.Stop()
			return nil, err
		}
		p.Port = port
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c TimeZone=UTC -c fsync=off -c jit=off", port, dir)
		out, err := p.run(filepath.Join(bin, "pg_ctl"), "-D", p.data(), "-l", filepath.Join(dir, "postgres.log"), "-w", "-o", opts, "start")
		if err == nil {
			return p, nil
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			p.Stop()
			return nil, fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		}
	}
}

func (p *PostgreSQL) data() string { return filepath.Join(p.Dir, "data") }

// run runs a PostgreSQL program, as OSUser when the caller is root.
func (p *PostgreSQL) run(prog string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", p.OSUser, "--", prog}, args...)...)
	} else {
		cmd = exec.Command(prog, args...)
	}
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// ConnString is a libpq URL for user postgres.
func (p *PostgreSQL) ConnString() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
}

// Stop stops the server (immediately: the cluster is thrown away) and
// removes its directory.
func (p *PostgreSQL) Stop() {
	if p.Dir == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(p.data(), "postmaster.pid")); err == nil {
		p.run(filepath.Join(p.Bin, "pg_ctl"), "-D", p.data(), "-m", "immediate", "-w", "stop")
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
