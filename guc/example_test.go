package guc

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../lockd.conf.example (and other golden files) from the code")

// TestExampleFile keeps lockd.conf.example in step with the settings table.
func TestExampleFile(t *testing.T) {
	path := filepath.Join("..", "lockd.conf.example")
	want := ExampleFile()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\nregenerate it with: go test ./guc -run TestExampleFile -update", err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with guc.Table; regenerate it with: go test ./guc -run TestExampleFile -update", path)
	}
}

// TestExampleFileLoads checks that the example, uncommented, is a valid
// configuration that sets every setting to its boot value.
func TestExampleFileLoads(t *testing.T) {
	dir := t.TempDir()
	var content []byte
	for _, line := range splitLines(ExampleFile()) {
		if len(line) > 1 && line[0] == '#' && line[1] != ' ' && line[1] != '-' {
			line = line[1:]
		}
		content = append(content, line...)
		content = append(content, '\n')
	}
	path := filepath.Join(dir, "lockd.conf")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(nil)
	if err := r.LoadFiles(path, ""); err != nil {
		t.Fatalf("uncommented example does not load: %v\n%s", err, content)
	}
	s, _ := r.NewSession(nil)
	n := 0
	for _, row := range s.Rows() {
		if row.Source == "configuration file" {
			n++
			if row.Setting != row.BootVal {
				t.Errorf("%s: example sets %q, boot value is %q", row.Name, row.Setting, row.BootVal)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d settings came from the uncommented example", n)
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
