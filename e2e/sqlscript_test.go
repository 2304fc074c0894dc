package e2e

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// The SQL scripts in testdata/sql run through the installed psql (-a, so
// every statement is echoed with its result, and VERBOSITY verbose, so
// errors show their SQLSTATE) against a fresh lockd, and the transcript
// must equal the .out file beside the script. The .out files are
// PostgreSQL 15's transcripts of the same scripts, with the differences
// lockd has by design marked in docs/sql-compat.md:
// scripts/check-sql-vs-pg.sh runs the scripts against a real PostgreSQL
// and shows what differs. After a deliberate change, regenerate them with
//
//	go test ./e2e -run TestSQLScripts -rewrite
//
// and review the diff. A script whose first line is
//
//	-- lockd settings: NAME=VALUE[ NAME=VALUE...]
//
// runs on a lockd started with those settings (fastpath_lock_slots=16,
// say, PostgreSQL 15's fixed count, where the fast-path column of
// pg_locks is compared); PostgreSQL reads the line as a comment.
var rewrite = flag.Bool("rewrite", false, "rewrite testdata/sql/*.out from lockd's output")

func TestSQLScripts(t *testing.T) {
	need(t, "psql")
	scripts, err := filepath.Glob("testdata/sql/*.sql")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata/sql: %v", err)
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".sql")
		t.Run(name, func(t *testing.T) {
			inst := lockdtest.Start(t, lockdtest.Options{Settings: scriptSettings(t, script)})
			abs, err := filepath.Abs(script)
			if err != nil {
				t.Fatal(err)
			}
			got := normalizeTranscript(runScript(t, inst.Port, abs))
			want := strings.TrimSuffix(script, ".sql") + ".out"
			if *rewrite {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(data) {
				t.Errorf("transcript of %s differs from %s:\n%s", script, want, lineDiff(string(data), got))
			}
		})
	}
}

// scriptSettings reads the settings a script's first line asks for.
func scriptSettings(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	list, ok := strings.CutPrefix(first, "-- lockd settings:")
	if !ok {
		return nil
	}
	return strings.Fields(list)
}

// runScript runs psql on a script with its errors interleaved with the
// results, as a terminal shows them.
func runScript(t *testing.T, port int, path string) string {
	t.Helper()
	// a guard against a hung script, not a speed limit: partjoin100 takes
	// about 25 s under -race on a loaded 2-core machine
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, need(t, "psql"), psqlArgs(port, "-a", "-v", "ON_ERROR_STOP=0", "-f", path)...)
	cmd.Env = clientEnv()
	cmd.Dir = filepath.Dir(path)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("psql -f %s timed out:\n%s", path, out)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("psql -f %s: %v", path, err)
	}
	return string(out)
}

// normalizeTranscript makes psql's output independent of where the script
// lives: its error lines name the script by path.
func normalizeTranscript(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, ".sql:"); i >= 0 && strings.HasPrefix(l, "psql:") {
			l = "psql:" + filepath.Base(l[len("psql:"):i]) + l[i:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// lineDiff shows the first lines where two transcripts differ, with a
// little context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
		if shown++; shown >= 10 {
			b.WriteString("...\n")
			break
		}
	}
	return b.String()
}
