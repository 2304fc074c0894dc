package sqlscript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestScriptFeatures runs testdata/features.txt, which uses every step and
// option of the format.
func TestScriptFeatures(t *testing.T) {
	RunDir(t, "testdata")
}

// recorder collects the mismatches a run reports instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

// run runs a script given as text and returns the mismatches it reported
// and the file as it is afterwards.
func run(t *testing.T, script string, rewrite bool) ([]string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.txt")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	runFile(rec, path, rewrite, func(_ string, f func(testing.TB)) { f(rec) })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec.errs, string(data)
}

// A wrong expectation fails, naming the file, the line and the statement
// and showing both outputs; -rewrite replaces it, after which the script
// passes.
func TestScriptWrongExpectationFails(t *testing.T) {
	const script = `case wrong
a: select 1 as n
n
-
2
SELECT 1

a: select 'unchanged'
?column?
---------
unchanged
SELECT 1
`
	errs, _ := run(t, script, false)
	if len(errs) != 1 {
		t.Fatalf("want one mismatch, got %d: %q", len(errs), errs)
	}
	for _, want := range []string{"script.txt:2: a: select 1 as n", "got:\n    n\n    -\n    1\n    SELECT 1", "want:\n    n\n    -\n    2\n    SELECT 1"} {
		if !strings.Contains(errs[0], want) {
			t.Errorf("mismatch report lacks %q:\n%s", want, errs[0])
		}
	}
	errs, rewritten := run(t, script, true)
	if len(errs) != 0 {
		t.Fatalf("-rewrite reported %q", errs)
	}
	if want := strings.Replace(script, "-\n2\n", "-\n1\n", 1); rewritten != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", rewritten, want)
	}
	if errs, _ := run(t, rewritten, false); len(errs) != 0 {
		t.Fatalf("the rewritten script fails: %q", errs)
	}
}

// The other ways a script can be wrong: a statement that should wait but
// does not, a repeat whose runs differ, a slow statement, a missing
// expected error, and a statement left running at the end of the case.
func TestScriptFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"does not wait", "case x\na waits: select 1\n", []string{"got:\n    did not wait\n    ?column?"}},
		{"repeat differs", "case x\na: create sequence s\nCREATE SEQUENCE\n\nrepeat 2\na: select nextval('s')\nnextval\n-------\n1\nSELECT 1\n\nend\n",
			[]string{"(repeat, run 2): a: select nextval('s')\nthis run gave:\n    nextval\n    -------\n    2"}},
		{"too slow", "case x\na took=..1ms: select pg_sleep(0.05)\npg_sleep\n--------\n\"\"\nSELECT 1\n", []string{"want 0s..1ms"}},
		{"no error", "case x\na: select 1/1\nERROR 22012: division by zero\n", []string{"got:\n    ?column?"}},
		{"never awaited", "case x\na: select pg_advisory_lock(1)\npg_advisory_lock\n----------------\n\"\"\nSELECT 1\n\nb waits: select pg_advisory_lock(1)\n",
			[]string{"the statement of b on line 8 was never awaited"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, _ := run(t, tc.script, false)
			all := strings.Join(errs, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("reports lack %q:\n%s", w, all)
				}
			}
		})
	}
}

// parse and format are inverses, and parse refuses what it cannot read.
func TestScriptParse(t *testing.T) {
	data, err := os.ReadFile("testdata/features.txt")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := format(nodes); got != string(data) {
		t.Errorf("format(parse(features.txt)) differs from the file")
	}
	for _, tc := range []struct{ script, want string }{
		{"a: select 1\n", "line 1: a statement before the first case"},
		{"case x\na nowait: select 1\n", `line 2: unknown modifier "nowait"`},
		{"case x\ncase x\n", `line 2: a second case named "x"`},
		{"case x\nrepeat 2\na: select 1\n", "repeat without end"},
		{"case x\nend\n", "line 2: end without repeat"},
		{"case x\nfrobnicate\n", `line 2: unknown step "frobnicate"`},
		{"case x\n \n", "line 2: a blank line with spaces in it"},
		{"case x\nsettings a=b\n", "line 2: settings must come before the first case"},
		{"case x fast\n", `line 1: unknown case option "fast"`},
	} {
		if _, err := parse(tc.script); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) = %v, want %q", tc.script, err, tc.want)
		}
	}
}

func TestScriptSplitting(t *testing.T) {
	p, err := splitParams(`1 'two words' 'it''s'  x`)
	if err != nil || strings.Join(p, "|") != "1|two words|it's|x" {
		t.Errorf("splitParams: %q %v", p, err)
	}
	l, err := splitLiterals(`10, 'ten, really', 10.5, NULL, true`)
	if err != nil || fmt.Sprintf("%#v", l) != `[]interface {}{10, "ten, really", 10.5, interface {}(nil), true}` {
		t.Errorf("splitLiterals: %#v %v", l, err)
	}
	in, err := copyInput([]string{`"a\tb\n"`, `seq 1..2 "%d\n"`})
	if err != nil || in != "a\tb\n1\n2\n" {
		t.Errorf("copyInput: %q %v", in, err)
	}
	for _, v := range []string{"", "NULL", " x", "x ", "a|b", "\"q", "tab\there", "line\nbreak", "$a"} {
		if !needsQuotes(v) {
			t.Errorf("%q is printed bare", v)
		}
	}
	for _, v := range []string{"x", "héllo", "two words", "{1,2}", "a,b"} {
		if needsQuotes(v) {
			t.Errorf("%q is quoted", v)
		}
	}
}
