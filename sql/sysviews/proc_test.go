package sysviews

import (
	"sort"
	"testing"

	"lockd/sql/analyze"
	"lockd/sql/catalog"
)

// lockdOnlyFunctions are functions lockd has that PostgreSQL 15 does not
// (so pg_proc cannot list them), or whose every PostgreSQL signature uses a
// type lockd lacks. None today.
var lockdOnlyFunctions = map[string]bool{}

// TestProcsFollowFunctions keeps sql/catalog/pg15_proc.tsv in step with
// the functions lockd can call: every name has pg_proc entries, and every
// entry names such a function (regenerate with scripts/gen-pg-proc.sh).
func TestProcsFollowFunctions(t *testing.T) {
	names := map[string]bool{}
	for _, n := range analyze.FunctionNames() {
		names[n] = true
	}
	var missing []string
	for n := range names {
		if len(catalog.ProcsNamed(n)) == 0 && !lockdOnlyFunctions[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("functions without pg_proc entries (run scripts/gen-pg-proc.sh, or list them in lockdOnlyFunctions): %v", missing)
	}
	for _, p := range catalog.Procs {
		if !names[p.Name] {
			t.Errorf("pg_proc lists %s (oid %d), which lockd cannot call", p.Name, p.OID)
		}
	}
}
