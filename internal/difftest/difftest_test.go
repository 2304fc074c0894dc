package difftest

import (
	"context"
	"errors"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

var (
	seedFlag     = flag.Uint64("difftest.seed", 0, "seed of the randomized differential test (0: a new one, printed)")
	nFlag        = flag.Int("difftest.n", 300, "queries the differential test generates")
	queryFlag    = flag.Int("difftest.query", -1, "run only this query number of the seed (as a failure prints it)")
	minimizeFlag = flag.Bool("difftest.minimize", false, "shrink each differing query by dropping clauses")
	maxDiffsFlag = flag.Int("difftest.maxdiffs", 20, "stop after this many differences (0: never)")
	verboseFlag  = flag.Bool("difftest.verbose", false, "log every statement and both servers' outcomes")
	dumpFlag     = flag.String("difftest.dump", "", "write each round's schema as an SQL script into this directory")
)

// TestDifferential compares lockd with a real PostgreSQL 15 on generated
// queries (see the package comment). In CI it runs 300 queries with a new
// seed each time; scripts/difftest.sh runs thousands.
func TestDifferential(t *testing.T) {
	bin := os.Getenv("PGBIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	osUser := os.Getenv("PG_OS_USER")
	if osUser == "" {
		osUser = "pgbench_cmp"
	}
	pg, err := StartPostgreSQL(bin, osUser)
	if errors.Is(err, ErrNoPostgreSQL) {
		t.Skipf("%v (install postgresql-15, or set PGBIN to its bin directory)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	inst := lockdtest.Start(t, lockdtest.Options{})

	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -difftest.seed=%d -difftest.n=%d)", seed, seed, *nFlag)
	ctx := context.Background()
	connect := func(dsn string) *pgconn.PgConn {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	cfg := Config{
		Seed:       seed,
		N:          *nFlag,
		Only:       *queryFlag,
		Minimize:   *minimizeFlag,
		MaxDiffs:   *maxDiffsFlag,
		Exclusions: Known,
		Logf:       t.Logf,
		DumpDir:    *dumpFlag,
		Verbose:    *verboseFlag,
	}
	rep, err := Run(ctx, cfg, connect(inst.ConnString()), connect(pg.ConnString()))
	t.Log(rep.Summary())
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if len(rep.Diffs) > 0 {
		t.Errorf("seed %d: %d differences between lockd and PostgreSQL (each is logged above with its query)", seed, len(rep.Diffs))
	}
}
