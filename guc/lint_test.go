package guc

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps guc a leaf: the standard library and BurntSushi/toml
// only, never a lockd package.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if path == "github.com/BurntSushi/toml" || !strings.Contains(first, ".") && first != "lockd" {
				continue
			}
			t.Errorf("%s imports %s; guc may import only the standard library and github.com/BurntSushi/toml", f, path)
		}
	}
}
