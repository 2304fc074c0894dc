package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// TestPgbenchUpsert: eight pgbench clients racing INSERT ... ON CONFLICT
// DO UPDATE increments on a hundred keys, in every -M mode, fail no
// transaction and lose no increment: the sum of the counters is the
// number of transactions.
func TestPgbenchUpsert(t *testing.T) {
	pgbench := need(t, "pgbench")
	inst := lockdtest.Start(t, lockdtest.Options{})
	file := filepath.Join(t.TempDir(), "upsert.sql")
	script := "\\set k random(1, 100)\ninsert into kv values (:k, 1) on conflict (k) do update set v = kv.v + 1;\n"
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			if o := psql(t, inst.Port, "-q", "-c", "drop table if exists kv", "-c", "create table kv (k int primary key, v int not null)"); o.code != 0 {
				t.Fatalf("psql: %s%s", o.stdout, o.stderr)
			}
			o := run(t, 60*time.Second, pgbench, "-n", "-f", file, "-M", mode, "-c", "8", "-j", "2", "-T", "2",
				"-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "-U", "postgres", "postgres")
			if o.code != 0 {
				t.Fatalf("pgbench exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
			}
			if m := failedRE.FindStringSubmatch(o.stdout); m == nil || m[1] != "0" {
				t.Errorf("want \"number of failed transactions: 0\"\nstdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
			}
			p := processedRE.FindStringSubmatch(o.stdout)
			if p == nil || p[1] == "0" {
				t.Fatalf("no transactions processed\nstdout:\n%s", o.stdout)
			}
			if strings.Contains(o.stderr, "error") {
				t.Errorf("pgbench reported errors:\n%s", o.stderr)
			}
			sum := psql(t, inst.Port, "-At", "-c", "select sum(v), count(*) <= 100 from kv")
			if want := p[1] + "|t\n"; sum.stdout != want {
				t.Errorf("sum(v), at most 100 rows: %q, want %q (one increment per transaction)", sum.stdout, want)
			}
		})
	}
}
