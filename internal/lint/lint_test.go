// Package lint keeps the layering of DESIGN.md true: imports point one
// way, and the leaf packages use only the standard library.
package lint

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
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

// allowed lists, for each lockd package, the lockd packages it may
// import (directly). Anything not listed may not be imported. The version
// string lives in the leaf lockd/internal/buildinfo, so cmd/lockd prints it
// without importing lockd/sql: cmd reaches SQL only through server.
var allowed = map[string][]string{
	"lockd/guc":     {},
	"lockd/locks":   {},
	"lockd/pgerr":   {},
	"lockd/txn":     {"lockd/locks", "lockd/pgerr"},
	"lockd/storage": {"lockd/txn", "lockd/locks", "lockd/pgerr"},
	"lockd/sql":     {"lockd/storage", "lockd/txn", "lockd/locks", "lockd/guc", "lockd/pgerr", "lockd/internal/buildinfo"},
	// server wires the subsystems together for embedders: it opens the
	// store and the transaction manager that sql runs on.
	"lockd/server":             {"lockd/sql", "lockd/storage", "lockd/txn", "lockd/guc", "lockd/locks", "lockd/pgerr"},
	"lockd/metrics":            {"lockd/locks", "lockd/txn", "lockd/storage", "lockd/server", "lockd/guc"},
	"lockd/bench":              {},
	"lockd/cmd/lockd":          {"lockd/server", "lockd/guc", "lockd/locks", "lockd/metrics", "lockd/bench", "lockd/pgerr", "lockd/internal/buildinfo"},
	"lockd/internal/lockdtest": {"lockd/server", "lockd/guc", "lockd/locks", "lockd/sql", "lockd/metrics"},
	"lockd/internal/lint":      {},
	"lockd/internal/buildinfo": {},
	"lockd/e2e":                {"lockd/internal/lockdtest"},
}

// stdlibOnly packages may import nothing outside the standard library
// (guc may use BurntSushi/toml, its configuration-file format).
var stdlibOnly = map[string][]string{
	"lockd/locks":              nil,
	"lockd/pgerr":              nil,
	"lockd/guc":                {"github.com/BurntSushi/toml"},
	"lockd/internal/buildinfo": nil,
}

func TestImportRules(t *testing.T) {
	for path, p := range listPackages(t) {
		rules, ok := allowed[path]
		if !ok {
			t.Errorf("package %s has no entry in the layering rules (internal/lint); add one", path)
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "lockd/") {
				if !contains(rules, imp) {
					t.Errorf("%s imports %s: the layering in DESIGN.md does not allow it", path, imp)
				}
				continue
			}
			if extra, leaf := stdlibOnly[path]; leaf && strings.Contains(strings.Split(imp, "/")[0], ".") && !contains(extra, imp) {
				t.Errorf("%s imports %s: it may use only the standard library", path, imp)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
