package server_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

// Authentication through pg_hba.conf rules, with pgx as the client: each
// method, PostgreSQL's refusals, an unknown user indistinguishable from
// a wrong password, and reloads (a broken file keeps the rules in force).

// syncBuffer is a log sink tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const testHBA = `# TYPE  DATABASE  USER      ADDRESS        METHOD
host    all       postgres  127.0.0.1/32   trust
host    all       rejected  0.0.0.0/0      reject
host    all       md5user,md5scram   127.0.0.1 255.255.255.255  md5
host    all       pwuser    127.0.0.1/32   password
host    other     all       127.0.0.1/32   reject
host    all       all       127.0.0.1/32   scram-sha-256
`

func startWithHBA(t *testing.T, hba string, settings ...string) (*lockdtest.Instance, string, *syncBuffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	inst := lockdtest.Start(t, lockdtest.Options{Settings: append([]string{"hba_file=" + path}, settings...),
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return inst, path, logs
}

func TestAuthenticationMethods(t *testing.T) {
	inst, hbaPath, logs := startWithHBA(t, testHBA, "log_connections=on")
	admin := inst.Connect(t) // trust
	mustExec(t, admin, "create role alice login password 'wonderland'")
	mustExec(t, admin, "set password_encryption = md5")
	mustExec(t, admin, "create role md5user login password 'md5pass'")
	mustExec(t, admin, "create role pwuser login password 'plain'")
	mustExec(t, admin, "reset password_encryption")
	mustExec(t, admin, "create role md5scram login password 'scrampass'")
	mustExec(t, admin, "create role rejected login password 'x'")
	mustExec(t, admin, "create role nopass login")

	for _, c := range []struct{ user, password string }{
		{"alice", "wonderland"},   // scram-sha-256
		{"md5user", "md5pass"},    // md5 with an md5 hash
		{"md5scram", "scrampass"}, // md5 rule, SCRAM verifier: SCRAM is used
		{"pwuser", "plain"},       // password (cleartext) against an md5 hash
	} {
		c2, err := connectAs(t, inst, c.user, c.password)
		if err != nil {
			t.Fatalf("%s: %v", c.user, err)
		}
		if got := queryText(t, c2, "select current_user"); got != c.user {
			t.Fatalf("current_user %s, want %s", got, c.user)
		}
	}

	failed := func(user string) string { return `password authentication failed for user "` + user + `"` }
	for _, c := range []struct{ user, password, code, msg string }{
		{"alice", "wrong", "28P01", failed("alice")},
		{"nosuchuser", "wonderland", "28P01", failed("nosuchuser")}, // mock SCRAM: the same as a wrong password
		{"nopass", "anything", "28P01", failed("nopass")},
		{"md5user", "wrong", "28P01", failed("md5user")},
		{"pwuser", "wrong", "28P01", failed("pwuser")},
		{"rejected", "x", "28000", `pg_hba.conf rejects connection for host "127.0.0.1", user "rejected", database "postgres", no encryption`},
	} {
		_, err := connectAs(t, inst, c.user, c.password)
		wantPgError(t, c.user+"/"+c.password, err, c.code, c.msg)
	}
	waitFor(t, "log_connections' lines", func() bool {
		return strings.Contains(logs.String(), `user=alice database=postgres application_name="" remote=127.0.0.1:`) &&
			strings.Contains(logs.String(), `method="scram-sha-256 (`+hbaPath+`:7)" ssl=off`)
	})
	waitFor(t, "the failures in the log", func() bool {
		l := logs.String()
		return strings.Contains(l, `Role \"nosuchuser\" does not exist.`) && strings.Contains(l, `User \"nopass\" has no password assigned.`) &&
			strings.Contains(l, `Password does not match for user \"alice\".`)
	})

	// A verifier set while connected is the one the next login checks.
	mustExec(t, admin, "alter role alice password 'looking-glass'")
	_, err := connectAs(t, inst, "alice", "wonderland")
	wantPgError(t, "old password", err, "28P01", failed("alice"))
	if _, err := connectAs(t, inst, "alice", "looking-glass"); err != nil {
		t.Fatal(err)
	}
	// An expired password fails as a wrong one does.
	mustExec(t, admin, "alter role alice valid until '2000-01-01'")
	_, err = connectAs(t, inst, "alice", "looking-glass")
	wantPgError(t, "expired", err, "28P01", failed("alice"))
}

func TestHBANoEntryAndReload(t *testing.T) {
	inst, path, logs := startWithHBA(t, "host all postgres 127.0.0.1/32 trust\nhost all alice 127.0.0.1/32 trust\n")
	admin := inst.Connect(t)
	mustExec(t, admin, "create role alice login")
	mustExec(t, admin, "create role bob login")
	if _, err := connectAs(t, inst, "alice", ""); err != nil {
		t.Fatal(err)
	}
	_, err := connectAs(t, inst, "bob", "")
	wantPgError(t, "bob", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "bob", database "postgres", no encryption`)

	// An edited file takes effect at pg_reload_conf() for new connections.
	write := func(text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("host all postgres 127.0.0.1/32 trust\nhost all bob 127.0.0.1/32 trust\n")
	if got := queryText(t, admin, "select pg_reload_conf()"); got != "t" {
		t.Fatal(got)
	}
	if _, err := connectAs(t, inst, "bob", ""); err != nil {
		t.Fatalf("bob after reload: %v", err)
	}
	_, err = connectAs(t, inst, "alice", "")
	wantPgError(t, "alice after reload", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "postgres", no encryption`)

	// A file with an error is not loaded: the rules in force stay, the
	// errors are logged, and pg_hba_file_rules shows them.
	write("host all postgres 127.0.0.1/32 trust\nhost all alice 127.0.0.1/32 trust\nhost all bob 127.0.0.1/33 trust\nhots all all all trust\n")
	queryText(t, admin, "select pg_reload_conf()")
	if _, err := connectAs(t, inst, "bob", ""); err != nil {
		t.Fatalf("bob after a broken reload: %v", err)
	}
	_, err = connectAs(t, inst, "alice", "")
	wantPgError(t, "alice after a broken reload", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "postgres", no encryption`)
	waitFor(t, "the reload's errors in the log", func() bool {
		l := logs.String()
		return strings.Contains(l, "pg_hba.conf was not reloaded") && strings.Contains(l, `invalid CIDR mask in address \"127.0.0.1/33\", line 3 of configuration file`)
	})
	got := queryText(t, admin, "select line_number, type, database, user_name, address, netmask, auth_method, error from pg_hba_file_rules order by line_number")
	want := `1,host,{all},{postgres},127.0.0.1,255.255.255.255,trust,NULL|2,host,{all},{alice},127.0.0.1,255.255.255.255,trust,NULL|` +
		`3,NULL,NULL,NULL,NULL,NULL,NULL,invalid CIDR mask in address "127.0.0.1/33"|4,NULL,NULL,NULL,NULL,NULL,NULL,invalid connection type "hots"`
	if got != want {
		t.Fatalf("pg_hba_file_rules:\n got %s\nwant %s", got, want)
	}
}

// A start with a broken hba file fails, as PostgreSQL refuses to start.
func TestHBABrokenAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte("host all all 127.0.0.1/32 sorcery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := lockdtest.TryStart(t, lockdtest.Options{Settings: []string{"hba_file=" + path}})
	if err == nil || !strings.Contains(err.Error(), `invalid authentication method "sorcery"`) {
		t.Fatalf("start with a broken hba file: %v", err)
	}
}

// Many wrong passwords in a row: each is refused and logged, another
// session is served throughout, and nothing is left behind (goroutines
// return to where they were). Latency is measured by no test here.
func TestWrongPasswordFlood(t *testing.T) {
	inst, _, logs := startWithHBA(t, testHBA)
	admin := inst.Connect(t)
	mustExec(t, admin, "create role alice login password 'wonderland'")
	queryText(t, admin, "select 1")
	base := runtime.NumGoroutine()
	const workers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				user := "alice"
				if i%2 == 1 {
					user = "nosuchuser"
				}
				_, err := connectAs(t, inst, user, "wrong")
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	queries := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			if got := queryText(t, admin, "select 1"); got != "1" {
				t.Fatalf("select 1 during the flood: %s", got)
			}
			queries++
		}
	}
	close(errs)
	n := 0
	for err := range errs {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28P01" {
			t.Fatalf("attempt %d: %v", n, err)
		}
		n++
	}
	if n != workers*each || queries == 0 {
		t.Fatalf("%d attempts, %d queries meanwhile", n, queries)
	}
	waitFor(t, "every failure in the log", func() bool {
		return strings.Count(logs.String(), "password authentication failed for user") == workers*each
	})
	waitFor(t, "the goroutines to go back to where they were", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// A relative hba_file is relative to the data directory, as in
// PostgreSQL, for the rules and for pg_hba_file_rules.
func TestHBARelativePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pg_hba.conf"), []byte("host all postgres 127.0.0.1/32 trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{DataDir: dir, Settings: []string{"hba_file=pg_hba.conf"}})
	admin := inst.Connect(t)
	mustExec(t, admin, "create role alice login")
	_, err := connectAs(t, inst, "alice", "")
	wantPgError(t, "alice", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "postgres", no encryption`)
	if got := queryText(t, admin, "select user_name from pg_hba_file_rules"); got != "{postgres}" {
		t.Fatalf("pg_hba_file_rules: %s", got)
	}
}
