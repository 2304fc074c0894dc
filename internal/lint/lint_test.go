// Package lint keeps the layering of DESIGN.md true: imports point one
// way, and the leaf packages use only the standard library.
package lint

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps=false", "-json", "lockd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	pkgs := map[string]pkg{}
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// below lists lockd packages in the order the layers stack inside the
// SQL layer: each may import those after it, never those before.
// (PostgreSQL's seams: the facade, commands, executor, planner, system
// views, parse analysis, built-in functions, expression trees, catalog,
// planner statistics, data types.)
var sqlLayers = []string{
	"lockd/sql",
	"lockd/sql/commands",
	"lockd/sql/exec",
	"lockd/sql/plan",
	"lockd/sql/sysviews",
	"lockd/sql/analyze",
	"lockd/sql/funcs",
	"lockd/sql/expr",
	"lockd/sql/catalog",
	"lockd/sql/stats",
	"lockd/sql/types",
}

// sqlBelow is what every package of the SQL layer may use under it.
var sqlBelow = []string{"lockd/auth", "lockd/storage", "lockd/txn", "lockd/wal", "lockd/vfs", "lockd/locks", "lockd/guc", "lockd/pgerr", "lockd/internal/buildinfo"}

// allowed lists, for each lockd package, the lockd packages it may
// import (directly). Anything not listed may not be imported. The version
// string lives in the leaf lockd/internal/buildinfo, so cmd/lockd prints it
// without importing lockd/sql: cmd reaches SQL only through server.
var allowed = map[string][]string{
	"lockd/guc":   {},
	"lockd/locks": {},
	"lockd/pgerr": {},
	// auth: password verifiers, the SCRAM exchange and pg_hba.conf, for
	// the server (authentication) and sql (CREATE ROLE's passwords).
	"lockd/auth": {"lockd/pgerr"},
	// vfs is the file-system layer under everything kept on disk; wal
	// knows nothing above locks (storage ─→ txn ─→ wal ─→ locks).
	"lockd/vfs":     {},
	"lockd/wal":     {"lockd/locks", "lockd/vfs"},
	"lockd/txn":     {"lockd/wal", "lockd/vfs", "lockd/locks", "lockd/pgerr"},
	"lockd/storage": {"lockd/txn", "lockd/wal", "lockd/vfs", "lockd/locks", "lockd/pgerr"},
	// server wires the subsystems together for embedders: it opens the
	// log, the store and the transaction manager that sql runs on.
	"lockd/server":             {"lockd/auth", "lockd/sql", "lockd/storage", "lockd/txn", "lockd/wal", "lockd/vfs", "lockd/guc", "lockd/locks", "lockd/pgerr"},
	"lockd/metrics":            {"lockd/locks", "lockd/txn", "lockd/storage", "lockd/wal", "lockd/server", "lockd/guc"},
	"lockd/bench":              {"lockd/guc"}, // lockd runs as a child process; guc checks specs' settings
	"lockd/cmd/lockd":          {"lockd/server", "lockd/guc", "lockd/metrics", "lockd/internal/buildinfo", "lockd/bench"},
	"lockd/internal/lockdtest": {"lockd/server", "lockd/guc", "lockd/locks", "lockd/sql", "lockd/metrics", "lockd/vfs"},
	"lockd/internal/lint":      {},
	"lockd/internal/buildinfo": {},
	// sqlscript runs SQL scripts against a lockd that lockdtest starts.
	"lockd/internal/sqlscript": {"lockd/internal/lockdtest"},
	"lockd/e2e":                {"lockd/internal/lockdtest"},
	// difftest generates queries and compares servers over the wire; its
	// test starts lockd through lockdtest.
	"lockd/internal/difftest": {"lockd/internal/lockdtest"},
}

func init() {
	for i, p := range sqlLayers {
		allowed[p] = append(slices.Clone(sqlLayers[i+1:]), sqlBelow...)
	}
}

// stdlibOnly packages may import nothing outside the standard library
// (guc may use BurntSushi/toml, its configuration-file format).
var stdlibOnly = map[string][]string{
	"lockd/locks":              nil,
	"lockd/pgerr":              nil,
	"lockd/auth":               {"golang.org/x/text/unicode/norm"}, // SASLprep's NFKC
	"lockd/vfs":                nil,
	"lockd/wal":                nil,
	"lockd/guc":                {"github.com/BurntSushi/toml"},
	"lockd/internal/buildinfo": nil,
}

// violations checks pkgs against the rules and describes every import
// that breaks them.
func violations(pkgs map[string]pkg, allowed, stdlibOnly map[string][]string) []string {
	var out []string
	for path, p := range pkgs {
		rules, ok := allowed[path]
		if !ok {
			out = append(out, fmt.Sprintf("package %s has no entry in the layering rules (internal/lint); add one", path))
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "lockd/") {
				if !slices.Contains(rules, imp) {
					out = append(out, fmt.Sprintf("%s imports %s: the layering in DESIGN.md does not allow it", path, imp))
				}
				continue
			}
			if extra, leaf := stdlibOnly[path]; leaf && strings.Contains(strings.Split(imp, "/")[0], ".") && !slices.Contains(extra, imp) {
				out = append(out, fmt.Sprintf("%s imports %s: it may use only the standard library", path, imp))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestImportRules(t *testing.T) {
	for _, v := range violations(listPackages(t), allowed, stdlibOnly) {
		t.Error(v)
	}
}

// TestImportRulesCatchWrongWay proves the rules bite: the real package
// list with one import added that points up the layers, or out of a leaf,
// is refused.
func TestImportRulesCatchWrongWay(t *testing.T) {
	real := listPackages(t)
	for _, c := range []struct{ from, to string }{
		{"lockd/sql/types", "lockd/sql/exec"},
		{"lockd/sql/catalog", "lockd/sql/expr"},
		{"lockd/sql/stats", "lockd/sql/catalog"},
		{"lockd/sql/analyze", "lockd/sql/plan"},
		{"lockd/sql/plan", "lockd/sql/exec"},
		{"lockd/sql/exec", "lockd/sql/commands"},
		{"lockd/sql/commands", "lockd/sql"},
		{"lockd/sql", "lockd/server"},
		{"lockd/locks", "lockd/txn"},
		{"lockd/wal", "lockd/storage"},
		{"lockd/wal", "lockd/txn"},
		{"lockd/txn", "lockd/storage"},
		{"lockd/locks", "github.com/jackc/pgx/v5"},
	} {
		pkgs := map[string]pkg{}
		for k, v := range real {
			pkgs[k] = v
		}
		p := pkgs[c.from]
		p.Imports = append(slices.Clone(p.Imports), c.to)
		pkgs[c.from] = p
		got := violations(pkgs, allowed, stdlibOnly)
		if len(got) != 1 || !strings.HasPrefix(got[0], c.from+" imports "+c.to) {
			t.Errorf("%s importing %s: violations %q, want that one import refused", c.from, c.to, got)
		}
	}
}
