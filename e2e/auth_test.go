package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// Roles and password authentication with the real psql and pgbench:
// SCRAM-SHA-256 through PGPASSWORD, and PostgreSQL's refusals as libpq
// prints them.

// runEnv is run with extra environment variables.
func runEnv(t *testing.T, env []string, bin string, args ...string) output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(clientEnv(), env...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := output{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out\n%s\n%s", bin, o.stdout, o.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPasswordAuthentication(t *testing.T) {
	psqlBin, pgbench := need(t, "psql"), need(t, "pgbench")
	hba := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("host all postgres 127.0.0.1/32 trust\nhost all gone 0.0.0.0/0 reject\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"hba_file=" + hba}})
	port := strconv.Itoa(inst.Port)
	o := psql(t, inst.Port, "-v", "ON_ERROR_STOP=1", "-c", "create role alice login password 'wonderland'", "-c", "create role gone login", "-c", `\du`)
	wantOutput(t, `\du`, o, 0, `CREATE ROLE
CREATE ROLE
                                   List of roles
 Role name |                         Attributes                         | Member of 
-----------+------------------------------------------------------------+-----------
 alice     |                                                            | {}
 gone      |                                                            | {}
 postgres  | Superuser, Create role, Create DB, Replication, Bypass RLS | {}

`, "")

	as := func(user, password string, args ...string) output {
		return runEnv(t, []string{"PGPASSWORD=" + password}, psqlBin,
			append([]string{"-X", "-At", "-h", "127.0.0.1", "-p", port, "-U", user, "-d", "postgres"}, args...)...)
	}
	wantOutput(t, "alice with her password", as("alice", "wonderland", "-c", "select current_user"), 0, "alice\n", "")
	// libpq applies SASLprep to the password as lockd did when it made
	// the verifier: fullwidth letters and a soft hyphen normalise away.
	o = psql(t, inst.Port, "-c", "create role uni login password '\uff30\uff41\uff53\uff53\u00ad'")
	if o.code != 0 {
		t.Fatalf("create role uni: %s", o.stderr)
	}
	wantOutput(t, "a password SASLprep normalises", as("uni", "Pass", "-c", "select current_user"), 0, "uni\n", "")
	fatal := func(msg string) string {
		return `psql: error: connection to server at "127.0.0.1", port ` + port + " failed: FATAL:  " + msg + "\n"
	}
	wantOutput(t, "a wrong password", as("alice", "wrong", "-c", "select 1"), 2, "", fatal(`password authentication failed for user "alice"`))
	wantOutput(t, "an unknown user", as("mallory", "wonderland", "-c", "select 1"), 2, "", fatal(`password authentication failed for user "mallory"`))
	wantOutput(t, "an hba reject", as("gone", "", "-c", "select 1"), 2, "",
		fatal(`pg_hba.conf rejects connection for host "127.0.0.1", user "gone", database "postgres", no encryption`))

	// psql's \password hashes the password itself (SCRAM-SHA-256, as
	// password_encryption says) and sends ALTER ROLE with the verifier,
	// which is stored as it is. psql reads the password from its
	// terminal, or from stdin in a session without one.
	cmd := exec.Command(psqlBin, psqlArgs(inst.Port, "-c", `\password alice`)...)
	cmd.Env = clientEnv()
	cmd.Stdin = strings.NewReader("through-the-glass\nthrough-the-glass\n")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("\\password: %v\n%s", err, out)
	}
	wantOutput(t, "the new password", as("alice", "through-the-glass", "-c", "select current_user"), 0, "alice\n", "")
	wantOutput(t, "the stored verifier", psql(t, inst.Port, "-At", "-c", "select rolpassword ~ '^SCRAM-SHA-256\\$4096:' from pg_authid where rolname = 'alice'"), 0, "t\n", "")

	// pgbench initialises and runs as alice over SCRAM.
	env := []string{"PGPASSWORD=through-the-glass"}
	o = runEnv(t, env, pgbench, "-i", "-s", "1", "-q", "-h", "127.0.0.1", "-p", port, "-U", "alice", "postgres")
	if o.code != 0 {
		t.Fatalf("pgbench -i as alice: %d\n%s", o.code, o.stderr)
	}
	o = runEnv(t, env, pgbench, "-n", "-S", "-c", "2", "-t", "50", "-h", "127.0.0.1", "-p", port, "-U", "alice", "postgres")
	if o.code != 0 || !strings.Contains(o.stdout, "number of transactions actually processed: 100/100") {
		t.Fatalf("pgbench as alice: %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	o = runEnv(t, []string{"PGPASSWORD=wrong"}, pgbench, "-n", "-S", "-t", "1", "-h", "127.0.0.1", "-p", port, "-U", "alice", "postgres")
	if o.code == 0 || !strings.Contains(o.stderr, `FATAL:  password authentication failed for user "alice"`) {
		t.Fatalf("pgbench with a wrong password: %d\n%s", o.code, o.stderr)
	}
}

// psql and pgbench over SSL with sslmode=verify-full against a CA the
// test made, authenticating with SCRAM-SHA-256-PLUS (channel binding).
func TestTLSPsql(t *testing.T) {
	psqlBin, pgbench := need(t, "psql"), need(t, "pgbench")
	ca := lockdtest.NewTestCA(t)
	hba := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("hostnossl all postgres 127.0.0.1/32 trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"hba_file=" + hba, "ssl=on",
		"ssl_cert_file=" + ca.CertFile, "ssl_key_file=" + ca.KeyFile}})
	wantOutput(t, "create role", runEnv(t, []string{"PGSSLMODE=disable"}, psqlBin, psqlArgs(inst.Port, "-c", "create role alice login password 'wonderland'")...),
		0, "CREATE ROLE\n", "")
	conn := "host=localhost hostaddr=127.0.0.1 port=" + strconv.Itoa(inst.Port) + " dbname=postgres user=alice sslmode=verify-full sslrootcert=" + ca.CAFile
	env := []string{"PGPASSWORD=wonderland"}
	o := runEnv(t, env, psqlBin, "-X", "-At", "-d", conn+" channel_binding=require",
		"-c", "select ssl, version from pg_stat_ssl where pid = pg_backend_pid()")
	wantOutput(t, "psql verify-full with channel binding", o, 0, "t|TLSv1.3\n", "")
	o = runEnv(t, []string{"PGPASSWORD=wrong"}, psqlBin, "-X", "-At", "-d", conn, "-c", "select 1")
	if o.code != 2 || !strings.Contains(o.stderr, `FATAL:  password authentication failed for user "alice"`) {
		t.Fatalf("wrong password over SSL: %d %s", o.code, o.stderr)
	}
	script := filepath.Join(t.TempDir(), "select.sql")
	if err := os.WriteFile(script, []byte("select 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = runEnv(t, env, pgbench, "-n", "-t", "5", "-c", "2", "-f", script, "-d", conn)
	if o.code != 0 {
		t.Fatalf("pgbench over SSL: %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}
