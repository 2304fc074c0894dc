package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockd/internal/lockdtest"
)

// The scripts in testdata/explain hold EXPLAIN (COSTS OFF) of queries
// lockd must plan as PostgreSQL 15 does (costs.sql: EXPLAIN with costs,
// whose numbers must be PostgreSQL's too); their .out files are
// PostgreSQL's transcripts, written by scripts/explain-golden.sh from a
// live PostgreSQL (never by hand, and never from lockd's output). lockd's
// transcript of each script must equal PostgreSQL's.
func TestExplainGolden(t *testing.T) {
	need(t, "psql")
	scripts, err := filepath.Glob("testdata/explain/*.sql")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata/explain: %v", err)
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".sql")
		t.Run(name, func(t *testing.T) {
			inst := lockdtest.Start(t, lockdtest.Options{})
			abs, err := filepath.Abs(script)
			if err != nil {
				t.Fatal(err)
			}
			got := normalizeTranscript(runScript(t, inst.Port, abs))
			want, err := os.ReadFile(strings.TrimSuffix(script, ".sql") + ".out")
			if err != nil {
				t.Fatalf("%v (scripts/explain-golden.sh writes it from PostgreSQL)", err)
			}
			if got != string(want) {
				t.Errorf("lockd's plans differ from PostgreSQL's in %s:\n%s", script, lineDiff(string(want), got))
			}
		})
	}
}
