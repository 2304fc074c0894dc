package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// pgHashCounts are the rows per partition a real PostgreSQL 15 held after
// `pgbench -i -s 2 --partitions=10 --partition-method=hash`
// (pgbench_accounts_1 .. _10).
var pgHashCounts = []int64{19982, 20199, 19770, 20147, 20068, 19866, 20030, 20135, 19766, 20037}

// TestPgbenchPartitions initialises partitioned pgbench tables (range with
// server-side generation, unlogged partitions and -F 90; hash with COPY)
// and runs the tpcb-like script in every -M mode: no failed transactions,
// balances that add up, and for hash every partition holding what
// PostgreSQL's holds.
func TestPgbenchPartitions(t *testing.T) {
	pgbench := need(t, "pgbench")
	_, conn, sum := startForPgbench(t)
	for _, init := range []struct {
		method string
		args   []string
	}{
		{"range", []string{"--partition-method=range", "-I", "dtGvp", "--unlogged-tables", "-F", "90"}},
		{"hash", []string{"--partition-method=hash"}},
	} {
		t.Run(init.method, func(t *testing.T) {
			args := append([]string{"-i", "-s", "2", "--partitions=10"}, init.args...)
			o := run(t, 60*time.Second, pgbench, append(args, conn...)...)
			if o.code != 0 || !strings.Contains(o.stderr, "done in") {
				t.Fatalf("pgbench %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), o.code, o.stdout, o.stderr)
			}
			var total int64
			for p := 1; p <= 10; p++ {
				n := sum(fmt.Sprintf("select count(*) from pgbench_accounts_%d", p))
				total += n
				if init.method == "hash" && n != pgHashCounts[p-1] {
					t.Errorf("pgbench_accounts_%d holds %d rows, PostgreSQL 15 %d", p, n, pgHashCounts[p-1])
				}
				if init.method == "range" && n != 20000 {
					t.Errorf("pgbench_accounts_%d holds %d rows, want 20000", p, n)
				}
			}
			if total != 200000 || sum("select count(*) from pgbench_accounts") != 200000 {
				t.Fatalf("accounts: %d in the partitions", total)
			}
			pgbenchEveryMode(t, pgbench, conn, sum, false)
		})
	}
}

// TestPsqlPartitions runs testdata/partitions.sql (partitioned-table DDL,
// bound errors, routing, row movement, COPY, ATTACH/DETACH, DROP) through
// psql and compares everything psql prints with what it printed against
// a real PostgreSQL 15 (partitions.out, partitions.err).
func TestPsqlPartitions(t *testing.T) {
	need(t, "psql")
	inst := lockdtest.Start(t, lockdtest.Options{})
	script, err := filepath.Abs("testdata/partitions.sql")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wantOut, wantErr := read("partitions.out"), read("partitions.err")
	o := psql(t, inst.Port, "-q", "-f", script)
	o.stderr = strings.ReplaceAll(o.stderr, "psql:"+script+":", "psql:<stdin>:")
	wantOutput(t, "partitions.sql", o, 0, wantOut, wantErr)
}
