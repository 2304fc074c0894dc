package bench

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run `lockd bench` as a user does: the real lockd binary,
// pgbench, and PostgreSQL 15 when it is installed.

var (
	buildOnce sync.Once
	lockdBin  string
	buildErr  error
)

// lockdBinary builds cmd/lockd once for the package's tests.
func lockdBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pgbench against lockd (and PostgreSQL); not in -short")
	}
	if _, err := lookBin("pgbench", "/usr/lib/postgresql/15/bin"); err != nil {
		t.Skip(err)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lockd-bench-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		lockdBin = filepath.Join(dir, "lockd")
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		out, err := exec.Command(goBin, "build", "-o", lockdBin, "../cmd/lockd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return lockdBin
}

// benchCmd is `lockd bench args...` with its own TMPDIR, so the test can
// find the processes it started.
func benchCmd(t *testing.T, args ...string) (*exec.Cmd, string) {
	bin := lockdBinary(t)
	tmp := t.TempDir()
	// PostgreSQL runs as an unprivileged user, who must reach the work
	// directory under TMPDIR.
	for d := tmp; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	cmd := exec.Command(bin, append([]string{"bench"}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	return cmd, tmp
}

func pgInstalled() bool { return checkPGBin("/usr/lib/postgresql/15/bin") == nil }

// TestExperimentsQuick runs every spec in experiments/ with --quick, as CI
// does, and checks what it wrote: a row per cell × repetition (PostgreSQL's
// too when it ran), lockd's wait counters as columns, the table, the spec
// echoed in the JSON, and the plots as PNG and SVG with labels and legends.
func TestExperimentsQuick(t *testing.T) {
	files, _ := filepath.Glob("../experiments/*.toml")
	if len(files) != 5 {
		t.Fatalf("experiments/ has %d specs, want 5: %v", len(files), files)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".toml"), func(t *testing.T) {
			out := t.TempDir()
			cmd, tmp := benchCmd(t, f, "--quick", "--out", out)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("lockd bench %s --quick: %v\n%s", f, err, b)
			}
			checkNoChildren(t, tmp)
			checkQuickOutputs(t, f, out, string(b))
		})
	}
}

func checkQuickOutputs(t *testing.T, file, out, stdout string) {
	text, _ := os.ReadFile(file)
	spec, err := LoadSpec(file)
	if err != nil {
		t.Fatal(err)
	}
	q := spec.ApplyQuick()

	// results.json: the spec echoed, not partial, versions and settings.
	var res struct {
		Spec struct {
			Text  string `json:"text"`
			Title string `json:"title"`
		} `json:"spec"`
		Partial  bool                         `json:"partial"`
		Arms     []string                     `json:"arms"`
		Versions map[string]string            `json:"versions"`
		Settings map[string]map[string]string `json:"settings_in_force"`
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Spec.Text != string(text) || res.Spec.Title != spec.Title {
		t.Error("results.json does not echo the spec")
	}
	if res.Partial {
		t.Error("results.json says partial")
	}
	wantArms := []string{}
	for _, v := range q.Variants {
		wantArms = append(wantArms, v.Name)
	}
	pgRan := spec.Postgres != nil && pgInstalled()
	if pgRan {
		wantArms = append(wantArms, PostgresArm)
	}
	if strings.Join(res.Arms, " ") != strings.Join(wantArms, " ") {
		t.Errorf("arms %v, want %v", res.Arms, wantArms)
	}
	for _, a := range wantArms {
		if len(res.Settings[a]) == 0 {
			t.Errorf("no settings in force recorded for %s", a)
		}
	}
	for _, v := range q.Variants {
		for name, val := range v.Values {
			if got := res.Settings[v.Name][name]; got == "" {
				t.Errorf("%s: setting %s not recorded (want %s)", v.Name, name, val)
			}
		}
	}
	if res.Versions["pgbench"] == "" || res.Versions["lockd"] == "" || (pgRan && res.Versions["postgres_server"] == "") {
		t.Errorf("versions %v", res.Versions)
	}

	// results.csv: a row per cell × repetition, all ok.
	f, err := os.Open(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := len(q.Workloads) * len(q.Clients) * len(wantArms) * q.Repetitions
	if len(rows)-1 != want {
		t.Errorf("%d runs in results.csv, want %d (workloads × clients × arms × repetitions)", len(rows)-1, want)
	}
	seen := map[string]bool{}
	pgRows := 0
	for _, r := range rows[1:] {
		key := strings.Join([]string{r[col["workload"]], r[col["variant"]], r[col["clients"]], r[col["repetition"]]}, "/")
		if seen[key] {
			t.Errorf("cell %s twice", key)
		}
		seen[key] = true
		if r[col["status"]] != StatusOK {
			t.Errorf("run %s: %s: %s", key, r[col["status"]], r[col["error"]])
		}
		if tps, _ := strconv.ParseFloat(r[col["tps"]], 64); tps <= 0 {
			t.Errorf("run %s: tps %q", key, r[col["tps"]])
		}
		if r[col["latency_p99_ms"]] == "" || r[col["server_cpu_s"]] == "" || r[col["wait_samples"]] == "0" {
			t.Errorf("run %s: p99 %q server CPU %q wait samples %q", key, r[col["latency_p99_ms"]], r[col["server_cpu_s"]], r[col["wait_samples"]])
		}
		if r[col["target"]] == "postgres" {
			pgRows++
			continue
		}
		// lockd's wait counters, raw and derived, for every lockd run
		for _, c := range []string{"lwlock_waits:LockManager", "lwlock_waits:ProcArray", "lwlock_wakeups:ProcArray", "lock_waits:relation", "fastpath_hit_ratio", `lockd_lwlock_acquisitions_total{mode="exclusive",tranche="LockManager"}`} {
			i, ok := col[c]
			if !ok {
				t.Errorf("results.csv has no column %s", c)
			} else if r[i] == "" {
				t.Errorf("run %s: %s empty", key, c)
			}
		}
	}
	if pgRan && pgRows == 0 {
		t.Error("PostgreSQL ran but results.csv has no row for it")
	}

	// table.txt: the mailing-list layout, also on stdout.
	tab, err := os.ReadFile(filepath.Join(out, "table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, string(tab)) {
		t.Error("lockd bench did not print the table")
	}
	for _, w := range q.Workloads {
		if !strings.Contains(string(tab), "## "+w.Name) {
			t.Errorf("table.txt lacks workload %s", w.Name)
		}
	}
	header := "clients  " // the tps table's header row names every arm
	for _, line := range strings.Split(string(tab), "\n") {
		if strings.HasPrefix(line, header) {
			for _, a := range wantArms {
				if !strings.Contains(line, a) {
					t.Errorf("table header %q lacks %s", line, a)
				}
			}
			break
		}
	}

	// plots: at least three, PNG and SVG, labelled, with legends.
	names := []string{"throughput", "latency_p99"}
	for _, p := range q.Plots {
		names = append(names, p.Name)
	}
	if len(names) < 3 {
		t.Errorf("only %d plots", len(names))
	}
	lockdArms := slices.DeleteFunc(slices.Clone(wantArms), func(a string) bool { return a == PostgresArm })
	checkPlots(t, out, names, lockdArms)
	if pgRan {
		texts := svgTexts(t, filepath.Join(out, "throughput.svg"))
		if !containsLine(texts, PostgresArm) {
			t.Error("throughput.svg's legend lacks postgres")
		}
	}
}

// checkNoChildren fails if a process started under tmp (lockd, PostgreSQL,
// pgbench) is still running.
func checkNoChildren(t *testing.T, tmp string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && strings.Contains(string(b), tmp) {
				left = append(left, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left running: %v", left)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writeSpec writes a spec (and its script files) into a temporary directory.
func writeSpec(t *testing.T, text string, files map[string]string) string {
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readResults(t *testing.T, out string) *struct {
	Partial bool   `json:"partial"`
	Runs    []*Run `json:"runs"`
} {
	t.Helper()
	var res struct {
		Partial bool   `json:"partial"`
		Runs    []*Run `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Run has its own MarshalJSON; decode into the plain fields.
	var raw struct {
		Partial bool             `json:"partial"`
		Runs    []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	res.Partial = raw.Partial
	for _, m := range raw.Runs {
		r := &Run{}
		r.Index = int(m["index"].(float64))
		r.Variant, _ = m["variant"].(string)
		r.Status, _ = m["status"].(string)
		r.Error, _ = m["error"].(string)
		r.Log, _ = m["log"].(string)
		r.Restarted, _ = m["restarted"].(bool)
		r.TPS, _ = m["tps"].(float64)
		res.Runs = append(res.Runs, r)
	}
	return &res
}

// waitForLine reads lines from r until one starts with prefix.
func waitForLine(t *testing.T, sc *bufio.Scanner, prefix string) {
	t.Helper()
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return
		}
	}
	t.Fatalf("lockd bench ended before printing %q", prefix)
}

const smallSpec = `title = "t"
reproduces = "a test"
clients = [2]
duration = "%s"
repetitions = %d

[setup]
pgbench_init = "-s 1"

[[workload]]
name = "w"
file = "w.sql"

[variants.a]
settings = { statement_timeout = "0" }

[variants.b]
settings = { statement_timeout = "%s" }
`

// TestInterruptWritesPartial: Ctrl-C stops the current run and the
// servers, and what was measured is written, flagged partial.
func TestInterruptWritesPartial(t *testing.T) {
	spec := writeSpec(t, fmt.Sprintf(smallSpec, "3s", 3, "0"), map[string]string{"w.sql": "select 1;\n"})
	out := t.TempDir()
	cmd, tmp := benchCmd(t, spec, "--out", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	waitForLine(t, sc, "[1/6]")
	time.Sleep(time.Second) // into run 2
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest := ""
	for sc.Scan() {
		rest += sc.Text() + "\n"
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1", err)
	}
	if !strings.Contains(rest, "interrupted") {
		t.Errorf("no word of the interruption:\n%s", rest)
	}
	checkNoChildren(t, tmp)
	res := readResults(t, out)
	if !res.Partial {
		t.Error("results.json not flagged partial")
	}
	if len(res.Runs) < 1 || res.Runs[0].Status != StatusOK {
		t.Fatalf("runs %+v, want the first one measured", res.Runs)
	}
	if last := res.Runs[len(res.Runs)-1]; len(res.Runs) < 6 && last.Status != StatusInterrupted && last.Status != StatusOK {
		t.Errorf("last run %+v", last)
	}
	tab, _ := os.ReadFile(filepath.Join(out, "table.txt"))
	if !strings.Contains(string(tab), "PARTIAL") {
		t.Error("table.txt does not say it is partial")
	}
}

// TestFailedRunsAreRecorded: a run whose pgbench fails is recorded as
// failed with its log, and so is one whose server dies; lockd is restarted
// and the sweep goes on.
func TestFailedRunsAreRecorded(t *testing.T) {
	// Variant b's statement_timeout cancels every transaction.
	spec := writeSpec(t, fmt.Sprintf(smallSpec, "2s", 3, "5ms"), map[string]string{"w.sql": "select pg_sleep(0.05);\n"})
	out := t.TempDir()
	cmd, tmp := benchCmd(t, spec, "--out", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	// Order: a b | b a | a b. Kill lockd during run 4 (a, rep 2); run 3
	// (b) fails at once on its statement_timeout.
	waitForLine(t, sc, "[3/6]")
	time.Sleep(700 * time.Millisecond)
	killLockd(t, tmp)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lockd bench: %v (a failed run must not stop the sweep)", err)
	}
	checkNoChildren(t, tmp)
	res := readResults(t, out)
	if len(res.Runs) != 6 {
		t.Fatalf("%d runs, want all 6", len(res.Runs))
	}
	r1, r2, r4, r5 := res.Runs[0], res.Runs[1], res.Runs[3], res.Runs[4]
	if r1.Variant != "a" || r1.Status != StatusOK {
		t.Errorf("run 1: %+v", r1)
	}
	log2, _ := os.ReadFile(filepath.Join(out, r2.Log))
	if r2.Variant != "b" || r2.Status != StatusFailed || !strings.Contains(string(log2), "statement timeout") {
		t.Errorf("run 2 (statement_timeout): %+v\nlog: %s", r2, log2)
	}
	if r4.Variant != "a" || r4.Status != StatusFailed || !strings.Contains(r4.Error, "lockd exited") {
		t.Errorf("run 4 (lockd killed): %+v", r4)
	}
	if r5.Variant != "a" || r5.Status != StatusOK || !r5.Restarted {
		t.Errorf("run 5 (after the crash): %+v", r5)
	}
}

// killLockd sends SIGKILL to the lockd server started under tmp.
func killLockd(t *testing.T, tmp string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(b), "\x00")
		if len(args) > 2 && args[1] == "-D" && strings.HasPrefix(args[2], tmp) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("lockd's server process not found")
}

// TestBadInputIsRefusedUpFront: an invalid spec, or PostgreSQL missing
// where --postgres points, stops before anything runs, with a clear word.
func TestBadInputIsRefusedUpFront(t *testing.T) {
	spec := writeSpec(t, strings.Replace(fmt.Sprintf(smallSpec, "2s", 1, "0"), `statement_timeout = "0"`, `fastpath_lock_slot = 16`, 1), map[string]string{"w.sql": "select 1;\n"})
	out := filepath.Join(t.TempDir(), "out")
	cmd, _ := benchCmd(t, spec, "--out", out)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want 2", err)
	}
	if want := spec + `:15: variants.a.settings.fastpath_lock_slot: unknown setting "fastpath_lock_slot"`; !strings.Contains(string(b), want) {
		t.Errorf("output:\n%s\nwant %s", b, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an invalid spec created the output directory")
	}

	spec = writeSpec(t, fmt.Sprintf(smallSpec, "2s", 1, "0"), map[string]string{"w.sql": "select 1;\n"})
	cmd, _ = benchCmd(t, spec, "--out", out, "--postgres", "/nonexistent/bin")
	b, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(b), "PostgreSQL's postgres not found in /nonexistent/bin") {
		t.Errorf("--postgres /nonexistent/bin: %v\n%s", err, b)
	}
}

func TestMissingPgbench(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := lookBin("pgbench", "/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "pgbench not found on PATH (nor in /nonexistent): install PostgreSQL's client programs") {
		t.Errorf("got %v", err)
	}
}
