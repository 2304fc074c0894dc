package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minimal is a valid spec; the cases below break one thing each.
const minimal = `title = "t"
reproduces = "r"
clients = [1, 2]
duration = "2s"

[[workload]]
name = "sel"
builtin = "select-only"

[variants.a]
settings = { fastpath_lock_slots = 16 }

[variants.b]
settings = { fastpath_lock_slots = 1024, lwlock_wakeup_rule = "pg84" }
`

func TestParseSpecValid(t *testing.T) {
	s, err := ParseSpec("x.toml", minimal)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 2 || s.Variants[0].Name != "a" || s.Variants[1].Name != "b" {
		t.Fatalf("variants %+v, want a then b (file order)", s.Variants)
	}
	if got := s.Variants[1].Values; got["fastpath_lock_slots"] != "1024" || got["lwlock_wakeup_rule"] != "pg84" {
		t.Errorf("variant b settings %v", got)
	}
	if s.Order != "abba" || s.Repetitions != 1 || s.Threads != 2 || s.Workloads[0].Mode != "simple" {
		t.Errorf("defaults: order %q repetitions %d threads %d mode %q", s.Order, s.Repetitions, s.Threads, s.Workloads[0].Mode)
	}
}

// TestParseSpecErrors: every invalid spec is refused with the file, the
// line and the field, before anything runs.
func TestParseSpecErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		want string
	}{
		{"unknown top-level field", "clientz = [3]\n" + minimal, `x.toml:1: clientz: unknown field "clientz"`},
		{"unknown setting", strings.Replace(minimal, "fastpath_lock_slots = 16", "fastpath_slots = 16", 1),
			`x.toml:11: variants.a.settings.fastpath_slots: unknown setting "fastpath_slots" (not in lockd's settings table`},
		{"bad value", strings.Replace(minimal, `lwlock_wakeup_rule = "pg84"`, `lwlock_wakeup_rule = "pg83"`, 1),
			`x.toml:14: variants.b.settings.lwlock_wakeup_rule: invalid value for parameter "lwlock_wakeup_rule": "pg83"`},
		{"out of range", strings.Replace(minimal, "fastpath_lock_slots = 16", "fastpath_lock_slots = -7", 1),
			`x.toml:11: variants.a.settings.fastpath_lock_slots: -7 is outside the valid range`},
		{"runner-owned setting", strings.Replace(minimal, "fastpath_lock_slots = 16", "port = 5", 1),
			`x.toml:11: variants.a.settings.port: setting "port" is set by the runner`},
		{"bad type", strings.Replace(minimal, `duration = "2s"`, `duration = "2s"`+"\nrepetitions = \"two\"", 1), `x.toml:5: repetitions:`},
		{"bad duration", strings.Replace(minimal, `duration = "2s"`, `duration = "soon"`, 1), `x.toml:4`},
		{"no clients", strings.Replace(minimal, "clients = [1, 2]", "clients = []", 1), `x.toml:3: clients: missing`},
		{"negative clients", strings.Replace(minimal, "clients = [1, 2]", "clients = [1, 0]", 1), `x.toml:3: clients: client count 0`},
		{"unknown builtin", strings.Replace(minimal, `builtin = "select-only"`, `builtin = "select-some"`, 1),
			`x.toml:8: workload.builtin: unknown builtin script "select-some"`},
		{"missing script", strings.Replace(minimal, `builtin = "select-only"`, `file = "nope.sql"`, 1), `x.toml:8: workload.file: script file "nope.sql"`},
		{"bad mode", strings.Replace(minimal, `builtin = "select-only"`, `builtin = "select-only"`+"\nmode = \"fast\"", 1),
			`x.toml:9: workload.mode: unknown mode "fast"`},
		{"runner-owned option", strings.Replace(minimal, `builtin = "select-only"`, `builtin = "select-only"`+"\noptions = [\"-c\", \"4\"]", 1),
			`x.toml:9: workload.options: option "-c" is set by the runner`},
		{"unknown field in a workload", strings.Replace(minimal, `builtin = "select-only"`, `builtin = "select-only"`+"\nscript = \"x\"", 1),
			`x.toml:9: workload.script: unknown field "script"`},
		{"no variants", minimal[:strings.Index(minimal, "[variants.a]")], `x.toml: variants: missing`},
		{"variant named postgres", strings.Replace(minimal, "[variants.b]", "[variants.postgres]", 1), `x.toml:13: variants.postgres: the variant name "postgres"`},
		{"unknown plot metric", minimal + "\n[[plot]]\nname = \"m\"\ny = [\"lwlock_waitz:ProcArray\"]\n", `x.toml:18: plot.y: plot "m": unknown metric "lwlock_waitz:ProcArray"`},
		{"metric without tranche", minimal + "\n[[plot]]\nname = \"m\"\ny = [\"lwlock_waits\"]\n", `give the tranche, as lwlock_waits:NAME`},
		{"quick variant", minimal + "\n[quick]\nvariants = [\"c\"]\n", `x.toml:17: quick.variants: no variant named "c"`},
		{"syntax", minimal + "\n[[plot]\n", `x.toml:17`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSpec("x.toml", c.text)
			if err == nil {
				t.Fatalf("spec accepted, want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

func TestParseSpecReportsEveryError(t *testing.T) {
	text := strings.Replace(strings.Replace(minimal, "fastpath_lock_slots = 16", "fastpath_slots = 16", 1), `mode = "x"`, "", 1)
	text = strings.Replace(text, `duration = "2s"`, `duration = "0s"`, 1)
	_, err := ParseSpec("x.toml", text)
	errs, ok := err.(SpecErrors)
	if !ok || len(errs) != 2 {
		t.Fatalf("got %v, want two errors (duration, unknown setting)", err)
	}
}

func TestLoadSpecPathsRelativeToSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sql"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sql", "w.sql"), []byte("select 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(minimal, `builtin = "select-only"`, `file = "sql/w.sql@3"`, 1)
	path := filepath.Join(dir, "e.toml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	args := s.pgbenchArgs(&s.Workloads[0], 8, s.Duration.Duration, 10, "/tmp/p", "host=h")
	got := strings.Join(args, " ")
	want := "-n -c 8 -j 2 -T 2 -M simple -f " + filepath.Join(dir, "sql", "w.sql") + "@3 -s 10 -l --log-prefix=/tmp/p host=h"
	if got != want {
		t.Errorf("pgbench args\n got %s\nwant %s", got, want)
	}
}

func TestApplyQuick(t *testing.T) {
	s, err := ParseSpec("x.toml", minimal+"\n[quick]\nclients = [1]\nduration = \"1s\"\nvariants = [\"b\"]\npgbench_init = \"-s 1\"\n")
	if err != nil {
		t.Fatal(err)
	}
	q := s.ApplyQuick()
	if len(q.Clients) != 1 || q.Duration.Seconds() != 1 || len(q.Variants) != 1 || q.Variants[0].Name != "b" || q.Setup.PgbenchInit != "-s 1" {
		t.Errorf("quick spec: clients %v duration %s variants %v init %q", q.Clients, q.Duration, q.Variants, q.Setup.PgbenchInit)
	}
	if len(s.Clients) != 2 || len(s.Variants) != 2 {
		t.Error("ApplyQuick changed the spec it was given")
	}
}

func TestLocateKeys(t *testing.T) {
	text := `a = 1 # comment with = sign
[t]
b = """
c = 2
"""
d = [
  1,
  2,
]
e = { f = 1, "g" = 2 }

[[w]]
h = 1
[[w]]
h = 2
i.j = 3
`
	pos := locateKeys(text)
	for key, line := range map[string]int{"a": 1, "t": 2, "t.b": 3, "t.d": 6, "t.e": 10, "t.e.f": 10, "t.e.g": 10,
		"w.0.h": 13, "w.1.h": 15, "w.1.i.j": 16, "w.h": 13, "w.1": 14} {
		if got := pos.line(key); got != line {
			t.Errorf("line(%q) = %d, want %d", key, got, line)
		}
	}
	if _, ok := pos["t.c"]; ok {
		t.Error("a line inside a multi-line string was taken for a key")
	}
}
