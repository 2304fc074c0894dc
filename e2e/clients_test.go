package e2e

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// TestPsycopg2NamedCursors runs psycopg2's server-side cursors against
// lockd: iteration in itersize batches (DECLARE ... FETCH FORWARD),
// fetchmany, scrolling (SCROLL cursors, MOVE), WITH HOLD cursors that
// outlive the commit. Skipped without python3 and psycopg2
// (apt-get install python3-psycopg2; .ci/run installs it).
func TestPsycopg2NamedCursors(t *testing.T) {
	py := pythonWith(t, "psycopg2", "python3-psycopg2")
	inst := lockdtest.Start(t, lockdtest.Options{})
	script, _ := filepath.Abs(filepath.Join("testdata", "clients", "psycopg2_cursors.py"))
	dsn := "host=127.0.0.1 port=" + strconv.Itoa(inst.Port) + " user=postgres dbname=postgres"
	o := run(t, 60*time.Second, py, script, dsn)
	if o.code != 0 || !strings.HasSuffix(strings.TrimSpace(o.stdout), "done") {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

// pythonWith returns a Python 3 that can import module: python3 on PATH,
// or Debian's /usr/bin/python3 (where apt installs the module when PATH's
// python3 is another installation); it skips the test if neither can.
func pythonWith(t *testing.T, module, pkg string) string {
	t.Helper()
	var tried []string
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		py, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if err := exec.Command(py, "-c", "import "+module).Run(); err == nil {
			return py
		}
		tried = append(tried, py)
	}
	t.Skipf("no python3 that can import %s (tried %v; apt-get install %s)", module, tried, pkg)
	return ""
}

// TestPsqlListExtensions: psql's \dx reads pg_extension, which is empty in
// lockd (PostgreSQL 15 lists plpgsql, an extension lockd does not have).
func TestPsqlListExtensions(t *testing.T) {
	psql := need(t, "psql")
	inst := lockdtest.Start(t, lockdtest.Options{})
	o := run(t, 30*time.Second, psql, "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "-U", "postgres", "-d", "postgres", "-c", `\dx`)
	want := `     List of installed extensions
 Name | Version | Schema | Description 
------+---------+--------+-------------
(0 rows)

`
	if o.code != 0 || o.stdout != want {
		t.Fatalf("\\dx: exit %d\n%s%s\nwant:\n%s", o.code, o.stdout, o.stderr, want)
	}
}

// TestPGOPTIONSWithPostgresSettings: a client's PGOPTIONS may name any
// PostgreSQL 15 setting that PostgreSQL accepts at connection start (the
// 2024 measurements set max_parallel_workers_per_gather and jit this way);
// one PostgreSQL refuses there gets PostgreSQL's FATAL.
func TestPGOPTIONSWithPostgresSettings(t *testing.T) {
	psql := need(t, "psql")
	inst := lockdtest.Start(t, lockdtest.Options{})
	psqlWith := func(options string, args ...string) (string, error) {
		cmd := exec.Command(psql, append([]string{"-X", "-At", "-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "-U", "postgres", "-d", "postgres"}, args...)...)
		cmd.Env = append(clientEnv(), "PGOPTIONS="+options)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := psqlWith("-c max_parallel_workers_per_gather=0 -c jit=off -c work_mem=64MB -c enable_memoize=off",
		"-c", "select current_setting('jit'), current_setting('work_mem'), current_setting('enable_memoize'), current_setting('max_parallel_workers_per_gather')")
	if err != nil || out != "off|64MB|off|0\n" {
		t.Fatalf("psql with PGOPTIONS: %v\n%s", err, out)
	}
	out, err = psqlWith("-c shared_preload_libraries=pg_stat_statements", "-c", "select 1")
	if err == nil || !strings.Contains(out, `FATAL:  parameter "shared_preload_libraries" cannot be changed without restarting the server`) {
		t.Fatalf("psql with a postmaster setting in PGOPTIONS: %v\n%s", err, out)
	}
	out, err = psqlWith("-c autovacuum_vacuum_cost_limit=100", "-c", "select 1")
	if err == nil || !strings.Contains(out, `FATAL:  parameter "autovacuum_vacuum_cost_limit" cannot be changed now`) {
		t.Fatalf("psql with a sighup setting in PGOPTIONS: %v\n%s", err, out)
	}
}
